/**
 * The delivery lease reaches its deliveries through their ids, never through
 * a walk of the subscription's pending backlog (migration 0018): its
 * statement, read from the function as installed and EXPLAINed over a backlog of pending deliveries that the planner
 * has no statistics for, uses no index but primary keys.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runMigrations } from "../../src/db/Migrator.js"
import { migrations } from "../../src/db/migrations/index.js"
import { databaseKind, testDatabaseLayer } from "../support/database.js"
import { insertDeliveryBacklog } from "../support/deliveryBacklog.js"

const backlog = 500

/** Every index a JSON plan names, and every relation it scans without one. */
const planAccess = (node: Record<string, unknown>, into = { indexes: new Set<string>(), seqScans: new Set<string>() }) => {
  if (typeof node["Index Name"] === "string") into.indexes.add(node["Index Name"])
  if (node["Node Type"] === "Seq Scan") into.seqScans.add(String(node["Relation Name"]))
  for (const child of (node["Plans"] as ReadonlyArray<Record<string, unknown>> | undefined) ?? []) planAccess(child, into)
  return into
}

describe(`the delivery lease's plan (${databaseKind})`, () => {
  layer(testDatabaseLayer, { timeout: "60 seconds" })((it) => {
    it.effect("looks deliveries up by id, not through the pending backlog of their subscription", () =>
      Effect.gen(function* () {
        yield* runMigrations(migrations)
        const sql = yield* SqlClient.SqlClient
        const at = new Date("2026-01-01T00:00:00Z")
        yield* insertDeliveryBacklog({ count: backlog, at, horizon: at })

        const ids = ["whd_plan_7", "whd_plan_8", "whd_plan_9", "whd_plan_10"]
        // the statement of the function as installed, its arguments made parameters
        const [source] = yield* sql<{ prosrc: string }>`select prosrc from pg_proc where proname = 'webhook_deliveries_lease'`
        const leaseStatement = /return query([\s\S]*?);\s*end/.exec(source!.prosrc)![1]!
        const statement = leaseStatement
          .replaceAll("p_ids", "$1::text[]")
          .replaceAll("p_at", "$2::timestamptz")
          .replaceAll("p_until", "$3::timestamptz")
        const until = new Date(at.getTime() + 30_000)
        const [row] = yield* sql.unsafe<{ "QUERY PLAN": unknown }>(`explain (format json) ${statement}`, [
          `{${ids.join(",")}}`,
          at,
          until
        ])
        const raw = row!["QUERY PLAN"]
        const plan = (typeof raw === "string" ? JSON.parse(raw) : raw) as ReadonlyArray<{ Plan: Record<string, unknown> }>
        const access = planAccess(plan[0]!.Plan)
        expect([...access.indexes].sort()).toEqual(["events_pkey", "webhook_deliveries_pkey", "webhook_subscriptions_pkey"])
        expect([...access.seqScans]).toEqual([])

        // and it leases what it is asked for, with what sending needs
        const leased = yield* sql<{ id: string; url: string; body: string }>`
          select id, url, body from webhook_deliveries_lease(${ids}::text[], ${at}, ${until}) order by id`
        expect(leased.map((l) => l.id)).toEqual([...ids].sort())
        expect(leased.every((l) => l.url === "https://example.com/hook" && l.body === "{}")).toBe(true)
      })
    )
  })
})
