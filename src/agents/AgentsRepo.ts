/** SQL for agents. Every query is scoped to one workspace and environment; rows are decoded, not cast. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import {
  type Agent,
  AgentType,
  DEFAULT_GONE_GRACE_DAYS,
  DEFAULT_WIDGET,
  LauncherPosition,
  LeadCapture,
  RefreshSchedule,
  type WidgetSettings
} from "../../schema/Agents.js"
import { Environment } from "../../schema/Auth.js"
import type { PageRequest } from "../../schema/Envelope.js"
import { AgentId, WorkspaceId } from "../../schema/Ids.js"
import { AgentLanguage } from "../../schema/Languages.js"
import type { Tenant } from "../../schema/Tenant.js"
import { DbDate, DbJson } from "../db/Columns.js"
import { decodeAll, decodeOne, decodeSingle, execute, unique } from "../db/Sql.js"
import { iso } from "../Time.js"

/** `agents.widget` as stored: the settings given so far; a missing one reads as its default. */
const StoredWidget = Schema.Struct({
  display_name: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => DEFAULT_WIDGET.display_name }),
  color: Schema.optionalWith(Schema.String, { default: () => DEFAULT_WIDGET.color }),
  launcher_position: Schema.optionalWith(LauncherPosition, { default: () => DEFAULT_WIDGET.launcher_position }),
  lead_capture: Schema.optionalWith(LeadCapture, { default: () => DEFAULT_WIDGET.lead_capture }),
  handoff: Schema.optionalWith(Schema.Boolean, { default: () => DEFAULT_WIDGET.handoff })
})

export const AgentRow = Schema.Struct({
  seq: Schema.String,
  id: AgentId,
  type: AgentType,
  name: Schema.String,
  slug: Schema.String,
  instructions: Schema.NullOr(Schema.String),
  welcome_message: Schema.NullOr(Schema.String),
  allowed_origins: DbJson(Schema.Array(Schema.String)),
  refresh_schedule: RefreshSchedule,
  /** When the schedule's next run is due; null while it is off. */
  refresh_next_at: Schema.NullOr(DbDate),
  gone_grace_days: Schema.Int,
  widget: DbJson(StoredWidget),
  language: AgentLanguage,
  created_at: DbDate,
  updated_at: DbDate
})
export type AgentRow = typeof AgentRow.Type

/** An agent whose refresh schedule is due, with its tenant. */
export const DueAgent = Schema.Struct({
  id: AgentId,
  workspace_id: WorkspaceId,
  environment: Environment,
  refresh_schedule: RefreshSchedule,
  refresh_next_at: DbDate,
  /** The last `seq` its round reached ("0": the round has not begun). */
  refresh_round_after: Schema.String
})
export type DueAgent = typeof DueAgent.Type

/** Another writer took the slug between our read and our insert; the program picks again. */
export class SlugTaken extends Data.TaggedError("SlugTaken") {}

