/**
 * A doorbell for the dispatcher: rung when deliveries are created, so the first
 * attempt does not wait for the next poll. Rings coalesce (a sliding queue of 1).
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Queue from "effect/Queue"

/**
 * Set by the outbox when it created deliveries. A ring from inside a transaction
 * can come before the commit (PostgreSQL then shows the dispatcher nothing yet),
 * so the HTTP edge rings once more after the request's transaction is done.
 */
export const DeliveriesCreated = FiberRef.unsafeMake(false)

export class DeliverySignal extends Effect.Service<DeliverySignal>()("Webhooks/DeliverySignal", {
  effect: Effect.gen(function* () {
    const bell = yield* Queue.sliding<void>(1)
    return {
      ring: Effect.asVoid(Queue.offer(bell, undefined)),
      wait: Queue.take(bell)
    } as const
  })
}) {}
