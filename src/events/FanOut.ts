/**
 * Who else must hear of an event, asked by the outbox inside the event's
 * transaction. The events area only names the service; the webhooks area
 * provides it (one pending delivery per subscriber), so events never import
 * webhooks.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Event } from "../../schema/Events.js"
import type { Tenant } from "../../schema/Tenant.js"

export interface FanOutShape {
  /**
   * Records what must follow `event`, written at `at`; returns the ids it created.
   * `only` narrows the audience to these subscriptions (a `webhook.test`).
   */
  readonly fanOut: (
    tenant: Tenant,
    event: Event,
    at: Date,
    only: ReadonlyArray<string> | undefined
  ) => Effect.Effect<ReadonlyArray<string>>
}

export class FanOut extends Context.Tag("Events/FanOut")<FanOut, FanOutShape>() {}
