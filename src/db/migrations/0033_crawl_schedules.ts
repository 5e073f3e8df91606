/**
 * A crawl may hold a schedule (`off`, `daily`, `weekly`) with the instant of its next run: each run is a new crawl
 * of the same site, `scheduled_by` the crawl holding the schedule. The runs' timers are jobs (`crawl-schedule`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    alter table crawls
      add column schedule text not null default 'off',
      add column next_run_at timestamptz,
      add column scheduled_by text`)
})
