/**
 * The webhooks area's answer to the outbox: one pending delivery per active
 * subscription of the tenant that takes the event's type, each with its job on
 * the dispatcher's queue, its group the tenant's workspace (which wakes the dispatcher once the transaction has
 * committed).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { JobQueue } from "../../layers/JobQueue.js"
import { FanOut } from "../events/FanOut.js"
import { webhookQueue } from "./Dispatcher.js"
import { horizonMillis } from "./Schedule.js"
import { WebhooksRepo } from "./WebhooksRepo.js"

export const WebhookFanOut = Layer.effect(
  FanOut,
  Effect.gen(function* () {
    const repo = yield* WebhooksRepo
    const ids = yield* IdGenerator
    const jobs = yield* JobQueue
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
            yield* jobs.enqueue({ queue: webhookQueue, key: subscriptionId, group: tenant.workspaceId, payload: { deliveryId: id } })
            deliveries.push(id)
          }
          return deliveries
        })
    }
  })
).pipe(Layer.provide(WebhooksRepo.Default))
