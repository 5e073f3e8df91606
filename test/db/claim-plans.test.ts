/**
 * A session keeps the plans it made of the claim functions early (migration
 * 0019). Planned while the queue held only jobs not yet due and no deliveries,
 * they still serve the backlog that comes after: the claim, its settling of
 * ended jobs and the webhook successes' record scan neither table
 * sequentially, and read a few index entries per job rather than the queue's
 * backlog, counted by the transaction's own statistics.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runMigrations } from "../../src/db/Migrator.js"
import { migrations } from "../../src/db/migrations/index.js"
import { databaseKind, testDatabaseLayer } from "../support/database.js"
import { insertDeliveryBacklog } from "../support/deliveryBacklog.js"

const backlog = 500
const at = new Date("2026-01-01T00:00:00Z")
const until = new Date(at.getTime() + 30_000)

describe(`the claim functions' plans (${databaseKind})`, () => {
  layer(testDatabaseLayer, { timeout: "60 seconds" })((it) => {
    it.effect("read a few index entries per job, not the backlog, with plans made before the backlog came", () =>
      Effect.gen(function* () {
        yield* runMigrations(migrations)
        const sql = yield* SqlClient.SqlClient

        // per table: sequential scans, and index entries read through any of its indexes
        const reads = Effect.map(
          sql<{ relname: string; seq_scan: number; index_entries: number }>`
            select t.relname, t.seq_scan::integer as seq_scan,
              (select coalesce(sum(pg_stat_get_xact_tuples_returned(i.indexrelid)), 0)::integer
               from pg_index i where i.indrelid = t.relid) as index_entries
            from pg_stat_xact_user_tables t where t.relname in ('jobs', 'webhook_deliveries')`,
          (rows) =>
            Object.fromEntries(
              rows.map((r) => [r.relname, { seqScans: Number(r.seq_scan), indexEntries: Number(r.index_entries) }])
            )
        )
        const claim = (ended: ReadonlyArray<{ id: string; claims: number }>) =>
          sql<{ id: string; claims: number }>`
            select id::text as id, claims from jobs_claim_after(0, ${ended.map((j) => j.id)}::bigint[],
              ${ended.map((j) => j.claims)}::integer[], 'webhooks', ${at}, ${until}, 8, 8, false)`
        const succeeded = (ids: ReadonlyArray<string>) => sql`
          select webhook_deliveries_succeeded(${ids}::text[], ${ids.map(() => at.toISOString())}::timestamptz[],
            ${ids.map(() => 200)}::integer[], ${ids.map(() => 3)}::integer[], ${ids.map(() => "ok")}::text[],
            ${ids.map(() => 1)}::integer[], '{whs_plan}'::text[])`

        // one transaction: one session, whose plans are kept across these calls
        const counted = yield* sql.withTransaction(
          Effect.gen(function* () {
            // jobs of the queue due tomorrow, and no deliveries yet
            const tomorrow = new Date(at.getTime() + 86_400_000)
            yield* sql`insert into jobs (queue, key, payload, status, run_at, created_at)
              select 'webhooks', 'whs_plan', json_build_object('deliveryId', 'later_' || n)::text, 'pending', ${tomorrow}, ${at}
              from generate_series(1, ${backlog}) n`
            // planned now: past five custom plans, PL/pgSQL keeps a generic one
            for (let i = 0; i < 8; i++) {
              yield* claim([])
              yield* succeeded([])
            }
            yield* insertDeliveryBacklog({ count: backlog, at, horizon: until })
            yield* sql`insert into jobs (queue, key, payload, status, run_at, created_at)
              select 'webhooks', 'whs_plan', json_build_object('deliveryId', 'whd_plan_' || n)::text, 'pending', ${at}, ${at}
              from generate_series(1, ${backlog}) n`

            const before = yield* reads
            const first = yield* claim([])
            yield* succeeded(["whd_plan_1", "whd_plan_2", "whd_plan_3", "whd_plan_4"])
            const second = yield* claim(first.slice(0, 4))
            const after = yield* reads
            return { before, after, first, second }
          })
        )
        // the claims did their work: eight taken, then four settled and four more taken (the cap is 8)
        expect(counted.first).toHaveLength(8)
        expect(counted.second).toHaveLength(4)
        const left = yield* sql<{ n: number }>`select count(*)::integer as n from jobs`
        expect(Number(left[0]!.n)).toBe(2 * backlog - 4)
        const done = yield* sql<{ n: number }>`select count(*)::integer as n from webhook_deliveries where status = 'succeeded'`
        expect(Number(done[0]!.n)).toBe(4)
        // and none of them read a table from end to end, or an index across the backlog: 12 jobs claimed, 4 settled,
        // 4 deliveries recorded, each a few index entries (1,000 jobs wait; planned otherwise they read 4,000)
        for (const table of ["jobs", "webhook_deliveries"]) {
          expect(counted.after[table]!.seqScans).toBe(counted.before[table]!.seqScans)
          expect(counted.after[table]!.indexEntries - counted.before[table]!.indexEntries).toBeLessThan(100)
        }
      })
    )
  })
})
