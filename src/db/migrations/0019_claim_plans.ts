/**
 * The queue's claim and the webhook dispatcher's carried write reach their rows
 * through the indexes they were written for, whatever the planner thought of
 * the tables when it planned.
 *
 * PL/pgSQL plans each statement of a function once per session and, after five
 * calls, keeps a generic plan. A worker's session plans its claims early, when
 * `jobs` and `webhook_deliveries` hold a handful of rows, and without newer
 * statistics (autovacuum off, or not yet run) it keeps those plans. In a drain
 * of 2,000 deliveries (auto_explain), every claim then read the whole backlog:
 * - `jobs_claimable` found the queue's keys through `jobs_due` and a sort, all
 *   the pending jobs twice, instead of the loose index scan of `jobs_key`;
 * - `jobs_claim` (the claimed ids), `jobs_claim_after` (the ended jobs) and
 *   `webhook_deliveries_succeeded` (the successes) scanned `jobs` and
 *   `webhook_deliveries` sequentially for rows they name by id.
 *
 * These four functions run with `enable_seqscan` off, and `jobs_claimable`
 * with `enable_sort` off as well: each of their statements has an index that
 * gives its rows in the order it asks for, so the planner takes it (a scan or a
 * sort with no index to replace it is only costed higher, never refused).
 * `test/db/claim-plans.test.ts` holds them to it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    alter function jobs_claimable(text, timestamptz, integer, integer)
      set enable_seqscan = off set enable_sort = off`)
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
