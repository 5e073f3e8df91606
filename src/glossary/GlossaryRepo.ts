/**
 * SQL for glossary terms, through the `db/Sql.ts` helpers (rows decoded,
 * database failures defects). Every query is scoped to one workspace,
 * environment and agent; a term is found regardless of case.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { GlossaryTerm } from "../../schema/Glossary.js"
import type { AgentId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { decodeAll, decodeOne, decodeSingle, execute, lockWith, transaction } from "../db/Sql.js"
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

const CountRow = Schema.Struct({ n: Schema.NumberFromString })
const SpellingRow = Schema.Struct({ term: Schema.String })
const columns = "term, definition, synonyms, case_sensitive, enabled, created_at, updated_at"

export class GlossaryRepo extends Effect.Service<GlossaryRepo>()("Glossary/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)
    const jsonb = (value: unknown) => sql`${JSON.stringify(value)}::text::jsonb`
    const scoped = (tenant: Tenant, agentId: AgentId) =>
      sql`workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and agent_id = ${agentId}`

    const inTransaction = transaction(sql)
    /** Serialises writers of one agent's glossary, across instances; inside a transaction. */
    const lock = (agentId: AgentId) => lockWith(sql)(`glossary:${agentId}`)

    const list = (tenant: Tenant, agentId: AgentId) =>
      decodeAll(TermRow, sql`select ${cols} from glossary_terms where ${scoped(tenant, agentId)} order by lower(term), term`)

    const enabledTerms = (tenant: Tenant, agentId: AgentId): Effect.Effect<ReadonlyArray<EnabledTerm>> =>
      decodeAll(
        TermRow,
        sql`select ${cols} from glossary_terms where ${scoped(tenant, agentId)} and enabled order by lower(term), term`
      ).pipe(
        Effect.map((rows) =>
          rows.map((r) => ({ term: r.term, definition: r.definition, synonyms: r.synonyms, case_sensitive: r.case_sensitive }))
        )
      )

    const find = (tenant: Tenant, agentId: AgentId, term: string) =>
      decodeOne(
        TermRow,
        sql`select ${cols} from glossary_terms where ${scoped(tenant, agentId)} and lower(term) = lower(${term})`
      )

    const size = (tenant: Tenant, agentId: AgentId) =>
      decodeSingle(CountRow, sql`select count(*)::text as n from glossary_terms where ${scoped(tenant, agentId)}`).pipe(
        Effect.map((r) => r.n)
      )

    /** Inserts the term unless the glossary holds it in any case (then none). */
    const insert = (tenant: Tenant, agentId: AgentId, values: TermValues, at: Date) =>
      decodeOne(TermRow, sql`
        insert into glossary_terms (workspace_id, environment, agent_id, term, definition, synonyms, case_sensitive,
          enabled, created_at, updated_at)
        values (${tenant.workspaceId}, ${tenant.environment}, ${agentId}, ${values.term}, ${values.definition},
          ${jsonb(values.synonyms)}, ${values.case_sensitive}, ${values.enabled}, ${at}, ${at})
        on conflict (agent_id, lower(term)) do nothing
        returning ${cols}`)

    /**
     * Deletes every term and inserts `terms` in one statement each; returns how
     * many were inserted (fewer than given when two of them differ only in case).
     */
    const replaceAll = (tenant: Tenant, agentId: AgentId, terms: ReadonlyArray<TermValues>, at: Date) =>
      Effect.gen(function* () {
        yield* execute(sql`delete from glossary_terms where ${scoped(tenant, agentId)}`)
        if (terms.length === 0) return 0
        const rows = yield* decodeAll(SpellingRow, sql`
          insert into glossary_terms (workspace_id, environment, agent_id, term, definition, synonyms, case_sensitive,
            enabled, created_at, updated_at)
          select ${tenant.workspaceId}, ${tenant.environment}, ${agentId}, t.term, t.definition, t.synonyms,
            t.case_sensitive, t.enabled, ${at}, ${at}
          from jsonb_to_recordset(${jsonb(terms)}) as t(term text, definition text, synonyms jsonb,
            case_sensitive boolean, enabled boolean)
          on conflict (agent_id, lower(term)) do nothing
          returning term`)
        return rows.length
      })

    const update = (
      tenant: Tenant,
      agentId: AgentId,
      term: string,
      changes: Partial<Omit<TermValues, "term">>,
      at: Date
    ) =>
      decodeOne(TermRow, sql`
        update glossary_terms set ${sql.update({
          ...(changes.definition !== undefined ? { definition: changes.definition } : {}),
          ...(changes.case_sensitive !== undefined ? { case_sensitive: changes.case_sensitive } : {}),
          ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
          updated_at: at
        })}
        ${changes.synonyms !== undefined ? sql`, synonyms = ${jsonb(changes.synonyms)}` : sql.literal("")}
        where ${scoped(tenant, agentId)} and lower(term) = lower(${term})
        returning ${cols}`)

    /** Removes the term; its stored spelling, or none when the glossary does not hold it. */
    const remove = (tenant: Tenant, agentId: AgentId, term: string) =>
      decodeOne(
        SpellingRow,
        sql`delete from glossary_terms where ${scoped(tenant, agentId)} and lower(term) = lower(${term}) returning term`
      ).pipe(Effect.map(Option.map((row) => row.term)))

    return { transaction: inTransaction, lock, list, enabledTerms, find, size, insert, replaceAll, update, remove } as const
  })
}) {}
