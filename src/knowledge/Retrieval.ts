/**
 * Retrieval for replies: the best passages and Q&A items of an agent for a
 * question, hybrid (text search and embeddings), at a cost that does not grow
 * with the agent's knowledge.
 *
 * Candidates: the nearest embeddings through the HNSW index where pgvector
 * exists (`VectorIndex`), and the best text matches through the GIN indexes of
 * the stored `tsvector`s, taken in tiers (`tiers`: rows with every word of the
 * question, with any of its rare words, with pairs of its common ones), each
 * bounded. Which words are common, and how rare each is, the tables' word
 * statistics tell (`WordStatistics.ts`): a common word's index entries are
 * many, so it never draws candidates alone. Without pgvector the text candidates are all
 * there is, re-ranked by cosine over their `real[]`.
 *
 * Scores are absolute, comparable across questions: part embedding cosine,
 * part the share of the question's words the row holds, each word weighing
 * its rarity in the table (BM25's idf), with a little asked of their forms
 * and nearness (`best`). A question whose best score is under
 * `relevanceThreshold` has no answer in the knowledge.
 *
 * Languages: a question is searched in its own language (`AgentLanguages.ts`: detected among the agent's
 * knowledge's), its words stemmed by that language's configuration then folded (lower case, accents off), as
 * `search_tsv` holds every row's words (migration 0048); hits in the question's language that are relevant come
 * first.
 *
 * Enabled glossary terms expand the query: a term or any synonym found in it
 * adds the others. A provider outage while the question is embedded is
 * `AiUnavailable` (503); any other provider failure is ours, a defect.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AiUnavailable } from "../../schema/Errors.js"
import type { AgentId } from "../../schema/Ids.js"
import { Ai } from "../../layers/Ai.js"
import { providerFailure } from "../AiFailure.js"
import { type LanguageTag, textSearchConfig } from "../../schema/Languages.js"
import type { Tenant } from "../../schema/Tenant.js"
import { realArrayLiteral } from "../db/Columns.js"
import { decodeAll, execute, transaction } from "../db/Sql.js"
import { Glossary } from "../glossary/Glossary.js"
import { AgentLanguages } from "../languages/AgentLanguages.js"
import { visibleChunk } from "./ChunkDraftsRepo.js"
import { covers } from "./Relevance.js"
import { VectorIndex } from "./VectorIndex.js"
import { expandQuery, formsPattern, type GlossaryTerm, searchWords, tiers } from "./QueryWords.js"
import { type TableWords, wordsOf } from "./WordStatisticsRepo.js"

export interface Hit {
  readonly kind: "qa" | "chunk"
  readonly id: string
  readonly sourceId: string | null
  /** The chunk's text, or the Q&A item's answer. */
  readonly text: string
  readonly question: string | null
  /** The language its words are indexed in (null: written before migration 0048, not yet re-indexed). */
  readonly language: LanguageTag | null
  /** 0..1, comparable across questions: embedding cosine and the share of the question's words found. */
  readonly score: number
  /** The embedding cosine to the question (clamped at 0). */
  readonly cosine: number
  /** The score at least `relevanceThreshold`, and the hit covering the question (`Relevance.ts`). */
  readonly relevant: boolean
}

const Row = Schema.Struct({
  kind: Schema.Literal("qa", "chunk"),
  id: Schema.String,
  source_id: Schema.NullOr(Schema.String),
  text: Schema.String,
  question: Schema.NullOr(Schema.String),
  cosine: Schema.Number,
  language: Schema.NullOr(Schema.String),
  score: Schema.Number
})
type Row = typeof Row.Type

const WordLexemes = Schema.Struct({ word: Schema.String, lexemes: Schema.Array(Schema.String) })

/** A word of the question as the text-search indexes hold it (stemmed), with the question's forms of it. */
export interface Lexeme {
  readonly lexeme: string
  readonly forms: ReadonlyArray<string>
}

/**
 * A hit at or above this score that covers the question (`Relevance.ts`) is
 * relevant: with none, the reply is the fallback and an `escalation`. Probed with the local embedder and the
 * retrieval benchmark's questions (scripts/bench/retrieval.ts).
 */
export const relevanceThreshold = 0.3

// the score's parts: embedding cosine (clamped at 0) and the words part (see `best`)
const cosineWeight = 0.4
const wordsWeight = 0.6
// of the words part: the share that asks for the question's very forms ("hares", not "hare" alone), and the share
// that asks for its neighbouring words near each other ("station is at Calmardun", not "east of Calmardun")
const exactShare = 0.15
const closeShare = 0.15

