/**
 * Knowledge: uploaded files, sources (one row per text, URL, file or CSV fed
 * to an agent, with its progress) and the chunks retrieval searches. Chunks
 * keep their embedding as `real[]` on every database; where pgvector exists
 * retrieval casts it to `vector` at query time. No foreign keys to the Q&A
 * tables (0007): Q&A rows name their source by id only.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table files (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      filename text not null,
      content_type text not null,
      size_bytes bigint not null,
      status text not null check (status in ('pending', 'uploaded')),
      received boolean not null default false,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      uploaded_at timestamptz,
      deleted_at timestamptz
    )`
  yield* sql`
    create table knowledge_sources (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      agent_id text not null references agents (id),
      type text not null check (type in ('text', 'url', 'file_id', 'csv_qa')),
      title text not null,
      status text not null check (status in ('pending', 'processing', 'indexed', 'failed')),
      phase text not null,
      progress integer not null default 0,
      attempts integer not null default 0,
      next_attempt_at timestamptz,
      error text,
      error_code text,
      source_ref text not null,
      size_bytes bigint not null default 0,
      content text,
      extracted_text text,
      chunk_count integer not null default 0,
      qa_count integer not null default 0,
      started_at timestamptz,
      finished_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz
    )`
  yield* sql`create index knowledge_sources_page on knowledge_sources (agent_id, seq desc) where deleted_at is null`
  yield* sql`
    create table knowledge_chunks (
      id text primary key,
      source_id text not null references knowledge_sources (id),
      agent_id text not null,
      workspace_id text not null,
      environment text not null,
      position integer not null,
      content text not null,
      embedding real[] not null,
      tsv tsvector generated always as (to_tsvector('english', content)) stored
    )`
  yield* sql`create index knowledge_chunks_source on knowledge_chunks (source_id)`
  yield* sql`create index knowledge_chunks_agent on knowledge_chunks (agent_id)`
  yield* sql`create index knowledge_chunks_tsv on knowledge_chunks using gin (tsv)`
})
