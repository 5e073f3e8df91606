/** Counts read at scrape time for `/metrics`: each one index-backed or over small tables. */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { decodeAll } from "../db/Sql.js"

const Count = Schema.Struct({ n: Schema.Number })
const StateCount = Schema.Struct({ state: Schema.String, n: Schema.Number })

export class MetricsRepo extends Effect.Service<MetricsRepo>()("System/MetricsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const count = (statement: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
      Effect.map(decodeAll(Count, statement), (rows) => rows[0]?.n ?? 0)
    return {
      /** Pending deliveries whose next attempt is due at `at` (the `webhook_deliveries_due` partial index). */
      dueDeliveries: (at: Date) =>
        count(sql`select count(*)::int as n from webhook_deliveries where status = 'pending' and next_attempt_at <= ${at}`),
      /** Knowledge sources by ingestion state. */
      ingestionByState: () =>
        decodeAll(StateCount, sql`select status as state, count(*)::int as n from knowledge_sources group by status`),
      pendingEmails: () => count(sql`select count(*)::int as n from emails where status = 'pending'`)
    } as const
  })
}) {}
