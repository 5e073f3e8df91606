/** SQL for agents. Every query is scoped to one workspace and environment. */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Agent, AgentType } from "../../schema/Agents.js"
import type { AgentId } from "../../schema/Ids.js"
import type { PageRequest } from "../../schema/Envelope.js"
import type { Tenant } from "../../schema/Tenant.js"
import { iso } from "../Time.js"

export type { Tenant }

export interface AgentRow {
  readonly seq: string
  readonly id: string
  readonly type: AgentType
  readonly name: string
  readonly slug: string
  readonly instructions: string | null
  readonly welcome_message: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

export const toAgent = (row: AgentRow): Agent => ({
  id: row.id as AgentId,
  object: "agent",
  type: row.type,
  name: row.name,
  slug: row.slug,
  instructions: row.instructions,
  welcome_message: row.welcome_message,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

// `seq` is read as text (a bigint); queries must order by `agents.seq`, not the text alias
const columns = "seq::text as seq, id, type, name, slug, instructions, welcome_message, created_at, updated_at"

export class AgentsRepo extends Effect.Service<AgentsRepo>()("Agents/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    /** Slugs in use that could collide with `base` (itself or `base-N`). */
    const slugsLike = (tenant: Tenant, base: string): Effect.Effect<ReadonlySet<string>, SqlError> =>
      sql<{ readonly slug: string }>`
        select slug from agents
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and deleted_at is null and (slug = ${base} or slug like ${`${base}-%`})`.pipe(
        Effect.map((rows) => new Set(rows.map((r) => r.slug)))
      )

    const insert = (row: Tenant & Omit<AgentRow, "seq">): Effect.Effect<AgentRow, SqlError> =>
      sql<AgentRow>`
        insert into agents ${sql.insert({
          id: row.id,
          workspace_id: row.workspaceId,
          environment: row.environment,
          type: row.type,
          name: row.name,
          slug: row.slug,
          instructions: row.instructions,
          welcome_message: row.welcome_message,
          created_at: row.created_at,
          updated_at: row.updated_at
        })}
        returning ${cols}`.pipe(Effect.map((rows) => rows[0]!))

    const find = (tenant: Tenant, id: AgentId, options?: { readonly forUpdate?: boolean }) =>
      sql<AgentRow>`
        select ${cols} from agents
        where id = ${id} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and deleted_at is null
        ${options?.forUpdate ? sql.literal("for update") : sql.literal("")}`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]))
      )

    const page = (tenant: Tenant, page: PageRequest) =>
      sql<AgentRow>`
        select ${cols} from agents
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and deleted_at is null
          ${Option.isSome(page.after) ? sql`and agents.seq < ${page.after.value}::bigint` : sql.literal("")}
        order by agents.seq desc
        limit ${page.limit + 1}`

    const update = (
      id: string,
      changes: Partial<Pick<AgentRow, "name" | "slug" | "instructions" | "welcome_message">>,
      updated_at: Date
    ) =>
      sql<AgentRow>`
        update agents set ${sql.update({ ...changes, updated_at })}
        where id = ${id}
        returning ${cols}`.pipe(Effect.map((rows) => rows[0]!))

    const softDelete = (id: string, at: Date) =>
      sql`update agents set deleted_at = ${at}, updated_at = ${at} where id = ${id}`

    return { slugsLike, insert, find, page, update, softDelete } as const
  })
}) {}
