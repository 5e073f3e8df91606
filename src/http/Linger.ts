/**
 * A gentle close, as nginx's lingering close: a refusal given before the request's body has all arrived (too
 * large, no key, …) goes out at once, then what the client is still sending is read and dropped, for a
 * bounded time and number of bytes, and only then does the response end and the connection close.
 *
 * Closing with the client's bytes unread makes the kernel reset the connection: a client still writing its
 * body fails with `EPIPE` and never reads the answer that was sent to it. Node's own handling (drop the rest of
 * the body on a kept-alive connection, close at once otherwise) has neither the bound nor the grace.
 */
import * as HttpBody from "@effect/platform/HttpBody"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { IncomingMessage } from "node:http"

/** At most this much of a refused body is read and dropped; beyond it the connection is closed on the rest. */
export const lingerBytes = 32 * 1024 * 1024
/** The client may pause this long between two pieces of its body (nginx's `lingering_timeout`). */
export const lingerIdle = "5 seconds"
/** And take this long in all (nginx's `lingering_time`). */
export const lingerTotal = "30 seconds"

/** One element per piece of the body that arrives, until its end, the byte bound or the client leaving. */
const arrivals = (source: IncomingMessage): Stream.Stream<void> =>
  Stream.asyncPush<void>(
    (emit) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          let bytes = 0
          const onData = (chunk: Buffer) => {
            bytes += chunk.length
            if (bytes > lingerBytes) emit.end()
            else emit.single(undefined)
          }
          const onEnd = () => emit.end()
          source.on("data", onData).on("end", onEnd).on("close", onEnd).on("error", onEnd)
          // the body's reader may have paused it when it refused it
          source.resume()
          if (source.readableEnded) emit.end()
          return { onData, onEnd }
        }),
        ({ onData, onEnd }) =>
          Effect.sync(() => {
            source.off("data", onData).off("end", onEnd).off("close", onEnd).off("error", onEnd)
            // past a bound the rest stays unread: the close after the answer resets what is left
            if (!source.readableEnded) source.pause()
          })
      ),
    // only the beat matters, not the pieces
    { bufferSize: 1, strategy: "sliding" }
  )

/** Reads and drops the rest of the body, within the bounds (on the Clock). */
const dropRest = (source: IncomingMessage): Effect.Effect<void> =>
  arrivals(source).pipe(Stream.timeout(lingerIdle), Stream.interruptAfter(lingerTotal), Stream.runDrain)

/**
 * `response` as it should leave: a refusal (4xx, 5xx) whose request's body is still arriving is sent at once,
 * with `Connection: close`, and ends only after the rest is read and dropped; any other answer is unchanged.
 */
export const closeGently = (
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse
): HttpServerResponse.HttpServerResponse => {
  if (response.status < 400 || response.body._tag !== "Uint8Array") return response
  const source = NodeHttpServerRequest.toIncomingMessage(request)
  // `complete`: every byte of the request was received (whether read or not), so closing resets nothing
  if (source.complete) return response
  const body = response.body
  const bytes = Stream.concat(Stream.succeed(body.body), Stream.drain(Stream.fromEffect(dropRest(source))))
  return HttpServerResponse.setBody(
    HttpServerResponse.setHeader(response, "connection", "close"),
    HttpBody.stream(bytes, body.contentType, body.contentLength)
  )
}
