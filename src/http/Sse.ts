/**
 * Server-sent event responses: frames as text, the headers proxies need to pass
 * them through unbuffered, and a comment ping whenever the source has been
 * silent for a while (on the Clock), so idle connections are not cut.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import type * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { openStreams } from "./Metrics.js"

/** One event: `id:` then `data:` (JSON on one line). */
export const frame = (id: number, data: string): string => `id: ${id}\ndata: ${data}\n\n`

export const ping = ": ping\n\n"

/** `frames`, with `ping` inserted after each `interval` in which none came. */
export const keepAlive = <E, R>(frames: Stream.Stream<string, E, R>, interval: Duration.DurationInput): Stream.Stream<string, E, R> =>
  Stream.unwrapScoped(
    Effect.map(Stream.toQueueOfElements(frames, { capacity: 16 }), (queue) =>
      Stream.repeatEffectOption(
        Queue.take(queue).pipe(
          Effect.timeoutTo({
            duration: interval,
            onTimeout: () => Exit.succeed(ping),
            onSuccess: (exit): Exit.Exit<string, Option.Option<E>> => exit
          }),
          Effect.flatten
        )
      )
    )
  )

/** `sse_open_streams` counts the stream from its first pull to its end, however it ends (a client gone too). */
const counted = <E, R>(frames: Stream.Stream<string, E, R>): Stream.Stream<string, E, R> =>
  Stream.unwrapScoped(
    Effect.as(
      Effect.acquireRelease(Metric.modify(openStreams, 1), () => Metric.modify(openStreams, -1)),
      frames
    )
  )

/** The response for an event stream. */
export const eventStream = (frames: Stream.Stream<string>, pingInterval: Duration.DurationInput, headers: Record<string, string> = {}) =>
  HttpServerResponse.stream(Stream.encodeText(counted(keepAlive(frames, pingInterval))), {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-cache", "x-accel-buffering": "no", ...headers }
  })
