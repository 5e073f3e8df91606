/**
 * A reply's stream events are kept for resuming (`Last-Event-ID`) and then
 * dropped: `events_pruned_at` marks a message whose events are gone, and the
 * partial index finds the finished messages whose events are still kept,
 * oldest first, without reading the pruned ones again.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table messages add column events_pruned_at timestamptz`
  yield* sql`
    create index messages_events_kept on messages (completed_at)
    where completed_at is not null and events_pruned_at is null`
})
