/**
 * Training: modules, lessons and lesson sources. A lesson source owns one
 * knowledge source row (`knowledge_source_id`), which the ingestion pipeline
 * processes like any other; that row names its owner back in
 * `lesson_source_id` (no foreign key that way, so either insert order works)
 * and is hidden from the knowledge endpoints. `sources_added` counts every
 * source a lesson ever had: the first one is primary, and deleting it
 * promotes none. An `audio` lesson source owns a `file_id` knowledge row (the
 * pipeline transcribes audio files); its `transcript`, if given, is that row's
 * `content`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table course_modules (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      agent_id text not null references agents (id),
      title text not null,
      description text not null,
      position integer not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create index course_modules_agent on course_modules (agent_id, position)`
  yield* sql`
    create table course_lessons (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      agent_id text not null references agents (id),
      module_id text not null references course_modules (id),
      title text not null,
      content text not null,
      position integer not null,
      sources_added integer not null default 0,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create index course_lessons_module on course_lessons (module_id, position)`
  yield* sql`
    create table lesson_sources (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      agent_id text not null references agents (id),
      lesson_id text not null references course_lessons (id),
      knowledge_source_id text not null unique references knowledge_sources (id),
      type text not null check (type in ('text', 'url', 'file_id', 'audio')),
      is_primary boolean not null,
      position integer not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create index lesson_sources_lesson on lesson_sources (lesson_id, position)`
  yield* sql`alter table knowledge_sources add column lesson_source_id text`
})
