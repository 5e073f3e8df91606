/**
 * A session keeps the plans it made of the claim functions early (migrations
 * 0019 and 0020). Planned while the queue held only jobs not yet due and no
 * deliveries, they still serve the backlog that comes after: the queue's
 * claim, its settling of ended jobs, the webhook successes' record and the
 * webhook dispatcher's own claim scan neither table sequentially, and read a
 * few index entries per job rather than the queue's backlog, counted by the
 * transaction's own statistics.
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

interface Reads {
  readonly seqScans: number
  readonly indexEntries: number
}

/** Per table: sequential scans, and index entries read through any of its indexes, in this transaction. */
const reads = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ relname: string; seq_scan: number; index_entries: number }>`
      select t.relname, t.seq_scan::integer as seq_scan,
        (select coalesce(sum(pg_stat_get_xact_tuples_returned(i.indexrelid)), 0)::integer
         from pg_index i where i.indrelid = t.relid) as index_entries
      from pg_stat_xact_user_tables t where t.relname in ('jobs', 'webhook_deliveries')`,
    (rows): Record<string, Reads> =>
      Object.fromEntries(
        rows.map((r) => [r.relname, { seqScans: Number(r.seq_scan), indexEntries: Number(r.index_entries) }])
      )
  )
)

/**
 * In one transaction (one session, whose plans are kept across the calls): `plan` run eight times while the queue
 * holds `backlog` jobs due tomorrow and no deliveries (past five custom plans, PL/pgSQL keeps a generic one), then
 * a backlog of as many due deliveries with their jobs, then `work`; with what the tables' indexes and scans read
 * during `work`.
 */
const plannedEarly = <A>(
  plan: Effect.Effect<unknown, unknown, SqlClient.SqlClient>,
  work: Effect.Effect<A, unknown, SqlClient.SqlClient>,
  /** The jobs' group (migration 0034), none by default. */
  group: string | null = null
) =>
  Effect.gen(function* () {
    yield* runMigrations(migrations)
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        const tomorrow = new Date(at.getTime() + 86_400_000)
        yield* sql`insert into jobs (queue, key, group_key, payload, status, run_at, created_at)
          select 'webhooks', 'whs_plan', ${group}, json_build_object('deliveryId', 'later_' || n)::text, 'pending',
            ${tomorrow}, ${at}
          from generate_series(1, ${backlog}) n`
        for (let i = 0; i < 8; i++) yield* plan
        yield* insertDeliveryBacklog({ count: backlog, at, horizon: until })
        yield* sql`insert into jobs (queue, key, group_key, payload, status, run_at, created_at)
          select 'webhooks', 'whs_plan', ${group}, json_build_object('deliveryId', 'whd_plan_' || n)::text, 'pending',
            ${at}, ${at}
          from generate_series(1, ${backlog}) n`
        const before = yield* reads
        const result = yield* work
        const after = yield* reads
        return { before, after, result }
      })
    )
  })

/** None of the work read a table from end to end, or an index across the backlog (1,000 jobs wait). */
const expectFewReads = (
  counted: { readonly before: Record<string, Reads>; readonly after: Record<string, Reads> },
  most = 100
) => {
  for (const table of ["jobs", "webhook_deliveries"]) {
    expect(counted.after[table]!.seqScans).toBe(counted.before[table]!.seqScans)
    expect(counted.after[table]!.indexEntries - counted.before[table]!.indexEntries).toBeLessThan(most)
  }
}

const counts = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ jobs: number; succeeded: number; attempts: number }>`
      select (select count(*) from jobs)::integer as jobs,
        (select count(*) from webhook_deliveries where status = 'succeeded')::integer as succeeded,
        (select count(*) from webhook_attempts)::integer as attempts`,
    (rows) => ({ jobs: Number(rows[0]!.jobs), succeeded: Number(rows[0]!.succeeded), attempts: Number(rows[0]!.attempts) })
  )
)

