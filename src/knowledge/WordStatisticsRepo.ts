/**
 * Where retrieval's word statistics are kept (`word_statistics`, `word_statistics_tables`, migration 0046): read
 * by retrieval by key, written by the counting in `WordStatistics.ts`, a table's words replaced at once.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { decodeAll, execute, transaction } from "../db/Sql.js"

export const searchedTables = ["knowledge_chunks", "qa_items"] as const
export type SearchedTable = (typeof searchedTables)[number]

export const Words = Schema.Record({ key: Schema.String, value: Schema.Number })

/** A table's rows, and the rows holding each word asked for that its statistics list. */
export const TableWords = Schema.Struct({ rows: Schema.Number, words: Words })
export type TableWords = typeof TableWords.Type

const Listed = Schema.Struct({ table: Schema.Literal(...searchedTables), rows: Schema.Number, words: Words })

/**
 * The statistics of both tables for `lexemes`; a table never counted has no rows and lists no word. Read where
 * sequential scans are off (retrieval's transaction): every table is reached by its key, or PostgreSQL would
 * price a scan out of reach and compile the statement with JIT, for tens of milliseconds.
 */
export const wordsOf = (sql: SqlClient.SqlClient, lexemes: ReadonlyArray<string>) =>
  Effect.map(
    decodeAll(
      Listed,
      sql`select t.table_name as table, t.rows,
          coalesce((select jsonb_object_agg(w.lexeme, w.rows) from word_statistics as w
            where w.table_name = t.table_name and w.lexeme in ${sql.in(lexemes.length > 0 ? lexemes : [""])}), '{}') as words
        from word_statistics_tables as t where t.table_name in ${sql.in([...searchedTables])}`
    ),
    (rows): Record<SearchedTable, TableWords> => {
      const of = (table: SearchedTable) => rows.find((row) => row.table === table) ?? { rows: 0, words: {} }
      return { knowledge_chunks: of("knowledge_chunks"), qa_items: of("qa_items") }
    }
  )

/** A table's counted words, replacing the ones counted before, with the count of changes they were counted at. */
export const recordWords = (
  sql: SqlClient.SqlClient,
  counted: {
    readonly table: SearchedTable
    readonly rows: number
    readonly sampled: number
    readonly changes: number
    readonly listed: Readonly<Record<string, number>>
  }
) =>
  transaction(sql)(
    Effect.all([
      execute(sql`insert into word_statistics_tables (table_name, rows, sampled, changes, computed_at)
        values (${counted.table}, ${counted.rows}, ${counted.sampled}, ${counted.changes}, now())
        on conflict (table_name) do update set rows = excluded.rows, sampled = excluded.sampled,
          changes = excluded.changes, computed_at = excluded.computed_at`),
      execute(sql`delete from word_statistics where table_name = ${counted.table}`),
      execute(sql`insert into word_statistics (table_name, lexeme, rows)
        select ${counted.table}, key, value::float8 from jsonb_each_text(${JSON.stringify(counted.listed)}::jsonb)`)
    ])
  )
