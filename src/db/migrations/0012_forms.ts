/**
 * Forms and the per-workspace identity secret. A form keeps its public part
 * (what the component renders) and its private settings as JSON, checked by the
 * contract's schemas on the way in and out. The identity secret is stored
 * encrypted (AES-GCM under SECRET_KEY), one per workspace and environment.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table forms (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      definition jsonb not null,
      settings jsonb not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create index forms_page on forms (workspace_id, environment, seq desc)`
  yield* sql`
    create table identity_secrets (
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      sealed text not null,
      rotated_at timestamptz not null,
      primary key (workspace_id, environment)
    )`
})
