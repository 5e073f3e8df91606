/**
 * The embedding space the stored vectors (`knowledge_chunks.embedding`, `qa_items.embedding`) belong to, and the
 * re-embedding into it (src/knowledge/Embeddings.ts): one row. `space` is `provider:model:dimensions`; null until
 * a start records it. `generation` counts re-embeddings queued, so a job of an earlier one knows it is stale.
 * The job walks `knowledge_chunks` then `qa_items` (`phase`) by primary key; `cursor` is the last id done in
 * that phase (null: from its start), `done` the rows done of `total`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table embedding_space (
      id boolean primary key default true check (id),
      space text,
      previous_space text,
      generation integer not null default 0,
      status text not null check (status in ('none', 'queued', 'running', 'done', 'failed')),
      phase text check (phase in ('chunks', 'qa')),
      cursor text,
      done bigint not null default 0,
      total bigint not null default 0,
      started_at timestamptz,
      finished_at timestamptz,
      last_error text,
      updated_at timestamptz
    )`
  yield* sql`insert into embedding_space (id, status) values (true, 'none')`
})
