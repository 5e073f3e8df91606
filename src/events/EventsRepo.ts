/** SQL for the `events` table, the outbox's own. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Event } from "../../schema/Events.js"
import type { Tenant } from "../../schema/Tenant.js"
import { boundary } from "../db/Sql.js"

const StoredBody = Schema.Struct({ id: Schema.String, body: Schema.String })

export class EventsRepo extends Effect.Service<EventsRepo>()("Events/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = (tenant: Tenant, event: Event, at: Date) =>
      boundary(sql`
        insert into events ${sql.insert({
          id: event.id,
          workspace_id: tenant.workspaceId,
          environment: tenant.environment,
          type: event.type,
          created_at: at,
          body: JSON.stringify(event)
        })}`.pipe(Effect.asVoid))

    const eventsMentioning = SqlSchema.findAll({
      Request: Schema.Struct({
        workspaceId: Schema.String,
        environment: Schema.String,
        typePrefix: Schema.String,
        needle: Schema.String
      }),
      Result: StoredBody,
      execute: (r) => sql`
        select id, body from events
        where workspace_id = ${r.workspaceId} and environment = ${r.environment}
          and starts_with(type, ${r.typePrefix}) and strpos(body, ${r.needle}) > 0
        for update`
    })

    const rewrite = (id: string, body: string) =>
      boundary(sql`update events set body = ${body} where id = ${id}`.pipe(Effect.asVoid))

    return {
      insert,
      /** Events of the tenant whose type starts with `typePrefix` (`ticket.`) and whose body holds `needle`, locked. */
      eventsMentioning: (tenant: Tenant, typePrefix: string, needle: string) =>
        boundary(
          eventsMentioning({ workspaceId: tenant.workspaceId, environment: tenant.environment, typePrefix, needle })
        ),
      rewrite
    } as const
  })
}) {}
