/** Agent programs: each change and its event commit in one transaction. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import {
  type Agent,
  type CreateAgent,
  DEFAULT_GONE_GRACE_DAYS,
  DEFAULT_WIDGET,
  type KnowledgeRefresh,
  type RefreshSchedule,
  type UpdateAgent,
  type WidgetSettings
} from "../../schema/Agents.js"
import type { PageParams } from "../../schema/Envelope.js"
import { ResourceMissing } from "../../schema/Errors.js"
import { AgentId } from "../../schema/Ids.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { Outbox } from "../events/Outbox.js"
import { Paginator, toPage } from "../http/Pagination.js"
import { now } from "../Time.js"
import type { Tenant } from "../../schema/Tenant.js"
import { transaction } from "../db/Sql.js"
import { AgentsRepo, SlugTaken, toAgent } from "./AgentsRepo.js"
import { firstFree, slugify } from "./Slug.js"

const isAgentId = Schema.is(AgentId)

const missing = (id: string) => new ResourceMissing({ message: `No such agent: '${id}'`, param: "id" })

type Editable = "name" | "slug" | "instructions" | "welcome_message" | "allowed_origins" | "knowledge_refresh" | "widget" | "language"

/** A refresh schedule's period; the first run is one period after it is set. */
export const refreshPeriodMillis: Record<Exclude<RefreshSchedule, "off">, number> = {
  daily: 24 * 60 * 60 * 1000,
  weekly: 7 * 24 * 60 * 60 * 1000
}

/**
 * When a scheduled run due at `due` is followed by the next, seen at `at`: a period later, or a period from `at`
 * after a long stop (null: off).
 */
export const nextRun = (schedule: RefreshSchedule, due: Date, at: Date) => {
  if (schedule === "off") return null
  const period = refreshPeriodMillis[schedule]
  const next = due.getTime() + period
  return new Date(next > at.getTime() ? next : at.getTime() + period)
}

/** When a schedule set at `at` runs first (null: off). */
export const firstRun = (schedule: RefreshSchedule, at: Date) => (schedule === "off" ? null : new Date(at.getTime() + refreshPeriodMillis[schedule]))

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
const distinct = (origins: ReadonlyArray<string>) => [...new Set(origins)]

