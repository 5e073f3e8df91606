/**
 * Retrieval's text-search indexes keep a short pending list. A GIN index buffers new rows' entries in a pending
 * list that every search reads through in full, until VACUUM (or the list's limit, 4 MB by default) merges them
 * into the index: with the default, a search at a few thousand sources read megabytes. A small limit merges
 * often, in small batches, as rows arrive.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter index knowledge_chunks_tsv set (gin_pending_list_limit = 128)`
  yield* sql`alter index qa_items_tsv set (gin_pending_list_limit = 128)`
})
