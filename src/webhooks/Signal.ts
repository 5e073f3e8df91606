/**
 * A doorbell for the dispatcher: rung (after commit, see `afterCommit` in
 * `layers/JobQueue.ts`) when deliveries are created, so the first attempt does
 * not wait for the next poll. Rings coalesce (a sliding queue of 1).
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"

export class DeliverySignal extends Effect.Service<DeliverySignal>()("Webhooks/DeliverySignal", {
  effect: Effect.gen(function* () {
    const bell = yield* Queue.sliding<void>(1)
    return {
      ring: Effect.asVoid(Queue.offer(bell, undefined)),
      wait: Queue.take(bell)
    } as const
  })
}) {}
