/**
 * Q&A, their categories and the glossary. `qa_items.source_id` names a
 * knowledge source without a foreign key: sources belong to another migration,
 * and their deletion removes their Q&A explicitly. Embeddings are `real[]` on
 * every database; retrieval casts them to `vector` where pgvector exists.
 * Names and terms are unique per agent regardless of case.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table categories (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      agent_id text not null references agents (id),
      name text not null,
      description text not null,
      position integer not null check (position >= 0),
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create unique index categories_name on categories (agent_id, lower(name))`
  yield* sql`create index categories_order on categories (agent_id, position)`
  yield* sql`
    create table qa_items (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      agent_id text not null references agents (id),
      question text not null,
      answer text not null,
      category_id text references categories (id) on delete set null,
      origin text not null check (origin in ('manual', 'generated', 'csv')),
      source_id text,
      embedding real[] not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create index qa_items_page on qa_items (agent_id, seq desc)`
  yield* sql`create index qa_items_category on qa_items (category_id) where category_id is not null`
  yield* sql`create index qa_items_source on qa_items (source_id) where source_id is not null`
  // retrieval's full-text side matches this very expression
  yield* sql`create index qa_items_search on qa_items using gin (to_tsvector('english', question || ' ' || answer))`
  yield* sql`
    create table glossary_terms (
      seq bigint generated always as identity,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      agent_id text not null references agents (id),
      term text not null,
      definition text,
      synonyms jsonb not null,
      case_sensitive boolean not null,
      enabled boolean not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create unique index glossary_terms_term on glossary_terms (agent_id, lower(term))`
})
