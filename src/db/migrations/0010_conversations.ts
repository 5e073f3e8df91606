/**
 * Conversations, their messages and the events of each reply. A reply's row
 * exists from its first event (`status = 'generating'`); it is final only as
 * `complete`. `message_events` keeps every event a reply streamed, numbered
 * from 1, so a reader on any instance resumes after the `Last-Event-ID` it
 * holds. `last_activity_at` drives the idle timeout.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table conversations (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      agent_id text not null references agents (id),
      channel text not null check (channel in ('widget', 'api')),
      status text not null check (status in ('open', 'ended')),
      lead_id text,
      message_count integer not null default 0,
      metadata jsonb not null,
      started_at timestamptz not null,
      ended_at timestamptz,
      last_activity_at timestamptz not null
    )`
  yield* sql`create index conversations_page on conversations (workspace_id, environment, seq desc)`
  yield* sql`create index conversations_agent on conversations (agent_id, seq desc)`
  yield* sql`
    create table messages (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      conversation_id text not null references conversations (id),
      role text not null check (role in ('user', 'assistant')),
      status text not null check (status in ('generating', 'complete', 'interrupted', 'failed')),
      content text not null,
      sources jsonb not null,
      created_at timestamptz not null,
      completed_at timestamptz
    )`
  yield* sql`create index messages_conversation on messages (conversation_id, seq)`
  yield* sql`
    create table message_events (
      message_id text not null references messages (id),
      seq integer not null,
      data text not null,
      primary key (message_id, seq)
    )`
})