export const toAgent = (row: AgentRow): Agent => ({
  id: row.id,
  object: "agent",
  type: row.type,
  name: row.name,
  slug: row.slug,
  instructions: row.instructions,
  welcome_message: row.welcome_message,
  allowed_origins: row.allowed_origins,
  knowledge_refresh: { schedule: row.refresh_schedule, gone_grace_days: row.gone_grace_days },
  widget: row.widget satisfies WidgetSettings,
  language: row.language,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

// `seq` is read as text (a bigint); queries must order by `agents.seq`, not the text alias
const columns =
  "seq::text as seq, id, type, name, slug, instructions, welcome_message, allowed_origins, refresh_schedule, " +
  "refresh_next_at, gone_grace_days, widget, language, created_at, updated_at"

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
              refresh_schedule: row.refresh_schedule,
              refresh_next_at: row.refresh_next_at,
              gone_grace_days: row.gone_grace_days,
              widget: jsonb(row.widget),
              language: row.language,
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

    const findBySlug = (tenant: Tenant, slug: string): Effect.Effect<Option.Option<AgentRow>> =>
      decodeOne(AgentRow, sql`
        select ${cols} from agents
        where slug = ${slug} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and deleted_at is null`)

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
      changes: Partial<
        Pick<
          AgentRow,
          | "name"
          | "slug"
          | "instructions"
          | "welcome_message"
          | "allowed_origins"
          | "refresh_schedule"
          | "refresh_next_at"
          | "gone_grace_days"
          | "widget"
          | "language"
        >
      >,
      updated_at: Date
    ): Effect.Effect<AgentRow, SlugTaken> =>
      decodeSingle(
        AgentRow,
        unique(
          sql`
            update agents set ${sql.update({
              ...changes,
              ...(changes.allowed_origins === undefined ? {} : { allowed_origins: jsonb(changes.allowed_origins) }),
              ...(changes.widget === undefined ? {} : { widget: jsonb(changes.widget) }),
              // a round moved to another instant starts again from the first source
              ...(changes.refresh_next_at === undefined ? {} : { refresh_round_after: 0 }),
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

    /**
     * Agents whose refresh schedule is due at `at`, oldest due first, each locked (others' sweeps pass over it) until
     * the caller's transaction ends: read through the partial index on `refresh_next_at`.
     */
    const dueForRefresh = (at: Date, limit: number) =>
      decodeAll(
        DueAgent,
        sql`select id, workspace_id, environment, refresh_schedule, refresh_next_at, refresh_round_after::text from agents
            where refresh_next_at <= ${at} and deleted_at is null
            order by refresh_next_at limit ${limit} for update skip locked`
      )

    /** When the earliest refresh round of any agent is due (none: no agent has a schedule). */
    const nextRefreshDue = (): Effect.Effect<Option.Option<Date>> =>
      decodeOne(
        Schema.Struct({ refresh_next_at: DbDate }),
        sql`select refresh_next_at from agents
            where refresh_next_at is not null and deleted_at is null order by refresh_next_at limit 1`
      ).pipe(Effect.map(Option.map((r) => r.refresh_next_at)))

    /** A gone page's grace, by agent id alone (a deleted agent: the default). */
    const goneGraceDays = (id: AgentId): Effect.Effect<number> =>
      decodeOne(Schema.Struct({ gone_grace_days: Schema.Int }), sql`select gone_grace_days from agents where id = ${id}`).pipe(
        Effect.map(Option.match({ onNone: () => DEFAULT_GONE_GRACE_DAYS, onSome: (r) => r.gone_grace_days }))
      )

    /** A round ended: the next one due at `next` (none: the schedule is off), from the first source. */
    const advanceRefresh = (id: AgentId, next: Date | null): Effect.Effect<void> =>
      execute(sql`update agents set refresh_next_at = ${next}, refresh_round_after = 0 where id = ${id}`)

    /** A round's batch queued: the round goes on after `seq` (the agent locked by `dueForRefresh`). */
    const roundReached = (id: AgentId, seq: string): Effect.Effect<void> =>
      execute(sql`update agents set refresh_round_after = ${seq}::bigint where id = ${id}`)

    /**
     * A round asked for now: due at `at` from the first source, unless one is due already (running, or waiting
     * for the sweep), which is the round. The agent, locked until the caller's transaction ends; none when there is
     * no such agent.
     */
    const roundNow = (tenant: Tenant, id: AgentId, at: Date): Effect.Effect<Option.Option<DueAgent>> =>
      decodeOne(
        DueAgent,
        sql`update agents set
              refresh_round_after = case when refresh_next_at <= ${at} then refresh_round_after else 0 end,
              refresh_next_at = case when refresh_next_at <= ${at} then refresh_next_at else ${at} end
            where id = ${id} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
              and deleted_at is null
            returning id, workspace_id, environment, refresh_schedule, refresh_next_at, refresh_round_after::text`
      )

    return {
      slugsLike, insert, find, findBySlug, page, update, softDelete, allowedOriginsOf, dueForRefresh, nextRefreshDue, goneGraceDays,
      advanceRefresh, roundReached, roundNow
    } as const
  })
}) {}
