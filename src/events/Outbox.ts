/**
 * The event outbox. `emit` must run inside the transaction of the change it
 * reports, so an event exists exactly when its change committed. The body is
 * serialised once here: every later delivery sends these same bytes.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import type { Environment } from "../../schema/Auth.js"
import type { Event, EventType } from "../../schema/Events.js"
import type { EventId, WorkspaceId } from "../../schema/Ids.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { now, unixSeconds } from "../Time.js"

export interface EmitInput {
  readonly workspaceId: WorkspaceId
  readonly environment: Environment
  readonly type: EventType
  readonly data: Record<string, unknown>
}

export class Outbox extends Effect.Service<Outbox>()("Events/Outbox", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* IdGenerator

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
      return event
    }, Effect.orDie)

    return { emit } as const
  })
}) {}
