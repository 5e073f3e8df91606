/**
 * The worker-thread side of `Thread.ts`: opens the embedded database
 * here (`workerData`: its data dir and template) and runs the statements the
 * main thread posts, one message each way per statement. Bundled as
 * `dist/pglite-worker.mjs`; from sources it is loaded through tsx.
 */
import { parentPort, workerData } from "node:worker_threads"
import { openPglite } from "./Open.js"
import type { Reply, Request, WorkerInput } from "./Protocol.js"
import { serializeError } from "./Protocol.js"

const port = parentPort
if (port === null) throw new Error("layers/pglite/Worker.ts runs as a worker thread (see Thread.ts)")
const input = workerData as WorkerInput

const post = (reply: Reply) => port.postMessage(reply)

try {
  const db = await openPglite(input.dataDir, input.template)
  port.on("message", (request: Request) => {
    const run = (): Promise<unknown> => {
      switch (request.op) {
        case "exec":
          return db.exec(request.sql, { rowMode: request.rowMode })
        case "query":
          return db.query(request.sql, request.params as Array<unknown>, {
            rowMode: request.rowMode,
            ...(request.blob === undefined ? {} : { blob: request.blob })
          })
        case "close":
          return db.close()
      }
    }
    // a throw inside `run` is that statement's failure too, not the thread's
    Promise.resolve().then(run).then(
      (result) => {
        post({ id: request.id, ok: true, result })
        // nothing is left to run: let the thread end
        if (request.op === "close") port.close()
      },
      (error: unknown) => post({ id: request.id, ok: false, error: serializeError(error) })
    )
  })
  post({ id: 0, ok: true, result: null })
} catch (error) {
  post({ id: 0, ok: false, error: serializeError(error) })
  port.close()
}
