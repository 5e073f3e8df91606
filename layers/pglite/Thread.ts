/**
 * The embedded database on a thread of its own. PGlite runs PostgreSQL as
 * WebAssembly on the thread that calls it: on the main thread its start (its
 * wasm) waits for the service's modules and layers and they wait for
 * it, and every statement blocks the event loop while it runs. Here it opens
 * beside the service's start and runs statements while the main thread serves
 * HTTP; each statement costs one message each way.
 */
import type { Results, RowMode } from "@electric-sql/pglite"
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import { type Call, deserializeError, type Reply, type WorkerInput } from "./Protocol.js"

/** A query's options: `blob`, the bytes a `copy ... from '/dev/blob'` reads. */
export interface QueryOptions {
  readonly rowMode: RowMode
  readonly blob?: Blob | undefined
}

/** What the SQL client uses of a PGlite session; PGlite itself is one, so is the thread's proxy. */
export interface PgliteSession {
  readonly exec: (sql: string, options: { readonly rowMode: RowMode }) => Promise<Array<Results>>
  readonly query: <T>(sql: string, params: Array<unknown>, options: QueryOptions) => Promise<Results<T>>
  readonly close: () => Promise<void>
}

/**
 * Bundled (`dist/`): the worker's own entry beside this chunk. From sources
 * (tsx, vitest): the TypeScript file, loaded through tsx's loader registered in
 * the thread itself (a worker does not inherit the main thread's loader).
 */
const startWorker = (input: WorkerInput): Worker => {
  // the thread's own objects are a statement's messages, garbage once posted: a small young generation suffices
  const resourceLimits = { maxYoungGenerationSizeMb: 8 }
  if (!import.meta.url.endsWith(".ts")) return new Worker(new URL("./pglite-worker.mjs", import.meta.url), { workerData: input, resourceLimits })
  // the ESM build of tsx's API (`require.resolve` would name its CommonJS one)
  const tsxPackage = createRequire(import.meta.url).resolve("tsx/package.json")
  const tsx = new URL("dist/esm/api/index.mjs", pathToFileURL(tsxPackage)).href
  const source = new URL("./Worker.ts", import.meta.url).href
  const boot = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(source)}) })`
  return new Worker(boot, { eval: true, workerData: input, resourceLimits })
}

/**
 * Opens the database in `dataDir` on a new thread (from `template` when it has
 * none, see `openPglite`). Resolves once it is open; a failure to open rejects
 * with the worker's error. After the thread ends (closed, or crashed) every
 * call fails at once.
 */
export const openPgliteThread = (dataDir: string, template: string | undefined): Promise<PgliteSession> =>
  new Promise((resolveOpen, rejectOpen) => {
    const worker = startWorker({ dataDir, template })
    const pending = new Map<number, { readonly resolve: (value: unknown) => void; readonly reject: (error: Error) => void }>()
    let nextId = 1
    let ended: Error | undefined

    const call = (request: Call): Promise<unknown> =>
      new Promise((resolve, reject) => {
        if (ended !== undefined) return reject(ended)
        const id = nextId++
        pending.set(id, { resolve, reject })
        worker.postMessage({ ...request, id })
      })

    const session: PgliteSession = {
      exec: (sql, options) => call({ op: "exec", sql, rowMode: options.rowMode }) as Promise<Array<Results>>,
      // a Blob crosses to the thread without its bytes being copied
      query: <T>(sql: string, params: Array<unknown>, options: QueryOptions) =>
        call({ op: "query", sql, params, rowMode: options.rowMode, blob: options.blob }) as Promise<Results<T>>,
      close: () => (ended === undefined ? (call({ op: "close" }) as Promise<void>) : Promise.resolve())
    }

    const end = (error: Error) => {
      ended ??= error
      rejectOpen(error)
      for (const waiter of pending.values()) waiter.reject(error)
      pending.clear()
    }

    worker.on("message", (reply: Reply) => {
      if (reply.id === 0) return reply.ok ? resolveOpen(session) : end(deserializeError(reply.error))
      const waiter = pending.get(reply.id)
      if (waiter === undefined) return
      pending.delete(reply.id)
      if (reply.ok) waiter.resolve(reply.result)
      else waiter.reject(deserializeError(reply.error))
    })
    worker.on("error", end)
    worker.on("exit", (code) => end(new Error(`the PGlite thread has ended (exit code ${code})`)))
  })
