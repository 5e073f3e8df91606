/**
 * Idempotency records of answers that show a secret once are kept sealed (src/http/SealedAnswer.ts); the column
 * says which are. Records kept before, with such a secret readable, are dropped: a retry of one of those requests
 * within its 24 hours runs again instead of being replayed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table idempotency_keys add column response_sealed boolean not null default false`
  yield* sql`delete from idempotency_keys where strpos(response_body, '"secret":"') > 0`
})
