/**
 * Workspaces, keys, agents, the event outbox and idempotency records.
 * Every tenant row carries (workspace_id, environment); times come from the
 * application's Clock, never from SQL `now()`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table workspaces (
      id text primary key,
      name text not null,
      owner_email text not null,
      plan text not null check (plan in ('free', 'starter', 'pro', 'enterprise')),
      created_at timestamptz not null
    )`
  yield* sql`
    create table api_keys (
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      kind text not null check (kind in ('secret', 'widget', 'forms')),
      name text,
      scopes text not null,
      key_hash text not null unique,
      prefix text not null,
      last4 text not null,
      created_at timestamptz not null,
      revoked_at timestamptz
    )`
  yield* sql`create index api_keys_by_workspace on api_keys (workspace_id, created_at)`
  yield* sql`
    create table agents (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      type text not null check (type in ('support', 'training')),
      name text not null,
      slug text not null,
      instructions text,
      welcome_message text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz
    )`
  yield* sql`create unique index agents_slug on agents (workspace_id, environment, slug) where deleted_at is null`
  yield* sql`create index agents_page on agents (workspace_id, environment, seq desc) where deleted_at is null`
  yield* sql`
    create table events (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      type text not null,
      created_at timestamptz not null,
      body text not null
    )`
  yield* sql`create index events_page on events (workspace_id, environment, seq)`
  yield* sql`
    create table idempotency_keys (
      workspace_id text not null,
      environment text not null,
      key text not null,
      fingerprint text not null,
      state text not null check (state in ('running', 'done')),
      locked_until timestamptz not null,
      created_at timestamptz not null,
      response_status integer,
      response_content_type text,
      response_body text,
      primary key (workspace_id, environment, key)
    )`
  yield* sql`create index idempotency_keys_age on idempotency_keys (created_at)`
  yield* sql`
    create table service_state (
      key text primary key,
      value text not null
    )`
})
