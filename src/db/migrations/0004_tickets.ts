/**
 * Tickets, their messages and their event log (`ticket_events`, kept on
 * erasure), and the monthly creation counter that enforces plan caps.
 * Messages and ticket events draw `seq` from one sequence, so a thread reads
 * in the order things happened even when the Clock gives them the same time.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table tickets (
      seq bigint generated always as identity,
      id uuid primary key,
      public_id text not null unique,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      agent_id text not null references agents (id),
      status text not null check (status in ('open', 'pending_user', 'resolved')),
      priority text not null check (priority in ('low', 'normal', 'high', 'urgent')),
      origin text not null check (origin in ('api', 'widget_button', 'ai_escalation', 'form')),
      visitor_name text,
      visitor_email text,
      subject text not null,
      assigned_to text,
      tags jsonb not null,
      metadata jsonb not null,
      conversation_id text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      resolved_at timestamptz,
      first_response_at timestamptz,
      erased_at timestamptz
    )`
  yield* sql`create index tickets_page on tickets (workspace_id, environment, seq desc)`
  yield* sql`create sequence ticket_thread_seq`
  yield* sql`
    create table ticket_messages (
      seq bigint not null default nextval('ticket_thread_seq'),
      id text primary key,
      ticket_id uuid not null references tickets (id),
      author_type text not null check (author_type in ('visitor', 'member')),
      author_id text,
      body text not null,
      created_at timestamptz not null
    )`
  yield* sql`create index ticket_messages_thread on ticket_messages (ticket_id, seq)`
  yield* sql`
    create table ticket_events (
      seq bigint not null default nextval('ticket_thread_seq'),
      id text primary key,
      ticket_id uuid not null references tickets (id),
      type text not null,
      from_value text,
      to_value text,
      actor_type text not null check (actor_type in ('api', 'member', 'system', 'visitor')),
      actor_id text,
      created_at timestamptz not null
    )`
  yield* sql`create index ticket_events_thread on ticket_events (ticket_id, seq)`
  yield* sql`
    create table ticket_usage (
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      month text not null,
      count integer not null,
      primary key (workspace_id, environment, month)
    )`
})
