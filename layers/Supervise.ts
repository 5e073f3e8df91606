/**
 * Supervision of a background fiber that must keep running (a queue's worker, a maintenance loop): restarted with
 * backoff whenever it ends or fails, by the Clock, so tests drive it with `TestClock`.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/** A supervised run that lasted this long ran well: the restart after it waits the first step again. */
export const superviseResetMillis = 60_000

/** The wait before the restart after `restarts` consecutive short runs (1: the first): 1 s, 2 s, 4 s, ..., 1 min. */
export const superviseBackoffMillis = (restarts: number) => Math.min(1_000 * 2 ** Math.max(0, restarts - 1), 60_000)

/**
 * Runs `work` forever: when it ends or fails it is logged and restarted with backoff. The backoff starts again
 * once a run lasted `superviseResetMillis` (by the Clock): a worker that failed once a day waits a second, not
 * the minute its earlier restarts had grown to.
 */
export const supervise = <E, R>(name: string, work: Effect.Effect<unknown, E, R>): Effect.Effect<never, never, R> =>
  Effect.suspend(() => {
    // restarts since a run last ran well
    let restarts = 0
    const run = Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      yield* work.pipe(
        Effect.matchCauseEffect({
          onFailure: (cause) =>
            Cause.isInterruptedOnly(cause) ? Effect.interrupt : Effect.logError(`${name} failed; restarting`, cause),
          onSuccess: () => Effect.logWarning(`${name} stopped; restarting`)
        })
      )
      const ran = (yield* Clock.currentTimeMillis) - started
      restarts = ran >= superviseResetMillis ? 1 : restarts + 1
      yield* Effect.sleep(superviseBackoffMillis(restarts))
    })
    return Effect.forever(run)
  }).pipe(Effect.annotateLogs("worker", name))
