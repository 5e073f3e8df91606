/** Assertions over Effects of the typed client. */
import { expect } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"

/**
 * Runs `effect`, expects it to fail with an instance of `cls` (a tagged error of
 * `schema/Errors.ts`) and returns that failure for further checks (`param`,
 * `message`). A success, a defect or another failure fails the test, naming what came.
 */
export const expectFailure = <A, E, R, C extends abstract new (...args: Array<any>) => E>(
  effect: Effect.Effect<A, E, R>,
  cls: C
): Effect.Effect<InstanceType<C>, never, R> =>
{
  const isExpected = (u: unknown): u is InstanceType<C> => u instanceof cls
  return Effect.flatMap(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) {
      return Effect.dieMessage(`expected a ${cls.name} failure, got a success: ${JSON.stringify(exit.value)}`)
    }
    const failure = Cause.failureOption(exit.cause)
    if (Option.isNone(failure)) {
      return Effect.dieMessage(`expected a ${cls.name} failure, got ${Cause.pretty(exit.cause)}`)
    }
    const error = failure.value
    if (!isExpected(error)) {
      return expect.fail(`expected a ${cls.name} failure, got ${String(error)} ${JSON.stringify(error)}`)
    }
    return Effect.succeed(error)
  })
}
