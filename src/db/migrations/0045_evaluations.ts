/**
 * Evaluations (`src/evaluations`): an agent's set of test questions (`evaluations`, the cases kept as JSON in
 * the order given, since they are written once and read whole) and its runs (`evaluation_runs`), each with the
 * results of the cases it has run so far, in order, so a run's progress shows while it runs and a finished
 * run keeps what it found beside the later ones. Runs of a workspace in a month are counted against its plan
 * by `(workspace_id, environment, created_at)`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table evaluations (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      agent_id text not null references agents (id),
      name text not null,
      cases jsonb not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create index evaluations_page on evaluations (agent_id, seq desc)`
  yield* sql`
    create table evaluation_runs (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      agent_id text not null references agents (id),
      evaluation_id text not null references evaluations (id) on delete cascade,
      status text not null check (status in ('queued', 'running', 'completed', 'failed')),
      total integer not null,
      passed integer not null default 0,
      results jsonb not null default '[]'::jsonb,
      error_code text,
      error text,
      created_at timestamptz not null,
      started_at timestamptz,
      finished_at timestamptz
    )`
  yield* sql`create index evaluation_runs_page on evaluation_runs (evaluation_id, seq desc)`
  yield* sql`create index evaluation_runs_month on evaluation_runs (workspace_id, environment, created_at)`
})
