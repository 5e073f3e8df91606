/**
 * Indexes for the JobQueue's claim, so its cost follows the keys and the jobs it
 * takes, not the backlog: per key, the due jobs in claim order, and the leased
 * ones (the per-key in-flight count reads only those), and the due jobs without
 * a key.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`create index jobs_key_due on jobs (queue, key, run_at, id) where status = 'pending' and key is not null`
  yield* sql`create index jobs_unkeyed_due on jobs (queue, run_at, id) where status = 'pending' and key is null`
  yield* sql`create index jobs_leased on jobs (queue, key) where status = 'pending' and locked_until is not null`
})
