/**
 * A conversation's hand-off events are kept for widgets that resume with `Last-Event-ID`, then dropped by age:
 * the index finds the oldest ones, a batch at a time, without reading the conversations' others.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`create index conversation_events_created_at on conversation_events (created_at)`
})
