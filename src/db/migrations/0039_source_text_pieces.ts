/**
 * A source's extracted text in pieces. A page of megabytes written as one value took its one statement seconds
 * (TOAST, compression), and on PGlite every other workspace's statement waited behind it. Now the text is written
 * in pieces of a bounded size, one statement each, beside the chunks of the draft it came with
 * (`knowledge_chunk_drafts`, 0035): hidden while the draft is listed, shown when the final transaction publishes
 * it, deleted in steps with the draft's chunks when given up. `knowledge_sources.extracted_text` keeps the texts
 * written before this migration, and is no longer written.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table knowledge_source_texts (
      draft text not null,
      position int not null,
      source_id text not null references knowledge_sources (id),
      piece text not null,
      primary key (draft, position)
    )`
  yield* sql`create index knowledge_source_texts_source on knowledge_source_texts (source_id)`
  yield* sql`alter table knowledge_source_texts alter column piece set statistics 0`
})