// candidates a side: nearest embeddings, and best text matches of each tier, read at most `tierScan` a tier
const nearest = 20
const textBest = 40
const tierScan = 200
// the words of a question that count
const maxLexemes = 12
// a word the word statistics put in more rows of a table than this is common there (see `tiers`)
const commonRows = 300

const outage = providerFailure((message) => new AiUnavailable({ message }))

export class Retrieval extends Effect.Service<Retrieval>()("Knowledge/Retrieval", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ai = yield* Ai
    const glossary = yield* Glossary
    const { plan } = yield* VectorIndex
    const languages = yield* AgentLanguages

    // each table as one agent's rows, with its text and question columns named alike, and the text its `tsv` holds
    const tables = {
      chunk: {
        table: "knowledge_chunks" as const, name: sql("knowledge_chunks"), text: sql`content`, question: sql`null::text`,
        searched: sql`c.content`, visible: sql.literal(`and ${visibleChunk}`)
      },
      qa: {
        table: "qa_items" as const, name: sql("qa_items"), text: sql`answer`, question: sql`question`,
        searched: sql`c.question || ' ' || c.answer`, visible: sql.literal("")
      }
    }
    type Table = (typeof tables)[keyof typeof tables]

    const ofAgent = (tenant: Tenant, agentId: AgentId) =>
      sql`agent_id = ${agentId} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}`

    /** The question's words as the text-search indexes hold them (stemmed, stop words out), with their forms. */
    const lexemesOf = (text: string, language: LanguageTag) =>
      Effect.map(
        decodeAll(
          WordLexemes,
          sql`select w as word,
              tsvector_to_array(search_fold(to_tsvector(${textSearchConfig(language)}::regconfig, w)::text)::tsvector) as lexemes
            from unnest(string_to_array(${text}, ' ')) with ordinality as u(w, i)
            order by i`
        ),
        (rows) => {
          const forms = new Map<string, Array<string>>()
          for (const { word, lexemes } of rows) {
            for (const lexeme of lexemes) forms.set(lexeme, [...(forms.get(lexeme) ?? []), word])
          }
          const lexemes = [...forms.keys()]
            .filter((l) => /^[\p{L}\p{N}]+$/u.test(l))
            .sort()
            .slice(0, maxLexemes)
            .map((lexeme): Lexeme => ({ lexeme, forms: forms.get(lexeme)! }))
          const kept = new Set(lexemes.map((l) => l.lexeme))
          // the question's words in order, stop words out: each one beside the next makes a pair
          const sequence = rows.flatMap((row) => row.lexemes.slice(0, 1)).filter((l) => kept.has(l))
          const pairs: Array<readonly [string, string]> = []
          for (let i = 0; i + 1 < sequence.length; i++) {
            const pair = [sequence[i]!, sequence[i + 1]!] as const
            if (pair[0] !== pair[1] && !pairs.some(([a, b]) => a === pair[0] && b === pair[1])) pairs.push(pair)
          }
          return { lexemes, pairs }
        }
      )

    // literal, not a parameter: the statement must spell the HNSW index's expression and predicate as they are
    const dims = (hnsw: { readonly dimensions: number }) => sql.literal(String(hnsw.dimensions))

    /** The best rows of one table, scored, at most `limit`. */
    const best = (
      table: Table,
      tenant: Tenant,
      agentId: AgentId,
      vector: ReadonlyArray<number>,
      words: ReadonlyArray<Lexeme>,
      pairs: ReadonlyArray<readonly [string, string]>,
      stats: TableWords,
      limit: number
    ) => {
      const lexemes = words.map((w) => w.lexeme)
      const common = new Set(lexemes.filter((l) => (stats.words[l] ?? 0) > commonRows))
      const agent = ofAgent(tenant, agentId)
      const anyWord = lexemes.join(" | ")
      // `is true`: the agent's rows are many, its matches of a tier few; the planner, unable to tell, would
      // rather walk the agent's index than the text-search one
      const textSide = tiers(lexemes, common).map(
        (tier) => sql`(select id, ts_rank(search_tsv, to_tsquery('simple', ${anyWord})) as rank from ${table.name}
          where search_tsv @@ to_tsquery('simple', ${tier.query}) and (${agent}) is true ${table.visible}
          ${tier.ranked ? sql`order by rank desc` : sql``} limit ${tierScan})`
      )
      const textIds =
        textSide.length === 0
          ? sql`select null::text as id where false`
          : sql`(select id from (${sql.join(" union ", false)(textSide)}) as matches
              order by rank desc limit ${textBest})`
      const asVector = `[${vector.join(",")}]`
      const cosine =
        plan._tag === "Hnsw"
          ? sql`greatest(0, 1 - (c.embedding::vector(${dims(plan)}) <=> ${asVector}::vector))`
          : sql`greatest(0, (select sum(a * b) from unnest(c.embedding, ${realArrayLiteral(vector)}::real[]) as pair(a, b)))`
      const vectorIds =
        plan._tag === "Hnsw"
          ? sql`union (select id from ${table.name}
              where ${agent} and cardinality(embedding) = ${dims(plan)} ${table.visible}
              order by embedding::vector(${dims(plan)}) <=> ${asVector}::vector(${dims(plan)}) limit ${nearest})`
          : sql``
      const lexemeArray = `{${lexemes.join(",")}}`
      // each form of the question's words beside its lexeme: a row holding the very form says a little more
      const formLexemes = `{${words.flatMap((w) => w.forms.map(() => w.lexeme)).join(",")}}`
      const forms = `{${words.flatMap((w) => w.forms).join(",")}}`
      // the forms a row holds, read from its text in one pass (`formsPattern`)
      const formsIn = formsPattern(words.flatMap((w) => w.forms))
      // each pair of the question's neighbouring words, found when the row holds them as near, in that order
      const near = `{${pairs.map(([a, b]) => `"${[1, 2, 3].map((d) => `${a} <${d}> ${b}`).join(" | ")}"`).join(",")}}`
      const firsts = `{${pairs.map(([a]) => a).join(",")}}`
      const seconds = `{${pairs.map(([, b]) => b).join(",")}}`
      // rows holding each word: the word statistics' estimate where they list it, else as many as the candidates holding it
      const listedRows = `{${lexemes.map((l) => stats.words[l] ?? "NULL").join(",")}}`
      // a word weighs ln(1 + rows / rows holding it), as BM25's rarity: a place's name, held by its own passages
      // only, counts for more than "market". A word no row holds ("inhabitants" where passages say "people") weighs
      // as the question's rarest word that some row holds: it says the question asks what the knowledge may not
      // hold, without outweighing what it does hold. A row's words part is mostly the share of the question's weight
      // it holds (1 with every word, whatever the question); a little, the share it holds in the question's very
      // forms, and the share of the question's neighbouring pairs (each weighing its two words) it holds within
      // three positions in the same order (a question of one word has no pairs: that share is the held one). The
      // last two decide between rows that hold the same words, as a stemmed word or a word far off cannot.
      const total = sql`greatest(${stats.rows}::float8, (select count(*) from candidates))`
      return sql`(
        with candidates as (
          select c.id, c.source_id, c.${table.text} as text, ${table.question} as question, c.language, ${cosine} as cosine,
            array(select l from unnest(${lexemeArray}::text[]) as l where c.search_tsv @@ l::tsquery) as held,
            array(select distinct f.l from unnest(${formLexemes}::text[], ${forms}::text[]) as f(l, form)
              where search_fold(f.form) = any(seen.forms)) as exact,
            array(select q from unnest(${near}::text[]) as q where c.search_tsv @@ q::tsquery) as close
          from ${table.name} as c
            cross join lateral (select array(select search_fold(m[1])
              from regexp_matches(${table.searched}, ${formsIn}::text, 'gi') as m) as forms) as seen
          where c.id in (${textIds} ${vectorIds})
        ),
        held_by as (
          select w.l, coalesce(w.listed, (select count(*) from candidates where w.l = any(held))) as rows
          from unnest(${lexemeArray}::text[], ${listedRows}::float8[]) as w(l, listed)
        ),
        weights as (
          select l, case when rows > 0 then ln(1 + ${total} / rows)
            else (select max(ln(1 + ${total} / rows)) from held_by where rows > 0) end as weight
          from held_by
        ),
        pairs as (
          select p.q, (select sum(weight) from weights where l in (p.a, p.b)) as weight
          from unnest(${near}::text[], ${firsts}::text[], ${seconds}::text[]) as p(q, a, b)
        ),
        shares as (
          select id,
            coalesce((select sum(weight) from weights where l = any(held)) / nullif((select sum(weight) from weights), 0), 0) as held,
            coalesce((select sum(weight) from weights where l = any(held) and l = any(exact)) / nullif((select sum(weight) from weights), 0), 0) as exact,
            coalesce((select sum(weight) from pairs where q = any(close)), 0) / nullif((select sum(weight) from pairs), 0) as close
          from candidates
        )
        select id, source_id, text, question, cosine, language,
          ${cosineWeight} * cosine + ${wordsWeight} * (
            (1 - ${exactShare}::float8 - ${closeShare}::float8) * s.held + ${exactShare}::float8 * s.exact
              + ${closeShare}::float8 * coalesce(s.close, s.held)) as score
        from candidates join shares as s using (id)
        order by score desc limit ${limit})`
    }

    /**
     * The planner is told to keep to the indexes: with a row-count estimate off it would rather read every row of
     * the agent than the GIN index, and a filtered HNSW scan goes on past its first candidates until enough are
     * the agent's (pgvector's iterative scan).
     */
    const indexed = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      transaction(sql)(
        Effect.zipRight(
          execute(
            plan._tag === "Hnsw"
              ? sql`select set_config('enable_seqscan', 'off', true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`
              : sql`select set_config('enable_seqscan', 'off', true)`
          ),
          self
        )
      )

    /**
     * `terms`: the agent's enabled glossary terms when the caller has read them already (else read here).
     * `subject`: what a follow-up points back to (`FollowUp.ts`); a hit covering it covers the question.
     */
    const search = Effect.fn("Retrieval.search")(function* (
      tenant: Tenant,
      agentId: AgentId,
      query: string,
      options: { readonly limit?: number; readonly terms?: ReadonlyArray<GlossaryTerm>; readonly subject?: string | null } = {}
    ) {
      const limit = options.limit ?? 5
      const terms = options.terms ?? (yield* glossary.enabledTerms(tenant, agentId))
      const expanded = expandQuery(query, terms)
      const [embedding] = yield* Effect.catchTag(ai.embed([expanded]), "AiError", outage)
      const vector = (embedding ?? []).map((x) => (Number.isFinite(x) ? x : 0))
      const { language } = yield* languages.ofQuestion(agentId, query)
      return yield* indexed(
        Effect.gen(function* () {
          const { lexemes, pairs } = yield* lexemesOf(searchWords(expanded), language)
          if (lexemes.length === 0 && plan._tag === "TextCandidates") return []
          const stats = yield* wordsOf(sql, lexemes.map((l) => l.lexeme))
          const rows = yield* decodeAll(
            Row,
            sql`select 'qa' as kind, q.* from ${best(tables.qa, tenant, agentId, vector, lexemes, pairs, stats.qa_items, limit)} as q
              union all
              select 'chunk' as kind, c.* from ${best(tables.chunk, tenant, agentId, vector, lexemes, pairs, stats.knowledge_chunks, limit)} as c`
          )
          const hits = rows.map((row) => toHit(row, expanded, options.subject ?? null, language)).sort((a, b) => b.score - a.score)
          return inLanguageFirst(hits, language).slice(0, limit)
        })
      )
    })

    return { search } as const
  }),
  dependencies: [Glossary.Default, VectorIndex.Default, AgentLanguages.Default]
}) {}

/**
 * Hits sorted by score, the relevant ones in the question's language moved first (in score order): an agent whose
 * knowledge mixes languages answers a visitor from the passages of the visitor's language.
 */
export const inLanguageFirst = (hits: ReadonlyArray<Hit>, language: LanguageTag): ReadonlyArray<Hit> => {
  const first = (hit: Hit) => hit.language === language && hit.relevant
  return [...hits.filter(first), ...hits.filter((hit) => !first(hit))]
}

/**
 * The coverage rule reads a question's words with the English stemmer and stop words; a question in another
 * language is judged by its score alone.
 */
const toHit = (row: Row, query: string, subject: string | null, language: LanguageTag): Hit => ({
  kind: row.kind,
  id: row.id,
  sourceId: row.source_id,
  text: row.text,
  question: row.question,
  language: row.language as LanguageTag | null,
  score: row.score,
  cosine: row.cosine,
  relevant:
    row.score >= relevanceThreshold &&
    (language !== "en" || covers(row, query) || (subject !== null && covers(row, subject)))
})
