/**
 * The queue's claim and the webhook dispatcher's carried write reach their rows
 * by primary key, whatever the planner thought of the tables when it planned.
 *
 * PL/pgSQL plans each statement of a function once per session and, after five
 * calls, keeps a generic plan. A worker's session plans its claims early, when
 * `jobs` and `webhook_deliveries` hold a handful of rows, and without newer
 * statistics (autovacuum off, or not yet run) it keeps those plans: a sequential
 * scan of `jobs` for the claimed ids (`jobs_claim`), for the ended jobs
 * (`jobs_claim_after`), and of `webhook_deliveries` for the successes
 * (`webhook_deliveries_succeeded`). Every claim then read the whole backlog and
 * every row it left dead, in a drain of 2,000 deliveries.
 *
 * Each of these statements names its rows by id (an array of them), so a
 * sequential scan is never the right plan: these three functions run with
 * `enable_seqscan` off, which the planner honours by taking the primary key's
 * index (a scan it still has to make without an index is only costed higher).
 * `test/db/claim-plans.test.ts` holds them to it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    alter function jobs_claim(text, timestamptz, timestamptz, integer, integer, boolean)
      set enable_seqscan = off`)
  yield* sql.unsafe(`
    alter function jobs_claim_after(integer, bigint[], integer[], text, timestamptz, timestamptz, integer, integer, boolean)
      set enable_seqscan = off`)
  yield* sql.unsafe(`
    alter function webhook_deliveries_succeeded(text[], timestamptz[], integer[], integer[], text[], integer[], text[])
      set enable_seqscan = off`)
})
