/**
 * Outgoing e-mail, written in the transaction of the change that causes it and
 * delivered by the e-mail sender fiber: `pending` -> `sent` | `failed`.
 * A claim is a lease (`locked_until`): a sender that dies mid-send leaves the
 * row pending, and it is claimed again once the lease lapses.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table emails (
      id text primary key,
      workspace_id text references workspaces (id),
      to_address text not null,
      subject text not null,
      body_text text not null,
      body_html text,
      status text not null check (status in ('pending', 'sent', 'failed')),
      attempts integer not null default 0,
      next_attempt_at timestamptz not null,
      locked_until timestamptz,
      last_error text,
      created_at timestamptz not null,
      sent_at timestamptz
    )`
  yield* sql`create index emails_due on emails (status, next_attempt_at)`
})
