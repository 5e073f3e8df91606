/**
 * Graceful shutdown of the HTTP listeners, as two finalizers placed around the
 * background workers by `shutdownOrder` (src/Shutdown.ts), so a stop runs in this order:
 *
 * 1. `stopAccepting` (the first finalizer to run): `/readyz` turns 503, the
 *    listeners close (new connections are refused, idle keep-alive ones are
 *    closed) and every response not yet started tells its client to close the
 *    connection after it.
 * 2. The workers stop: the JobQueue hands back the jobs they held at once.
 * 3. `awaitInFlight`: requests in flight (event streams included) may finish,
 *    for at most the grace period (on the Clock); whatever is still open then is
 *    cut, an event stream after a last `error` event that tells its reader to
 *    reconnect (with `Last-Event-ID`, to another instance). Only then do the
 *    services and the database close.
 *
 * Request fibers are not children of the server's scope (the platform forks
 * each from the runtime), so they keep running while the scope closes.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Lifecycle } from "../../layers/Lifecycle.js"

export const defaultGraceMillis = 10_000

/**
 * The last event of a stream cut at shutdown. It has no `id:`, so the reader's
 * `Last-Event-ID` stays at the last event it received and a reconnection resumes there.
 */
export const shutdownFrame = `data: ${JSON.stringify({
  type: "error",
  code: "service_unavailable",
  message: "The server is shutting down; reconnect with Last-Event-ID to resume the stream"
})}\n\n`

/**
 * Headers given to `writeHead` (as the platform does) are not readable with
 * `getHeader`; once sent they are in the response's header block.
 */
const isEventStream = (response: ServerResponse) =>
  /^content-type:\s*text\/event-stream/im.test((response as { readonly _header?: string | null })._header ?? "")

/** Writes the shutdown event to every open event stream; done when each write was handed to the socket. */
const endStreams = (responses: Iterable<ServerResponse>) =>
  Effect.async<void>((resume) => {
    const streams = [...responses].filter((r) => r.headersSent && !r.writableEnded && isEventStream(r))
    let pending = streams.length
    if (pending === 0) return resume(Effect.void)
    for (const response of streams) {
      response.write(shutdownFrame, () => {
        if (--pending === 0) resume(Effect.void)
      })
    }
  })

export const makeDrain = (options: { readonly servers: () => ReadonlyArray<Server>; readonly graceMillis: number }) => {
  const open = new Set<ServerResponse>()
  let draining = false
  let onEmpty: (() => void) | undefined
  const track = (_request: IncomingMessage, response: ServerResponse) => {
    // a request arriving on a kept-alive connection while draining is served, then its connection closed
    if (draining) response.shouldKeepAlive = false
    open.add(response)
    response.once("close", () => {
      open.delete(response)
      if (open.size === 0) onEmpty?.()
    })
  }

  const stopAccepting = Layer.scopedDiscard(
    Effect.addFinalizer(() =>
      Effect.gen(function* () {
        const lifecycle = yield* Lifecycle
        yield* lifecycle.startDraining
        draining = true
        for (const response of open) if (!response.headersSent) response.shouldKeepAlive = false
        for (const server of options.servers()) if (server.listening) server.close()
        yield* Effect.logInfo(`shutting down: listeners closed, ${open.size} requests in flight`)
      })
    )
  )

  const allEnded = Effect.async<void>((resume) => {
    if (open.size === 0) return resume(Effect.void)
    onEmpty = () => resume(Effect.void)
    return Effect.sync(() => {
      onEmpty = undefined
    })
  })

  const awaitInFlight = Layer.scopedDiscard(
    Effect.acquireRelease(
      // first in line, so it sees every request the API's handler gets
      Effect.sync(() => options.servers().forEach((server) => server.prependListener("request", track))),
      () =>
        Effect.gen(function* () {
          // finalizers run uninterruptibly: the loser of the race must be made interruptible, or it is awaited
          const ended = yield* Effect.raceFirst(
            Effect.interruptible(Effect.as(allEnded, true)),
            Effect.interruptible(Effect.as(Effect.sleep(options.graceMillis), false))
          )
          if (ended) yield* Effect.logInfo("shutting down: requests in flight ended")
          else {
            yield* Effect.logWarning(`shutdown grace of ${options.graceMillis} ms over: cutting ${open.size} requests`)
            // a socket that does not take the last event within a second is cut without it
            yield* Effect.timeout(endStreams(open), "1 second").pipe(Effect.interruptible, Effect.ignore)
          }
          for (const server of options.servers()) {
            server.off("request", track)
            server.closeAllConnections()
          }
        })
    )
  )

  return { stopAccepting, awaitInFlight }
}
