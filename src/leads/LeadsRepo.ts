/** SQL for leads. Scoped to one workspace and environment; rows decoded, not cast. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { PageRequest } from "../../schema/Envelope.js"
import { AgentId, LeadId } from "../../schema/Ids.js"
import type { Lead } from "../../schema/Leads.js"
import type { Tenant } from "../../schema/Tenant.js"
import { DbDate, DbJson } from "../db/Columns.js"
import { decodeAll, decodeOne, decodeSingle, execute } from "../db/Sql.js"
import { iso } from "../Time.js"

export const LeadRow = Schema.Struct({
  seq: Schema.String,
  id: LeadId,
  agent_id: AgentId,
  email: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  metadata: DbJson(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  conversation_id: Schema.NullOr(Schema.String),
  created_at: DbDate,
  deleted_at: Schema.NullOr(DbDate)
})
export type LeadRow = typeof LeadRow.Type

export const toLead = (row: LeadRow): Lead => ({
  id: row.id,
  object: "lead",
  agent_id: row.agent_id,
  email: row.email,
  name: row.name,
  phone: row.phone,
  metadata: row.metadata,
  conversation_id: row.conversation_id,
  created_at: iso(row.created_at)
})

/** Filters of the list, as given (unknown values simply match nothing). */
export interface LeadFilters {
  readonly agentId: Option.Option<string>
  readonly email: Option.Option<string>
  readonly conversationId: Option.Option<string>
}

// `seq` is read as text (a bigint); queries order by the table column, not the alias
const columns = `leads.seq::text as seq, id, agent_id, email, name, phone, metadata, conversation_id, created_at,
  deleted_at`

export class LeadsRepo extends Effect.Service<LeadsRepo>()("Leads/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    const insert = (row: Tenant & Omit<LeadRow, "seq" | "deleted_at">) =>
      decodeSingle(LeadRow, sql`
        insert into leads (id, workspace_id, environment, agent_id, email, name, phone, metadata, conversation_id,
          created_at)
        values (${row.id}, ${row.workspaceId}, ${row.environment}, ${row.agent_id}, ${row.email}, ${row.name},
          ${row.phone}, ${JSON.stringify(row.metadata)}, ${row.conversation_id}, ${row.created_at})
        returning ${cols}`)

    /** A lead of this tenant, deleted ones included (the program decides what a tombstone answers). */
    const find = (tenant: Tenant, id: LeadId, options?: { readonly forUpdate?: boolean }) =>
      decodeOne(LeadRow, sql`
        select ${cols} from leads
        where id = ${id} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
        ${options?.forUpdate ? sql.literal("for update") : sql.literal("")}`)

    const page = (tenant: Tenant, filters: LeadFilters, page: PageRequest) =>
      decodeAll(LeadRow, sql`
        select ${cols} from leads
        where ${sql.and([
          sql`workspace_id = ${tenant.workspaceId}`,
          sql`environment = ${tenant.environment}`,
          sql`deleted_at is null`,
          ...Option.match(filters.agentId, { onNone: () => [], onSome: (a) => [sql`agent_id = ${a}`] }),
          ...Option.match(filters.email, { onNone: () => [], onSome: (e) => [sql`lower(email) = lower(${e})`] }),
          ...Option.match(filters.conversationId, { onNone: () => [], onSome: (c) => [sql`conversation_id = ${c}`] }),
          ...(Option.isSome(page.after) ? [sql`leads.seq < ${page.after.value}::bigint`] : [])
        ])}
        order by leads.seq desc
        limit ${page.limit + 1}`)

    /** Leaves a tombstone: the id, agent and times stay; the personal data goes. */
    const tombstone = (id: LeadId, at: Date) =>
      execute(sql`
        update leads set email = null, name = null, phone = null, metadata = '{}'::jsonb, deleted_at = ${at}
        where id = ${id} and deleted_at is null`)

    return { insert, find, page, tombstone } as const
  })
}) {}
