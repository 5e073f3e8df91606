/**
 * SQL of the text-search re-indexing (`Reindex.ts`, migration 0048): the one progress row of
 * `text_search_reindex`, and the batches that give rows written before the migration their language and
 * `search_tsv` (an update of `language` fires the trigger that fills it).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { LanguageTag } from "../../schema/Languages.js"
import { decodeAll, decodeSingle, execute } from "../db/Sql.js"

export const ReindexPhase = Schema.Literal("sources", "chunks", "qa")
export type ReindexPhase = typeof ReindexPhase.Type

export const ReindexStatusName = Schema.Literal("none", "queued", "running", "done", "failed")

export const ReindexRow = Schema.Struct({
  status: ReindexStatusName,
  phase: Schema.NullOr(ReindexPhase),
  cursor: Schema.NullOr(Schema.String),
  done: Schema.NumberFromString,
  total: Schema.NumberFromString,
  started_at: Schema.NullOr(Schema.DateFromSelf),
  finished_at: Schema.NullOr(Schema.DateFromSelf),
  last_error: Schema.NullOr(Schema.String)
})
export type ReindexRow = typeof ReindexRow.Type

/** A source written before migration 0048: its agent's setting and a sample of its text, to detect its language. */
export const OldSource = Schema.Struct({ id: Schema.String, setting: Schema.String, sample: Schema.NullOr(Schema.String) })
export type OldSource = typeof OldSource.Type

const Batch = Schema.Struct({ last: Schema.NullOr(Schema.String), rows: Schema.Number })

const columns = "status, phase, cursor, done::text as done, total::text as total, started_at, finished_at, last_error"

export class ReindexRepo extends Effect.Service<ReindexRepo>()("Knowledge/ReindexRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    const current = decodeSingle(ReindexRow, sql`select ${cols} from text_search_reindex`)
    const lock = decodeSingle(ReindexRow, sql`select ${cols} from text_search_reindex for update`)

    /** Queued (by the migration) or failed: now running, its job about to be queued. */
    const begin = (at: Date) =>
      decodeSingle(ReindexRow, sql`
        update text_search_reindex set status = 'running', started_at = coalesce(started_at, ${at}), last_error = null,
          finished_at = null, updated_at = ${at}
        returning ${cols}`)

    /** The next `limit` sources after `cursor` whose language is not known yet, with a sample of their text. */
    const oldSources = (cursor: string, limit: number) =>
      decodeAll(OldSource, sql`
        select s.id, a.language as setting, coalesce(left(s.content, 3000),
          (select string_agg(c.content, ' ') from (select content from knowledge_chunks
            where source_id = s.id order by position limit 3) as c),
          (select string_agg(q.question || ' ' || q.answer, ' ') from (select question, answer from qa_items
            where source_id = s.id order by id limit 10) as q)) as sample
        from knowledge_sources as s join agents as a on a.id = s.agent_id
        where s.id > ${cursor} and s.language is null and s.status = 'indexed'
        order by s.id limit ${limit}`)

    const setSourceLanguages = (rows: ReadonlyArray<{ readonly id: string; readonly language: LanguageTag }>) =>
      rows.length === 0
        ? Effect.void
        : execute(sql`
            update knowledge_sources as s set language = v.language
            from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.language)}::text[]) as v(id, language)
            where s.id = v.id and s.language is null`)

    /**
     * The next `limit` rows of `table` after `cursor`, those not indexed yet given their language (their
     * source's, else their agent's, else English: the trigger's) and so their `search_tsv`. The last id read.
     */
    const indexRows = (table: "knowledge_chunks" | "qa_items", cursor: string, limit: number) => {
      const name = sql(table)
      return decodeSingle(Batch, sql`
        with batch as (select id from ${name} where id > ${cursor} order by id limit ${limit}),
        updated as (
          update ${name} as t set language = t.language from batch
          where t.id = batch.id and t.search_tsv is null
          returning t.id
        )
        select (select max(id) from batch) as last, (select count(*)::int from batch) as rows`)
    }

    const advance = (phase: ReindexPhase, cursor: string | null, count: number, at: Date) =>
      execute(sql`
        update text_search_reindex set phase = ${phase}, cursor = ${cursor}, done = done + ${count}, updated_at = ${at}
        where status = 'running'`)

    const finish = (at: Date) =>
      execute(sql`
        update text_search_reindex set status = 'done', phase = null, cursor = null, total = greatest(total, done),
          finished_at = ${at}, last_error = null, updated_at = ${at}
        where status = 'running'`)

    const fail = (error: string, at: Date) =>
      execute(sql`
        update text_search_reindex set status = 'failed', last_error = ${error}, finished_at = ${at}, updated_at = ${at}
        where status = 'running'`)

    const retrying = (error: string, at: Date) =>
      execute(sql`update text_search_reindex set last_error = ${error}, updated_at = ${at} where status = 'running'`)

    return { current, lock, begin, oldSources, setSourceLanguages, indexRows, advance, finish, fail, retrying } as const
  })
}) {}
