/**
 * The webhooks area's answer to the outbox: one pending delivery per active
 * subscription of the tenant that takes the event's type, then a ring of the
 * dispatcher's doorbell once the transaction has committed.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { afterCommit } from "../../layers/JobQueue.js"
import { FanOut } from "../events/FanOut.js"
import { horizonMillis } from "./Schedule.js"
import { DeliverySignal } from "./Signal.js"
import { WebhooksRepo } from "./WebhooksRepo.js"

export const WebhookFanOut = Layer.effect(
  FanOut,
  Effect.gen(function* () {
    const repo = yield* WebhooksRepo
    const ids = yield* IdGenerator
    const signal = yield* DeliverySignal
    return {
      fanOut: (tenant, event, at, only) =>
        Effect.gen(function* () {
          const targets = only ?? (yield* repo.subscribersOf(tenant, event.type)).map((s) => s.id)
          const deliveries: Array<string> = []
          for (const subscriptionId of targets) {
            const id = yield* ids.make("whd")
            yield* repo.insertDelivery({
              ...tenant,
              id,
              subscriptionId,
              eventId: event.id,
              eventType: event.type,
              at,
              horizonAt: new Date(at.getTime() + horizonMillis)
            })
            deliveries.push(id)
          }
          // after the commit: before it, PostgreSQL shows the dispatcher nothing yet
          if (deliveries.length > 0) yield* afterCommit(signal.ring)
          return deliveries
        })
    }
  })
).pipe(Layer.provide(Layer.mergeAll(WebhooksRepo.Default, DeliverySignal.Default)))
