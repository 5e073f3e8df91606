/**
 * SQL for glossary terms, rows decoded with Schema. Every query is scoped to one
 * workspace, environment and agent; a term is found regardless of case.
 * Database failures are defects from here on.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { GlossaryTerm } from "../../schema/Glossary.js"
import { Environment } from "../../schema/Auth.js"
import { AgentId, WorkspaceId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import * as Sql from "../db/Sql.js"
import { iso } from "../Time.js"

export const TermRow = Schema.Struct({
  term: Schema.String,
  definition: Schema.NullOr(Schema.String),
  synonyms: Schema.Array(Schema.String),
  case_sensitive: Schema.Boolean,
  enabled: Schema.Boolean,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type TermRow = typeof TermRow.Type

/** A term's settings as stored, without its times. */
export interface TermValues {
  readonly term: string
  readonly definition: string | null
  readonly synonyms: ReadonlyArray<string>
  readonly case_sensitive: boolean
  readonly enabled: boolean
}

/** What query expansion needs of a term. */
export interface EnabledTerm {
  readonly term: string
  readonly definition: string | null
  readonly synonyms: ReadonlyArray<string>
  readonly case_sensitive: boolean
}

export const toTerm = (row: TermRow): GlossaryTerm => ({
  object: "glossary_term",
  term: row.term,
  definition: row.definition,
  synonyms: row.synonyms,
  case_sensitive: row.case_sensitive,
  enabled: row.enabled,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

const Scope = Schema.Struct({ workspaceId: WorkspaceId, environment: Environment, agentId: AgentId })
const ScopedTerm = Schema.Struct({ ...Scope.fields, term: Schema.String })
const columns = "term, definition, synonyms, case_sensitive, enabled, created_at, updated_at"

export class GlossaryRepo extends Effect.Service<GlossaryRepo>()("Glossary/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)
    const jsonb = (value: unknown) => sql`${JSON.stringify(value)}::text::jsonb`
    const scoped = (s: typeof Scope.Encoded) =>
      sql`workspace_id = ${s.workspaceId} and environment = ${s.environment} and agent_id = ${s.agentId}`

    const all = SqlSchema.findAll({
      Request: Scope,
      Result: TermRow,
      execute: (s) => sql`select ${cols} from glossary_terms where ${scoped(s)} order by lower(term), term`
    })

    const enabled = SqlSchema.findAll({
      Request: Scope,
      Result: TermRow,
      execute: (s) => sql`select ${cols} from glossary_terms where ${scoped(s)} and enabled order by lower(term), term`
    })

    const findOne = SqlSchema.findOne({
      Request: ScopedTerm,
      Result: TermRow,
      execute: (s) => sql`select ${cols} from glossary_terms where ${scoped(s)} and lower(term) = lower(${s.term})`
    })

    const count = SqlSchema.single({
      Request: Scope,
      Result: Schema.Struct({ n: Schema.NumberFromString }),
      execute: (s) => sql`select count(*)::text as n from glossary_terms where ${scoped(s)}`
    })

    const scope = (tenant: Tenant, agentId: AgentId) => ({ ...tenant, agentId })
    const transaction = Sql.transaction(sql)
    /** Serialises writers of one agent's glossary, across instances; inside a transaction. */
    const lock = (agentId: AgentId) => Sql.lockWith(sql)(`glossary:${agentId}`)

    const list = (tenant: Tenant, agentId: AgentId) => all(scope(tenant, agentId)).pipe(Effect.orDie)

    const enabledTerms = (tenant: Tenant, agentId: AgentId): Effect.Effect<ReadonlyArray<EnabledTerm>> =>
      enabled(scope(tenant, agentId)).pipe(
        Effect.map((rows) =>
          rows.map((r) => ({ term: r.term, definition: r.definition, synonyms: r.synonyms, case_sensitive: r.case_sensitive }))
        ),
        Effect.orDie
      )

    const find = (tenant: Tenant, agentId: AgentId, term: string) =>
      findOne({ ...scope(tenant, agentId), term }).pipe(Effect.orDie)

    const size = (tenant: Tenant, agentId: AgentId) =>
      count(scope(tenant, agentId)).pipe(Effect.map((r) => r.n), Effect.orDie)

    /** Inserts the term unless the glossary holds it in any case (then none). */
    const insert = (tenant: Tenant, agentId: AgentId, values: TermValues, at: Date) =>
      SqlSchema.findOne({
        Request: Schema.Void,
        Result: TermRow,
        execute: () => sql`
          insert into glossary_terms (workspace_id, environment, agent_id, term, definition, synonyms, case_sensitive,
            enabled, created_at, updated_at)
          values (${tenant.workspaceId}, ${tenant.environment}, ${agentId}, ${values.term}, ${values.definition},
            ${jsonb(values.synonyms)}, ${values.case_sensitive}, ${values.enabled}, ${at}, ${at})
          on conflict (agent_id, lower(term)) do nothing
          returning ${cols}`
      })(undefined).pipe(Effect.orDie)

    /**
     * Deletes every term and inserts `terms` in one statement each; returns how
     * many were inserted (fewer than given when two of them differ only in case).
     */
    const replaceAll = (tenant: Tenant, agentId: AgentId, terms: ReadonlyArray<TermValues>, at: Date) =>
      Effect.gen(function* () {
        yield* sql`delete from glossary_terms where ${scoped(scope(tenant, agentId))}`
        if (terms.length === 0) return 0
        const rows = yield* sql<{ readonly term: string }>`
          insert into glossary_terms (workspace_id, environment, agent_id, term, definition, synonyms, case_sensitive,
            enabled, created_at, updated_at)
          select ${tenant.workspaceId}, ${tenant.environment}, ${agentId}, t.term, t.definition, t.synonyms,
            t.case_sensitive, t.enabled, ${at}, ${at}
          from jsonb_to_recordset(${jsonb(terms)}) as t(term text, definition text, synonyms jsonb,
            case_sensitive boolean, enabled boolean)
          on conflict (agent_id, lower(term)) do nothing
          returning term`
        return rows.length
      }).pipe(Effect.orDie)

    const update = (
      tenant: Tenant,
      agentId: AgentId,
      term: string,
      changes: Partial<Omit<TermValues, "term">>,
      at: Date
    ) =>
      SqlSchema.findOne({
        Request: Schema.Void,
        Result: TermRow,
        execute: () => sql`
          update glossary_terms set ${sql.update({
            ...(changes.definition !== undefined ? { definition: changes.definition } : {}),
            ...(changes.case_sensitive !== undefined ? { case_sensitive: changes.case_sensitive } : {}),
            ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
            updated_at: at
          })}
          ${changes.synonyms !== undefined ? sql`, synonyms = ${jsonb(changes.synonyms)}` : sql.literal("")}
          where ${scoped(scope(tenant, agentId))} and lower(term) = lower(${term})
          returning ${cols}`
      })(undefined).pipe(Effect.orDie)

    /** Removes the term; its stored spelling, or none when the glossary does not hold it. */
    const remove = (tenant: Tenant, agentId: AgentId, term: string) =>
      SqlSchema.findOne({
        Request: Schema.Void,
        Result: Schema.Struct({ term: Schema.String }),
        execute: () => sql`
          delete from glossary_terms where ${scoped(scope(tenant, agentId))} and lower(term) = lower(${term})
          returning term`
      })(undefined).pipe(Effect.map(Option.map((row) => row.term)), Effect.orDie)

    return { transaction, lock, list, enabledTerms, find, size, insert, replaceAll, update, remove } as const
  })
}) {}
