/**
 * The chat widget's settings on each agent, and visitors' ratings of replies. `agents.widget` holds the settings an
 * agent was given (`{}`: none; a missing field reads as its default, so the defaults live in the code, not in rows).
 * A message's rating is three columns of its row: one rating per message by construction, cleared by nulls.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table agents add column widget jsonb not null default '{}'::jsonb`
  yield* sql`alter table messages add column feedback_rating text check (feedback_rating in ('up', 'down'))`
  yield* sql`alter table messages add column feedback_comment text`
  yield* sql`alter table messages add column feedback_updated_at timestamptz`
})
