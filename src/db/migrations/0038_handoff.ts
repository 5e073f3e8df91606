/**
 * Live hand-off of a conversation to people. A conversation keeps its hand-off (status, the ticket it went to,
 * when it was asked for and last changed; all null until an escalation), the number of its last stream event
 * (`event_seq`, raised in the statement that writes the next one, so ids increase per conversation in commit
 * order under the row's lock), and when a widget last followed its events (`last_seen_at`, the visitor's
 * presence). Its events are kept in `conversation_events` for readers that resume with `Last-Event-ID`, on any
 * instance. Messages gain the role `member`: a person of the workspace answering on the ticket.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    alter table conversations
      add column handoff_status text check (handoff_status in ('requested', 'active', 'closed')),
      add column handoff_ticket_public_id text,
      add column handoff_requested_at timestamptz,
      add column handoff_updated_at timestamptz,
      add column event_seq integer not null default 0,
      add column last_seen_at timestamptz`
  yield* sql`alter table messages drop constraint messages_role_check`
  yield* sql`alter table messages add constraint messages_role_check check (role in ('user', 'assistant', 'member'))`
  yield* sql`
    create table conversation_events (
      conversation_id text not null references conversations (id) on delete cascade,
      seq integer not null,
      data text not null,
      created_at timestamptz not null,
      primary key (conversation_id, seq)
    )`
})
