/**
 * Leads, the monthly reply counter behind usage and credits, and the origins an
 * agent's widget accepts. A deleted lead stays as a tombstone (`deleted_at`,
 * its personal data cleared) so a second delete answers as the first did.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table agents add column allowed_origins jsonb not null default '[]'::jsonb`
  yield* sql`
    create table leads (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      agent_id text not null references agents (id),
      email text,
      name text,
      phone text,
      metadata jsonb not null,
      conversation_id text,
      created_at timestamptz not null,
      deleted_at timestamptz
    )`
  yield* sql`create index leads_page on leads (workspace_id, environment, seq desc) where deleted_at is null`
  yield* sql`create index leads_agent on leads (agent_id, seq desc) where deleted_at is null`
  yield* sql`
    create table reply_usage (
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      month text not null,
      replies integer not null check (replies >= 0),
      credits integer not null check (credits >= 0),
      primary key (workspace_id, environment, month)
    )`
})
