/**
 * Q&A items keep their text-search document, as passages do (0006): retrieval
 * matched and ranked `to_tsvector(question || ' ' || answer)` computed per row
 * per question. Stored and GIN-indexed, a question's text candidates come
 * from the index alone. The expression index of 0007 has nothing left to
 * serve.
 *
 * The vector indexes are not here: their dimension is the embedding
 * provider's, known only to the running service, which creates them at start
 * (`src/knowledge/VectorIndex.ts`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    alter table qa_items
      add column tsv tsvector generated always as (to_tsvector('english', question || ' ' || answer)) stored`
  yield* sql`create index qa_items_tsv on qa_items using gin (tsv)`
  yield* sql`drop index qa_items_search`
})
