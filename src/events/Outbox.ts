/**
 * The event outbox. `emit` must run inside the transaction of the change it
 * reports, so an event exists exactly when its change committed. The body is
 * serialised once here: every later delivery sends these same bytes. In the
 * same transaction it fans out: one pending delivery per active subscription
 * of the workspace and environment that takes the event's type, each with its
 * job on the dispatcher's queue.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import type { Environment } from "../../schema/Auth.js"
import type { Event, EventType } from "../../schema/Events.js"
import type { EventId, WorkspaceId } from "../../schema/Ids.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { JobQueue } from "../../layers/JobQueue.js"
import { now, unixSeconds } from "../Time.js"
import { horizonMillis } from "../webhooks/Schedule.js"
import { webhookQueue } from "../webhooks/Dispatcher.js"
import { WebhooksRepo } from "../webhooks/WebhooksRepo.js"

export interface EmitInput {
  readonly workspaceId: WorkspaceId
  readonly environment: Environment
  readonly type: EventType
  readonly data: Record<string, unknown>
  /** Deliver to these subscriptions only (a `webhook.test`), instead of every subscriber. */
  readonly only?: ReadonlyArray<string>
}

export class Outbox extends Effect.Service<Outbox>()("Events/Outbox", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* IdGenerator
    const webhooks = yield* WebhooksRepo
    const jobs = yield* JobQueue

    const emit = Effect.fn("Outbox.emit")(function* (input: EmitInput) {
      const created_at = yield* now
      const event: Event = {
        id: (yield* ids.make("evt")) as EventId,
        object: "event",
        type: input.type,
        created: unixSeconds(created_at),
        data: input.data,
        workspace_id: input.workspaceId,
        api_version: "v1",
        livemode: input.environment === "live"
      }
      yield* sql`
        insert into events ${sql.insert({
          id: event.id,
          workspace_id: input.workspaceId,
          environment: input.environment,
          type: input.type,
          created_at,
          body: JSON.stringify(event)
        })}`
      const targets = input.only ?? (yield* webhooks.subscribersOf(input, input.type)).map((s) => s.id)
      const deliveries: Array<string> = []
      for (const subscriptionId of targets) {
        const id = yield* ids.make("whd")
        yield* webhooks.insertDelivery({
          ...input,
          id,
          subscriptionId,
          eventId: event.id,
          eventType: event.type,
          at: created_at,
          horizonAt: new Date(created_at.getTime() + horizonMillis)
        })
        // the work item; it wakes this instance's dispatcher once the transaction commits
        yield* jobs.enqueue({ queue: webhookQueue, key: subscriptionId, payload: { deliveryId: id } })
        deliveries.push(id)
      }
      return { event, deliveries }
    }, Effect.orDie)

    return { emit } as const
  })
}) {}
