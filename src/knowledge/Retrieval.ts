/**
 * Retrieval for replies: the best chunks and Q&A items of an agent for a
 * question. Hybrid: PostgreSQL full-text search plus vector similarity. Where
 * pgvector exists (PGlite always) the nearest neighbours by `<=>` join the
 * text-search candidates; elsewhere cosine is computed in SQL over the
 * `real[]` embeddings of the text-search candidates (topped up with the
 * agent's latest rows when text search finds few, so a paraphrase with no
 * shared word still has candidates). Enabled glossary terms expand the query:
 * a term or any synonym found in it adds the others. A provider outage while
 * the question is embedded is `AiUnavailable` (503); any other provider
 * failure is ours, a defect.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AiUnavailable } from "../../schema/Errors.js"
import type { AgentId } from "../../schema/Ids.js"
import { Ai } from "../../layers/Ai.js"
import { providerFailure } from "../AiFailure.js"
import { Database } from "../../layers/Database.js"
import type { Tenant } from "../../schema/Tenant.js"
import { realArrayLiteral } from "../db/Columns.js"
import { decodeAll } from "../db/Sql.js"
import { GlossaryRepo } from "../glossary/GlossaryRepo.js"
import { traced } from "../Performance.js"

export interface Hit {
  readonly kind: "qa" | "chunk"
  readonly id: string
  readonly sourceId: string | null
  /** The chunk's text, or the Q&A item's answer. */
  readonly text: string
  readonly question: string | null
  /** 0..1: 70% vector similarity, 30% text rank (relative to the best candidate). */
  readonly score: number
}

/**
 * A hit below this retrieval score is not relevant: with none above it the
 * reply is the fallback and an `escalation`. Scores are 70% embedding cosine
 * and 30% relative text rank. Probed with the local embedder on three Q&A:
 * paraphrases of one scored 0.48 to 0.64, the other (unrelated) Q&A of such a
 * question up to 0.21, and unrelated questions below 0.1. Here, not in
 * replies, so that the knowledge area's retrieval test can show it (an import
 * of the conversations area from here would close a loop between the two).
 */
export const relevanceThreshold = 0.35

