/**
 * A worker thread for the local provider's long work. Its categories, Q&A and vectors are plain JavaScript over
 * the whole text: for a document of megabytes, seconds of it, which on the main thread would hold up every request
 * of the service. The thread starts on the first call and ends with its scope; one that dies (its error, an out of
 * memory) fails the calls it held as defects, and the next call starts a new one.
 */
import * as Effect from "effect/Effect"
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import type { LocalCall, LocalReply } from "./LocalProtocol.js"

/**
 * Bundled (`dist/`): the worker's own entry beside this chunk. From sources (tsx, vitest): the TypeScript file,
 * loaded through tsx's loader registered in the thread itself (a worker does not inherit the main thread's loader).
 */
const startWorker = (): Worker => {
  if (!import.meta.url.endsWith(".ts")) return new Worker(new URL("./ai-worker.mjs", import.meta.url))
  const tsxPackage = createRequire(import.meta.url).resolve("tsx/package.json")
  const tsx = new URL("dist/esm/api/index.mjs", pathToFileURL(tsxPackage)).href
  const source = new URL("./LocalWorker.ts", import.meta.url).href
  const boot = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(source)}) })`
  return new Worker(boot, { eval: true })
}

interface Waiter {
  readonly resolve: (result: unknown) => void
  readonly reject: (error: Error) => void
}

/** `call(request)` answered by the thread, in the scope that ends the thread. */
export const makeLocalThread = Effect.gen(function* () {
  let current: { readonly worker: Worker; readonly pending: Map<number, Waiter> } | undefined
  let nextId = 1

  const started = () => {
    if (current !== undefined) return current
    const worker = startWorker()
    const pending = new Map<number, Waiter>()
    const thread = { worker, pending }
    const end = (error: Error) => {
      if (current === thread) current = undefined
      for (const waiter of pending.values()) waiter.reject(error)
      pending.clear()
    }
    worker.on("message", (reply: LocalReply) => {
      const waiter = pending.get(reply.id)
      if (waiter === undefined) return
      pending.delete(reply.id)
      if (reply.ok) waiter.resolve(reply.result)
      else waiter.reject(new Error(reply.message))
    })
    worker.on("error", end)
    worker.on("exit", (code) => end(new Error(`the local AI thread has ended (exit code ${code})`)))
    current = thread
    return thread
  }

  yield* Effect.addFinalizer(() => (current === undefined ? Effect.void : Effect.promise(() => current!.worker.terminate())))

  const call = (request: LocalCall): Effect.Effect<unknown> =>
    Effect.async<unknown>((resume) => {
      const { pending, worker } = started()
      const id = nextId++
      pending.set(id, { resolve: (result) => resume(Effect.succeed(result)), reject: (error) => resume(Effect.die(error)) })
      worker.postMessage({ ...request, id })
      // interrupted: the answer, when it comes, is dropped
      return Effect.sync(() => pending.delete(id))
    })

  return { call } as const
})
