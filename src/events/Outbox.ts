/**
 * The event outbox. `emit` must run inside the transaction of the change it
 * reports, so an event exists exactly when its change committed. The body is
 * serialised once here: every later delivery sends these same bytes. In the
 * same transaction it asks the `FanOut` (provided by the webhooks area) who
 * else must hear of it.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Environment } from "../../schema/Auth.js"
import type { Event, EventType } from "../../schema/Events.js"
import { EventId, type WorkspaceId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { now, unixSeconds } from "../Time.js"
import { EventsRepo } from "./EventsRepo.js"
import { FanOut } from "./FanOut.js"

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
    const ids = yield* IdGenerator
    const repo = yield* EventsRepo
    const fanOut = yield* FanOut

    const emit = Effect.fn("Outbox.emit")(function* (input: EmitInput) {
      const created_at = yield* now
      const event: Event = {
        id: EventId.make(yield* ids.make("evt")),
        object: "event",
        type: input.type,
        created: unixSeconds(created_at),
        data: input.data,
        workspace_id: input.workspaceId,
        api_version: "v1",
        livemode: input.environment === "live"
      }
      const tenant = { workspaceId: input.workspaceId, environment: input.environment }
      yield* repo.insert(tenant, event, created_at)
      const deliveries = yield* fanOut.fanOut(tenant, event, created_at, input.only)
      return { event, deliveries }
    })

    /**
     * Erasure: rewrites the stored bodies of this tenant's events of one family
     * (`typePrefix`: `ticket.` by default, `lead.`) that mention `needle` with
     * `scrub` (which returns none when nothing changes). Events keep their place
     * and type; pending deliveries send the body as it is at send time.
     */
    const scrub = Effect.fn("Outbox.scrub")(function* (
      tenant: Tenant,
      needle: string,
      scrub: (body: string) => Option.Option<string>,
      typePrefix: string = "ticket."
    ) {
      for (const e of yield* repo.eventsMentioning(tenant, typePrefix, needle)) {
        const scrubbed = scrub(e.body)
        if (Option.isSome(scrubbed)) yield* repo.rewrite(e.id, scrubbed.value)
      }
    })

    return { emit, scrub } as const
  }),
  dependencies: [EventsRepo.Default]
}) {}
