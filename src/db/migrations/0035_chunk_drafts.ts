/**
 * Chunks written before they are shown. A big document's chunks are many thousand rows whose index entries
 * (HNSW, GIN) take seconds to write: in one transaction that held PGlite's only session the whole time. Now they
 * are written in short steps, each chunk naming its draft, while the draft is listed here, which hides its rows
 * from retrieval; the source's final transaction deletes the draft's row, and its chunks are shown all at once.
 * A draft given up (its attempt superseded or failed, or the chunks a changed page replaced) is kept `discarded`,
 * still hiding its rows, until they are deleted, in short steps too; no chunk is written into a discarded draft.
 * Chunks written before this migration name no draft: shown. A draft left by an attempt that died stays hidden
 * until its source's next attempt, failure or deletion removes it with its chunks.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table knowledge_chunks add column draft text`
  yield* sql`
    create table knowledge_chunk_drafts (
      id text primary key,
      source_id text not null references knowledge_sources (id),
      discarded boolean not null default false,
      created_at timestamptz not null
    )`
  yield* sql`create index knowledge_chunk_drafts_source on knowledge_chunk_drafts (source_id)`
})
