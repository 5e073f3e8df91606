/**
 * Webhook subscriptions, deliveries (one per event and subscription, created in
 * the event's transaction) and the log of every attempt.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table webhook_subscriptions (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      url text not null,
      events text[] not null,
      is_active boolean not null,
      degraded boolean not null default false,
      secret text not null,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      consecutive_failures integer not null default 0,
      failing_since timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz
    )`
  yield* sql`create index webhook_subscriptions_page on webhook_subscriptions (workspace_id, environment, seq desc) where deleted_at is null`
  yield* sql`
    create table webhook_deliveries (
      seq bigint generated always as identity,
      id text primary key,
      subscription_id text not null references webhook_subscriptions (id),
      workspace_id text not null,
      environment text not null,
      event_id text not null references events (id),
      event_type text not null,
      status text not null check (status in ('pending', 'succeeded', 'failed')),
      attempt_count integer not null default 0,
      max_attempts integer not null default 10,
      first_attempt_at timestamptz,
      horizon_at timestamptz not null,
      next_attempt_at timestamptz,
      locked_until timestamptz,
      last_attempted_at timestamptz,
      response_status integer,
      last_error text,
      created_at timestamptz not null
    )`
  yield* sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending'`
  // the dispatcher's claim walks each subscription's pending deliveries in due order
  yield* sql`
    create index webhook_deliveries_pending on webhook_deliveries (subscription_id, next_attempt_at)
    where status = 'pending'`
  yield* sql`create index webhook_deliveries_page on webhook_deliveries (subscription_id, seq desc)`
  yield* sql`
    create table webhook_attempts (
      seq bigint generated always as identity,
      delivery_id text not null references webhook_deliveries (id),
      attempted_at timestamptz not null,
      response_status integer,
      duration_ms integer not null,
      response_body_excerpt text,
      error text
    )`
  yield* sql`create index webhook_attempts_delivery on webhook_attempts (delivery_id, seq)`
})
