/**
 * How many rows of the searched tables (`knowledge_chunks`, `qa_items`) hold each of their common words: what
 * retrieval weighs a question's words by (`Retrieval.ts`: a common word draws no candidates alone, a rare one
 * counts for more). Kept here, in short steps, where the planner's statistics of the text-search columns used to be
 * read: ANALYZE took its sample of them in one statement, on PGlite's only session, and every other workspace's
 * statement waited behind it (migration 0046 stops it).
 *
 * Like ANALYZE: a table changed by more than 50 rows plus 10 % since its words were counted is counted again,
 * from every row when it holds at most `sampleRows` (read in key order, `stepRows` a statement), else from a
 * random sample of about `sampleRows` (page samples of about `stepRows` rows each; `Sizes`). The `keptWords` most
 * common words are kept, each with the rows estimated to hold it; in a sample, a word seen once is not listed
 * (a word not listed is rarer than those listed). Checked every `MAINTENANCE_MS`, on every database and every
 * instance: one that finds the words just counted by another does nothing.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Random from "effect/Random"
import * as Schema from "effect/Schema"
import { Database } from "../../layers/Database.js"
import { background } from "../Background.js"
import { AppConfig } from "../Config.js"
import { decodeAll, decodeSingle, execute } from "../db/Sql.js"
import { recordWords, type SearchedTable, searchedTables, Words } from "./WordStatisticsRepo.js"
import { supervise } from "../../layers/Supervise.js"

/** How many rows are read to count a table's words, how many a statement, and how many words are kept. */
export interface Sizes {
  readonly sampleRows: number
  readonly stepRows: number
  readonly keptWords: number
}

// ANALYZE's sample and list of common elements at the default statistics target, in steps a reader barely waits on
export const defaultSizes: Sizes = { sampleRows: 30_000, stepRows: 500, keptWords: 1_000 }

const State = Schema.Struct({
  table: Schema.Literal(...searchedTables),
  changes: Schema.Number,
  estimate: Schema.Number,
  counted_changes: Schema.NullOr(Schema.Number),
  counted_rows: Schema.NullOr(Schema.Number)
})

const Step = Schema.Struct({ rows: Schema.Number, last: Schema.NullOr(Schema.String), words: Words })

export interface Counted {
  readonly table: SearchedTable
  readonly rows: number
  readonly sampled: number
}

/** Counts the words of `table` now, and records them with `changes` (the table's count of changes so far). */
export const countWords = (table: SearchedTable, estimate: number, changes: number, sizes: Sizes = defaultSizes) =>
  Effect.gen(function* () {
    const { keptWords, sampleRows, stepRows } = sizes
    const sql = yield* SqlClient.SqlClient
    const name = sql(table)
    // one step: its rows' count, its last key, and how many of its rows hold each word
    const step = (rows: Statement.Fragment) =>
      sql`with step as (${rows})
        select (select count(*) from step)::int as rows, (select max(id) from step) as last,
          coalesce((select jsonb_object_agg(lexeme, n) from (
            select lexeme, count(*)::int as n from step cross join lateral unnest(tsvector_to_array(step.search_tsv)) as lexeme
            group by lexeme) as w), '{}') as words`
    const seen = new Map<string, number>()
    const add = (words: Record<string, number>) => {
      for (const [lexeme, n] of Object.entries(words)) seen.set(lexeme, (seen.get(lexeme) ?? 0) + n)
    }
    let sampled = 0
    let whole = estimate <= sampleRows
    if (whole) {
      // every row, in key order: the counts are exact (bounded, should the estimate be far behind the table)
      let last = ""
      for (let steps = 0; ; steps++) {
        if (steps >= (2 * sampleRows) / stepRows) {
          whole = false
          break
        }
        const got = yield* decodeSingle(
          Step,
          step(sql`select id, search_tsv from ${name} where id > ${last} order by id limit ${stepRows}`)
        )
        sampled += got.rows
        add(got.words)
        if (got.rows < stepRows || got.last === null) break
        last = got.last
      }
    } else {
      // pages drawn at random, about `stepRows` rows a statement, until the sample is taken
      const percent = Math.min(100, (100 * stepRows) / estimate)
      for (let steps = 0; sampled < sampleRows && steps < (2 * sampleRows) / stepRows; steps++) {
        const seed = yield* Random.nextIntBetween(0, 2 ** 31 - 1)
        const got = yield* decodeSingle(
          Step,
          step(sql`select id, search_tsv from ${name} tablesample system (${percent}) repeatable (${seed})`)
        )
        sampled += got.rows
        add(got.words)
      }
    }
    const rows = whole ? sampled : Math.max(estimate, sampled)
    const scale = sampled > 0 ? rows / sampled : 0
    const kept = [...seen]
      .filter(([, n]) => whole || n > 1)
      .sort(([a, n], [b, m]) => m - n || (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, keptWords)
    const listed = Object.fromEntries(kept.map(([lexeme, n]) => [lexeme, n * scale]))
    yield* recordWords(sql, { table, rows, sampled, changes, listed })
    return { table, rows, sampled } satisfies Counted
  })

/** One round: each table changed enough since its words were counted (or never counted) is counted again. */
export const countDueWords = (sizes: Sizes = defaultSizes) => Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const database = yield* Database
  // PGlite's session reports its counts of changes to the statistics views when it flushes them: at once, after this
  if (database.kind === "pglite") yield* execute(sql`select pg_stat_force_next_flush()`)
  const states = yield* decodeAll(
    State,
    sql`select c.relname as table, (s.n_tup_ins + s.n_tup_upd + s.n_tup_del)::float8 as changes,
        (case when c.reltuples >= 0 then c.reltuples else s.n_live_tup end)::float8 as estimate,
        w.changes as counted_changes, w.rows as counted_rows
      from pg_stat_user_tables as s join pg_class as c on c.oid = s.relid
      left join word_statistics_tables as w on w.table_name = c.relname
      where s.schemaname = current_schema() and c.relname in ${sql.in([...searchedTables])}
      order by c.relname`
  )
  const due = states.filter(
    (s) =>
      s.counted_changes === null ||
      // counts of changes start again after a restart of PGlite or a reset of PostgreSQL's statistics
      Math.abs(s.changes - s.counted_changes) > 50 + 0.1 * (s.counted_rows ?? 0)
  )
  return yield* Effect.forEach(due, (s) => countWords(s.table, s.estimate, s.changes, sizes))
})

/** `countDueWords`, then a gap of `gapMillis`, forever. */
export const wordStatisticsLoop = (gapMillis: number) =>
  Effect.forever(
    Effect.zipRight(
      Effect.tap(countDueWords(), (counted) =>
        counted.length === 0
          ? Effect.void
          : Effect.logDebug(`words counted: ${counted.map((c) => `${c.table} (${c.sampled} of ${c.rows} rows)`).join("; ")}`)
      ),
      Effect.sleep(gapMillis)
    )
  )

export const Workers = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    background(supervise("word-statistics", wordStatisticsLoop(config.maintenanceMillis)))
  )
)
