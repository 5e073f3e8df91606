/** SQL for agents. Every query is scoped to one workspace and environment; rows are decoded, not cast. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type Agent, AgentType } from "../../schema/Agents.js"
import type { PageRequest } from "../../schema/Envelope.js"
import { AgentId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { DbDate, DbJson } from "../db/Columns.js"
import { decodeAll, decodeOne, decodeSingle, execute, unique } from "../db/Sql.js"
import { iso } from "../Time.js"

export const AgentRow = Schema.Struct({
  seq: Schema.String,
  id: AgentId,
  type: AgentType,
  name: Schema.String,
  slug: Schema.String,
  instructions: Schema.NullOr(Schema.String),
  welcome_message: Schema.NullOr(Schema.String),
  allowed_origins: DbJson(Schema.Array(Schema.String)),
  created_at: DbDate,
  updated_at: DbDate
})
export type AgentRow = typeof AgentRow.Type

/** Another writer took the slug between our read and our insert; the program picks again. */
export class SlugTaken extends Data.TaggedError("SlugTaken")<{}> {}

export const toAgent = (row: AgentRow): Agent => ({
  id: row.id,
  object: "agent",
  type: row.type,
  name: row.name,
  slug: row.slug,
  instructions: row.instructions,
  welcome_message: row.welcome_message,
  allowed_origins: row.allowed_origins,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

// `seq` is read as text (a bigint); queries must order by `agents.seq`, not the text alias
const columns =
  "seq::text as seq, id, type, name, slug, instructions, welcome_message, allowed_origins, created_at, updated_at"

export class AgentsRepo extends Effect.Service<AgentsRepo>()("Agents/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)
    // a jsonb column takes the JSON text as a parameter: the column's type decides how it is read
    const jsonb = (value: unknown) => JSON.stringify(value)

    const SlugRow = Schema.Struct({ slug: Schema.String })
    /** Slugs in use that could collide with `base` (itself or `base-N`). */
    const slugsLike = (tenant: Tenant, base: string): Effect.Effect<ReadonlySet<string>> =>
      decodeAll(SlugRow, sql`
        select slug from agents
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and deleted_at is null and (slug = ${base} or slug like ${`${base}-%`})`).pipe(
        Effect.map((rows) => new Set(rows.map((r) => r.slug)))
      )

    const insert = (row: Tenant & Omit<AgentRow, "seq">): Effect.Effect<AgentRow, SlugTaken> =>
      decodeSingle(
        AgentRow,
        unique(
          sql`
            insert into agents ${sql.insert({
              id: row.id,
              workspace_id: row.workspaceId,
              environment: row.environment,
              type: row.type,
              name: row.name,
              slug: row.slug,
              instructions: row.instructions,
              welcome_message: row.welcome_message,
              allowed_origins: jsonb(row.allowed_origins),
              created_at: row.created_at,
              updated_at: row.updated_at
            })}
            returning ${cols}`,
          () => new SlugTaken()
        )
      )

    const find = (
      tenant: Tenant,
      id: AgentId,
      options?: { readonly forUpdate?: boolean }
    ): Effect.Effect<Option.Option<AgentRow>> =>
      decodeOne(AgentRow, sql`
        select ${cols} from agents
        where id = ${id} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and deleted_at is null
        ${options?.forUpdate ? sql.literal("for update") : sql.literal("")}`)

    const page = (tenant: Tenant, page: PageRequest): Effect.Effect<ReadonlyArray<AgentRow>> =>
      decodeAll(AgentRow, sql`
        select ${cols} from agents
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and deleted_at is null
          ${Option.isSome(page.after) ? sql`and agents.seq < ${page.after.value}::bigint` : sql.literal("")}
        order by agents.seq desc
        limit ${page.limit + 1}`)

    const update = (
      id: AgentId,
      changes: Partial<Pick<AgentRow, "name" | "slug" | "instructions" | "welcome_message" | "allowed_origins">>,
      updated_at: Date
    ): Effect.Effect<AgentRow, SlugTaken> =>
      decodeSingle(
        AgentRow,
        unique(
          sql`
            update agents set ${sql.update({
              ...changes,
              ...(changes.allowed_origins === undefined ? {} : { allowed_origins: jsonb(changes.allowed_origins) }),
              updated_at
            })}
            where id = ${id}
            returning ${cols}`,
          () => new SlugTaken()
        )
      )

    const softDelete = (id: AgentId, at: Date): Effect.Effect<void> =>
      execute(sql`update agents set deleted_at = ${at}, updated_at = ${at} where id = ${id}`)

    /**
     * The origins an agent's widget accepts, by id alone (whichever workspace it
     * belongs to): a browser's preflight carries no key. A missing or deleted
     * agent accepts none.
     */
    const allowedOriginsOf = (id: string): Effect.Effect<ReadonlyArray<string>> =>
      decodeOne(
        Schema.Struct({ allowed_origins: DbJson(Schema.Array(Schema.String)) }),
        sql`select allowed_origins from agents where id = ${id} and deleted_at is null`
      ).pipe(Effect.map(Option.match({ onNone: () => [], onSome: (r) => r.allowed_origins })))

    return { slugsLike, insert, find, page, update, softDelete, allowedOriginsOf } as const
  })
}) {}
