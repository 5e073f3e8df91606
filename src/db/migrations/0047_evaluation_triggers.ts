/**
 * Evaluations that run by themselves when their agent's knowledge changes (`src/evaluations/Triggers.ts`): the
 * evaluation's flag and the time an automatic run was last skipped (the month's runs used up), each run's
 * trigger, and one row per agent whose knowledge changed and whose runs are due at `due_at` (pushed back by every
 * further change, so a burst of changes gives one run per evaluation).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table evaluations add column run_on_knowledge_change boolean not null default false`
  yield* sql`alter table evaluations add column auto_run_skipped_at timestamptz`
  yield* sql`
    alter table evaluation_runs add column trigger text not null default 'manual'
      check (trigger in ('manual', 'knowledge_change'))`
  yield* sql`
    create index evaluations_on_knowledge_change on evaluations (agent_id) where run_on_knowledge_change`
  yield* sql`
    create table evaluation_triggers (
      agent_id text primary key references agents (id),
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      due_at timestamptz not null
    )`
})
