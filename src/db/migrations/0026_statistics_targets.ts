/**
 * No planner statistics for columns no statement filters or joins on: the embeddings and the long texts of
 * knowledge. Their samples made ANALYZE several times slower (an embedding is detoasted and compared as an
 * array), and on PGlite ANALYZE runs on the session every statement waits for (src/db/Maintenance.ts).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    alter table knowledge_chunks
      alter column embedding set statistics 0,
      alter column content set statistics 0`
  yield* sql`
    alter table qa_items
      alter column embedding set statistics 0,
      alter column question set statistics 0,
      alter column answer set statistics 0`
  yield* sql`
    alter table knowledge_sources
      alter column content set statistics 0,
      alter column extracted_text set statistics 0`
})
