/** SQL for the `events` table, the outbox's own. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Event } from "../../schema/Events.js"
import type { Tenant } from "../../schema/Tenant.js"
import { decodeAll, execute } from "../db/Sql.js"

const StoredBody = Schema.Struct({ id: Schema.String, body: Schema.String })

export class EventsRepo extends Effect.Service<EventsRepo>()("Events/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = (tenant: Tenant, event: Event, at: Date) =>
      execute(sql`
        insert into events ${sql.insert({
          id: event.id,
          workspace_id: tenant.workspaceId,
          environment: tenant.environment,
          type: event.type,
          created_at: at,
          body: JSON.stringify(event)
        })}`)

    /** Events of the tenant whose type starts with `typePrefix` (`ticket.`) and whose body holds `needle`, locked. */
    const eventsMentioning = (tenant: Tenant, typePrefix: string, needle: string) =>
      decodeAll(StoredBody, sql`
        select id, body from events
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and starts_with(type, ${typePrefix}) and strpos(body, ${needle}) > 0
        for update`)

    const rewrite = (id: string, body: string) => execute(sql`update events set body = ${body} where id = ${id}`)

    return { insert, eventsMentioning, rewrite } as const
  })
}) {}