describe(`the claim functions' plans (${databaseKind})`, () => {
  layer(testDatabaseLayer, { timeout: "60 seconds" })((it) => {
    it.effect("the queue's claim and the successes' record read a few index entries per job, with plans made before the backlog came", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const claim = (ended: ReadonlyArray<{ id: string; claims: number }>) =>
          sql<{ id: string; claims: number }>`
            select id::text as id, claims from jobs_claim_after(0, ${ended.map((j) => j.id)}::bigint[],
              ${ended.map((j) => j.claims)}::integer[], 'webhooks', ${at}, ${until}, 8, 8, false)`
        const succeeded = (ids: ReadonlyArray<string>) => sql`
          select webhook_deliveries_succeeded(${ids}::text[], ${ids.map(() => at.toISOString())}::timestamptz[],
            ${ids.map(() => 200)}::integer[], ${ids.map(() => 3)}::integer[], ${ids.map(() => "ok")}::text[],
            ${ids.map(() => 1)}::integer[], '{whs_plan}'::text[])`

        const counted = yield* plannedEarly(
          Effect.zip(claim([]), succeeded([])),
          Effect.gen(function* () {
            const first = yield* claim([])
            yield* succeeded(["whd_plan_1", "whd_plan_2", "whd_plan_3", "whd_plan_4"])
            const second = yield* claim(first.slice(0, 4))
            return { first, second }
          })
        )
        // the claims did their work: eight taken, then four settled and four more taken (the cap is 8)
        expect(counted.result.first).toHaveLength(8)
        expect(counted.result.second).toHaveLength(4)
        expect(yield* counts).toEqual({ jobs: 2 * backlog - 4, succeeded: 4, attempts: 4 })
        // 12 jobs claimed, 4 settled, 4 deliveries recorded, each a few index entries (planned otherwise they read 4,000)
        expectFewReads(counted)
      }))
  })

  layer(testDatabaseLayer, { timeout: "60 seconds" })((it) => {
    it.effect("the webhook dispatcher's claim reads a few index entries per job, with plans made before the backlog came", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const leaseUntil = new Date(at.getTime() + 30_000)
        // what the dispatcher sends (`webhookClaim` in src/webhooks/Dispatcher.ts): the successes of the ended jobs
        const claim = (ended: ReadonlyArray<{ id: string; claims: number; delivery: string }>) => {
          const ids = ended.map((j) => j.delivery)
          return sql<{ id: string; claims: number; alongside: { id: string; body: string } | null }>`
            select id::text as id, claims, alongside from webhook_jobs_claim(${ids}::text[],
              ${ids.map(() => at.toISOString())}::timestamptz[], ${ids.map(() => 200)}::integer[],
              ${ids.map(() => 3)}::integer[], ${ids.map(() => "ok")}::text[], ${ids.map(() => 1)}::integer[],
              ${ids.length === 0 ? [] : ["whs_plan"]}::text[],
              ${ended.map((j) => j.id)}::bigint[], ${ended.map((j) => j.claims)}::integer[],
              'webhooks', ${at}, ${until}, 8, 8, false, ${leaseUntil})`
        }
        const withDelivery = (rows: ReadonlyArray<{ id: string; claims: number; alongside: { id: string } | null }>) =>
          rows.map((row) => ({ id: row.id, claims: row.claims, delivery: row.alongside!.id }))

        const counted = yield* plannedEarly(
          claim([]),
          Effect.gen(function* () {
            const first = yield* claim([])
            const second = yield* claim(withDelivery(first).slice(0, 4))
            return { first, second }
          })
        )
        // eight taken with their deliveries leased, then four recorded and settled and four more taken
        const { first, second } = counted.result
        expect(first).toHaveLength(8)
        expect(second).toHaveLength(4)
        for (const row of [...first, ...second]) expect(row.alongside).toMatchObject({ body: "{}" })
        expect(yield* counts).toEqual({ jobs: 2 * backlog - 4, succeeded: 4, attempts: 4 })
        expectFewReads(counted)
      }))
  })

  layer(testDatabaseLayer, { timeout: "60 seconds" })((it) => {
    it.effect("a claim capped per group counts the group's jobs in flight, not its backlog, with plans made before it came", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // per key 8, per group 4, for 8 slots (migration 0034's overload)
        const claim = (ended: ReadonlyArray<{ id: string; claims: number }>) =>
          sql<{ id: string; claims: number; group_key: string | null }>`
            select id::text as id, claims, group_key from jobs_claim_after(0, ${ended.map((j) => j.id)}::bigint[],
              ${ended.map((j) => j.claims)}::integer[], 'webhooks', ${at}, ${until}, 8, 4, 8, false)`
        const counted = yield* plannedEarly(
          claim([]),
          Effect.gen(function* () {
            const first = yield* claim([])
            const second = yield* claim(first.slice(0, 2))
            const third = yield* claim([])
            return { first, second, third }
          }),
          "wsp_plan"
        )
        // four of the group taken, the cap; two settled and two more taken; none while four are in flight
        const { first, second, third } = counted.result
        expect(first).toHaveLength(4)
        expect(second).toHaveLength(2)
        expect(third).toHaveLength(0)
        expect([...first, ...second].every((row) => row.group_key === "wsp_plan")).toBe(true)
        expect((yield* counts).jobs).toBe(2 * backlog - 2)
        // three claims, each reading the key's first jobs, the group's leased ones and those it takes
        expectFewReads(counted, 120)
      }))
  })
})