export interface GlossaryTerm {
  readonly term: string
  readonly synonyms: ReadonlyArray<string>
  readonly case_sensitive: boolean
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const mentions = (query: string, phrase: string, caseSensitive: boolean) =>
  new RegExp(`(^|[^\\p{L}\\p{N}])${escape(phrase)}($|[^\\p{L}\\p{N}])`, caseSensitive ? "u" : "iu").test(query)

/** The query plus every term and synonym of each glossary entry it mentions. */
export const expandQuery = (query: string, terms: ReadonlyArray<GlossaryTerm>): string => {
  const extra: Array<string> = []
  for (const entry of terms) {
    const names = [entry.term, ...entry.synonyms]
    if (names.some((n) => n.trim() !== "" && mentions(query, n, entry.case_sensitive))) {
      extra.push(...names.filter((n) => !mentions(query, n, entry.case_sensitive)))
    }
  }
  return extra.length === 0 ? query : `${query} ${extra.join(" ")}`
}

/** An OR of the query's words for `to_tsquery` (the parser gets only letters and digits). */
export const orQuery = (text: string): string =>
  [...new Set(text.toLowerCase().normalize("NFD").replace(/\p{M}+/gu, "").match(/[a-z0-9]{2,}/g) ?? [])]
    .slice(0, 64)
    .join(" | ")

const Candidate = Schema.Struct({
  kind: Schema.Literal("qa", "chunk"),
  id: Schema.String,
  source_id: Schema.NullOr(Schema.String),
  text: Schema.String,
  question: Schema.NullOr(Schema.String),
  cosine: Schema.NullOr(Schema.Number),
  rank: Schema.NullOr(Schema.Number)
})
type Candidate = typeof Candidate.Type

const perSide = 20
const fallbackCandidates = 50
const topUp = 200

const outage = providerFailure((message) => new AiUnavailable({ message }))

export class Retrieval extends Effect.Service<Retrieval>()("Knowledge/Retrieval", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const database = yield* Database
    const ai = yield* Ai
    const glossary = yield* GlossaryRepo

    // each table as (id, source_id, text, question, embedding, document) for one agent
    const tables = {
      chunk: (tenant: Tenant, agentId: AgentId) => sql`(
        select id, source_id, content as text, null::text as question, embedding, tsv as document
        from knowledge_chunks
        where agent_id = ${agentId} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment})`,
      qa: (tenant: Tenant, agentId: AgentId) => sql`(
        select id, source_id, answer as text, question, embedding,
          to_tsvector('english', question || ' ' || answer) as document
        from qa_items
        where agent_id = ${agentId} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment})`
    }

    const withVector = (from: ReturnType<typeof tables.chunk>, vector: string, tsq: string) => sql`
      select id, source_id, text, question, 1 - (embedding::vector <=> ${vector}::vector) as cosine,
        ${tsq === "" ? sql`0::real` : sql`ts_rank(document, to_tsquery('english', ${tsq}))`} as rank
      from (
        (select * from ${from} as t order by embedding::vector <=> ${vector}::vector limit ${perSide})
        union all
        ${tsq === ""
          ? sql`(select * from ${from} as t where false)`
          : sql`(select * from ${from} as t where document @@ to_tsquery('english', ${tsq})
               order by ts_rank(document, to_tsquery('english', ${tsq})) desc limit ${perSide})`}
      ) as candidates`

    const withArrays = (from: ReturnType<typeof tables.chunk>, array: string, tsq: string) => sql`
      select id, source_id, text, question,
        (select sum(a * b) from unnest(embedding, ${array}::real[]) as pair(a, b)) as cosine, rank
      from (
        ${tsq === ""
          ? sql`(select *, 0::real as rank from ${from} as t where false)`
          : sql`(select *, ts_rank(document, to_tsquery('english', ${tsq})) as rank from ${from} as t
               where document @@ to_tsquery('english', ${tsq}) order by rank desc limit ${fallbackCandidates})`}
        union all
        (select *, 0::real as rank from ${from} as t limit ${topUp})
      ) as candidates`

    const candidates = (tenant: Tenant, agentId: AgentId, vector: ReadonlyArray<number>, tsq: string) => {
      const of = (kind: keyof typeof tables) =>
        database.vector
          ? withVector(tables[kind](tenant, agentId), `[${vector.join(",")}]`, tsq)
          : withArrays(tables[kind](tenant, agentId), realArrayLiteral(vector), tsq)
      // both tables in one statement: on PGlite every statement waits its turn on the one session
      return decodeAll(
        Candidate,
        sql`select 'qa' as kind, q.* from (${of("qa")}) as q union all select 'chunk' as kind, c.* from (${of("chunk")}) as c`
      )
    }

    /** `terms`: the agent's enabled glossary terms when the caller has read them already (else read here). */
    const search = traced("Retrieval.search")(function* (
      tenant: Tenant,
      agentId: AgentId,
      query: string,
      options: { readonly limit?: number; readonly terms?: ReadonlyArray<GlossaryTerm> } = {}
    ) {
      const limit = options.limit ?? 5
      const terms = options.terms ?? (yield* glossary.enabledTerms(tenant, agentId))
      const expanded = expandQuery(query, terms)
      const [embedding] = yield* Effect.catchTag(ai.embed([expanded]), "AiError", outage)
      const vector = (embedding ?? []).map((x) => (Number.isFinite(x) ? x : 0))
      const found = yield* candidates(tenant, agentId, vector, orQuery(expanded))
      const maxRank = Math.max(0, ...found.map((row) => row.rank ?? 0))
      const best = new Map<string, Hit>()
      for (const row of found) {
        const kind = row.kind
        const score = 0.7 * (row.cosine ?? 0) + 0.3 * (maxRank > 0 ? (row.rank ?? 0) / maxRank : 0)
        const previous = best.get(row.id)
        if (previous === undefined || previous.score < score) best.set(row.id, toHit(kind, row, score))
      }
      return [...best.values()].sort((a, b) => b.score - a.score).slice(0, limit)
    })

    return { search } as const
  }),
  dependencies: [GlossaryRepo.Default]
}) {}

const toHit = (kind: "qa" | "chunk", row: Candidate, score: number): Hit => ({
  kind,
  id: row.id,
  sourceId: row.source_id,
  text: row.text,
  question: row.question,
  score
})
