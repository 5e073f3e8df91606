/**
 * A refresh round walks its agent's sources in `seq` order, a batch at a time: `refresh_round_after` is the last
 * `seq` it reached (0 before its first batch), so each batch reads the next rows through `knowledge_sources_page`
 * instead of passing over the ones already checked, and a round costs the same per batch at any size.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`alter table agents add column refresh_round_after bigint not null default 0`)
})
