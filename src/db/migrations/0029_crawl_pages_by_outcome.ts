/**
 * A crawl's addresses listed by outcome (`GET …/pages?outcome=unreadable`) read only the rows of that outcome:
 * a crawl that met ten thousand links it skipped lists its few unreadable pages without reading past them.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`create index crawl_pages_by_outcome on crawl_pages (crawl_id, outcome, seq desc)`
})
