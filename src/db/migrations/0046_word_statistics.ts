/**
 * The words retrieval weighs (how many rows of `knowledge_chunks` and `qa_items` hold each common word) kept by
 * the service in short steps (`src/knowledge/WordStatistics.ts`), not by ANALYZE: the planner's sample of the
 * `tsv` columns was most of ANALYZE's cost, one statement of up to a second on PGlite's only session, which every
 * other workspace's statement waited behind. The planner does not need those statistics (retrieval keeps to the
 * indexes), so they are no longer taken.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table word_statistics_tables (
      table_name text primary key,
      rows float8 not null,
      sampled integer not null,
      changes float8 not null,
      computed_at timestamptz not null
    )`
  yield* sql`
    create table word_statistics (
      table_name text not null references word_statistics_tables (table_name) on delete cascade,
      lexeme text not null,
      rows float8 not null,
      primary key (table_name, lexeme)
    )`
  yield* sql`alter table knowledge_chunks alter column tsv set statistics 0`
  yield* sql`alter table qa_items alter column tsv set statistics 0`
})