export class Agents extends Effect.Service<Agents>()("Agents/Programs", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* AgentsRepo
    const outbox = yield* Outbox
    const ids = yield* IdGenerator
    const pages = yield* Paginator

    /** A free slug for `name`; a concurrent writer may still take it, hence the retry below. */
    const slugFor = (tenant: Tenant, name: string) => {
      const base = slugify(name)
      return Effect.map(repo.slugsLike(tenant, base), (taken) => firstFree(base, taken))
    }
    // a writer that took the slug meanwhile: pick again; past that many races the store is misbehaving
    const retryOnSlugRace = <A, E, R>(self: Effect.Effect<A, E | SlugTaken, R>) =>
      self.pipe(
        Effect.retry({ while: (e) => e instanceof SlugTaken, times: 5 }),
        Effect.catchIf((e): e is SlugTaken => e instanceof SlugTaken, Effect.die)
      )
    const tx = transaction(sql)

    const create = Effect.fn("Agents.create")(function* (tenant: Tenant, input: CreateAgent) {
      const id = AgentId.make(yield* ids.make("agt"))
      return yield* Effect.gen(function* () {
        const at = yield* now
        const row = yield* repo.insert({
          ...tenant,
          id,
          type: input.type,
          name: input.name,
          slug: yield* slugFor(tenant, input.name),
          instructions: input.instructions ?? null,
          welcome_message: input.welcome_message ?? null,
          allowed_origins: distinct(input.allowed_origins ?? []),
          refresh_schedule: input.knowledge_refresh?.schedule ?? "off",
          refresh_next_at: firstRun(input.knowledge_refresh?.schedule ?? "off", at),
          gone_grace_days: input.knowledge_refresh?.gone_grace_days ?? DEFAULT_GONE_GRACE_DAYS,
          widget: { ...DEFAULT_WIDGET, ...input.widget } satisfies WidgetSettings,
          language: input.language ?? "auto",
          created_at: at,
          updated_at: at
        })
        const agent = toAgent(row)
        yield* outbox.emit({ ...tenant, type: "agent.created", data: { agent } })
        return agent
      }).pipe(tx, retryOnSlugRace)
    })

    const retrieve = Effect.fn("Agents.retrieve")(function* (tenant: Tenant, id: AgentId) {
      const row = yield* repo.find(tenant, id)
      return Option.isSome(row) ? toAgent(row.value) : yield* missing(id)
    })

    /** The agent an id or a slug names (an OpenAI-compatible request's `model`); none when neither does. */
    const resolve = Effect.fn("Agents.resolve")(function* (tenant: Tenant, idOrSlug: string) {
      const row = isAgentId(idOrSlug) ? yield* repo.find(tenant, idOrSlug) : yield* repo.findBySlug(tenant, idOrSlug)
      return Option.map(row, toAgent)
    })

    const list = Effect.fn("Agents.list")(function* (tenant: Tenant, params: PageParams) {
      const page = yield* pages.parse("agents", params)
      const rows = yield* repo.page(tenant, page)
      const { rows: kept, pagination } = toPage(rows, page)
      return { agents: kept.map(toAgent), pagination }
    })

    const update = Effect.fn("Agents.update")(function* (tenant: Tenant, id: AgentId, input: UpdateAgent) {
      return yield* Effect.gen(function* () {
        const found = yield* repo.find(tenant, id, { forUpdate: true })
        if (Option.isNone(found)) return yield* missing(id)
        const before = toAgent(found.value)
        const wanted: Partial<Pick<Agent, Editable>> = {
          ...(input.name !== undefined && input.name !== before.name
            ? { name: input.name, slug: yield* slugFor(tenant, input.name) }
            : {}),
          ...(input.instructions !== undefined ? { instructions: input.instructions } : {}),
          ...(input.welcome_message !== undefined ? { welcome_message: input.welcome_message } : {}),
          ...(input.allowed_origins !== undefined ? { allowed_origins: distinct(input.allowed_origins) } : {}),
          ...(input.knowledge_refresh !== undefined
            ? { knowledge_refresh: { ...before.knowledge_refresh, ...input.knowledge_refresh } satisfies KnowledgeRefresh }
            : {}),
          ...(input.widget !== undefined ? { widget: { ...before.widget, ...input.widget } satisfies WidgetSettings } : {}),
          ...(input.language !== undefined ? { language: input.language } : {})
        }
        const changes: Record<string, { from: unknown; to: unknown }> = {}
        for (const [field, to] of Object.entries(wanted) as Array<[Editable, unknown]>) {
          if (!sameValue(before[field], to)) changes[field] = { from: before[field], to }
        }
        if (Object.keys(changes).length === 0) return before
        const { knowledge_refresh: refresh, ...changed } = Object.fromEntries(Object.entries(changes).map(([k, v]) => [k, v.to]))
        const at = yield* now
        const schedule = wanted.knowledge_refresh?.schedule
        const agent = toAgent(
          yield* repo.update(
            id,
            {
              ...changed,
              ...(refresh === undefined || wanted.knowledge_refresh === undefined
                ? {}
                : {
                    gone_grace_days: wanted.knowledge_refresh.gone_grace_days,
                    // a schedule set anew starts its period now; the grace alone changes no run
                    ...(schedule !== undefined && schedule !== before.knowledge_refresh.schedule
                      ? { refresh_schedule: schedule, refresh_next_at: firstRun(schedule, at) }
                      : {})
                  })
            },
            at
          )
        )
        yield* outbox.emit({ ...tenant, type: "agent.updated", data: { agent, changes } })
        return agent
      }).pipe(tx, retryOnSlugRace)
    })

    const remove = Effect.fn("Agents.delete")(function* (tenant: Tenant, id: AgentId) {
      return yield* Effect.gen(function* () {
        const found = yield* repo.find(tenant, id, { forUpdate: true })
        if (Option.isNone(found)) return yield* missing(id)
        yield* repo.softDelete(id, yield* now)
        yield* outbox.emit({ ...tenant, type: "agent.deleted", data: { agent_id: id } })
        return { id, object: "agent" as const, deleted: true as const }
      }).pipe(tx)
    })

    /** Whether the tenant has this agent (not deleted): the first check of another area's call on an agent. */
    const exists = (tenant: Tenant, id: AgentId): Effect.Effect<boolean> => Effect.map(repo.find(tenant, id), Option.isSome)

    return { create, retrieve, resolve, list, update, remove, exists } as const
  }),
  dependencies: [AgentsRepo.Default]
}) {}
