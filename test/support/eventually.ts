/**
 * Waits for background fibers (the webhook dispatcher, the e-mail sender) to
 * finish real I/O after a TestClock step. This is not a timed wait of the
 * behaviour under test: it yields, with a short real pause, a bounded number of times.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as TestServices from "effect/TestServices"

export class ConditionNotReached extends Data.TaggedError("ConditionNotReached")<{ readonly message: string }> {}

export const eventually = <A, E, R>(
  check: Effect.Effect<A, E, R>,
  until: (a: A) => boolean,
  options: { readonly tries?: number; readonly label?: string } = {}
): Effect.Effect<A, E | ConditionNotReached, R> =>
  Effect.gen(function* () {
    const tries = options.tries ?? 400
    let last: A | undefined
    for (let i = 0; i < tries; i++) {
      last = yield* check
      if (until(last)) return last
      yield* TestServices.provideLive(Effect.sleep("10 millis"))
    }
    return yield* Effect.fail(
      new ConditionNotReached({
        message: `condition not reached${options.label ? ` (${options.label})` : ""}: last ${JSON.stringify(last)}`
      })
    )
  })
