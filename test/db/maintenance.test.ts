/**
 * PGlite's stand-in for autovacuum (`src/db/Maintenance.ts`): a table filled
 * since its last ANALYZE gets statistics, so the planner chooses an index over
 * a scan, and is vacuumed (many rows inserted); one with many dead rows is
 * vacuumed; an unchanged one, or one changed a little, is left alone.
 * The loop runs a round each gap of the clock (TestClock, no real wait).
 * PGlite only: PostgreSQL's own autovacuum does this there.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { layerPglite } from "../../layers/Database.js"
import { maintainOnce, maintenanceLoop } from "../../src/db/Maintenance.js"

/** One turn of the event loop, for the database thread's answers to arrive: no time passes for the loop. */
const ioTurn = Effect.async<void>((resume) => void setImmediate(() => resume(Effect.void)))

const statistics = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ n: number }>`select count(*)::int as n from pg_stats where tablename = ${table}`,
      ([row]) => row?.n ?? 0
    )
  )

const deadRows = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      Effect.zipRight(sql`select pg_stat_force_next_flush()`, sql<{ n: number }>`
        select n_dead_tup::int as n from pg_stat_user_tables where relname = ${table}`),
      ([row]) => Effect.succeed(row?.n ?? 0)
    )
  )

describe("PGlite maintenance", () => {
  layer(layerPglite({ dataDir: undefined }), { timeout: "60 seconds" })((it) => {
    it.effect("a filled table is vacuumed and analyzed, and its index then chosen; a quiet one is left alone", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`create table notes (id int primary key, owner text not null, body text not null)`
        yield* sql`create index notes_owner on notes (owner)`
        yield* sql`insert into notes select g, 'owner' || (g % 500), 'note ' || g from generate_series(1, 5000) as g`
        expect(yield* statistics("notes")).toBe(0)

        const done = yield* maintainOnce
        expect(done.find((t) => t.table === "notes")).toEqual({ table: "notes", analyzed: true, vacuumed: true })
        expect(yield* statistics("notes")).toBeGreaterThan(0)
        const plan = yield* sql<{ "QUERY PLAN": string }>`explain select * from notes where owner = 'owner7'`
        expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toMatch(/notes_owner/)

        // nothing changed since: no round of work
        expect((yield* maintainOnce).find((t) => t.table === "notes")).toBeUndefined()
        // a few changes, under the threshold: still none
        yield* sql`update notes set body = 'edited' where id <= 20`
        expect((yield* maintainOnce).find((t) => t.table === "notes")).toBeUndefined()
      }))

    it.effect("a table with many dead rows is vacuumed", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`create table events (id int primary key, payload text not null)`
        yield* sql`insert into events select g, 'event ' || g from generate_series(1, 2000) as g`
        yield* maintainOnce
        yield* sql`delete from events where id <= 1000`
        expect(yield* deadRows("events")).toBe(1000)

        const done = yield* maintainOnce
        expect(done.find((t) => t.table === "events")).toEqual({ table: "events", analyzed: true, vacuumed: true })
        expect(yield* deadRows("events")).toBe(0)
      }))

    it.effect("the loop runs a round each gap of the clock", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`create table later (id int primary key)`
        const loop = yield* Effect.fork(maintenanceLoop(60_000))
        // the first round has run when the loop sleeps
        for (let i = 0; i < 100_000 && (yield* TestClock.sleeps()).length === 0; i++) yield* ioTurn
        yield* sql`insert into later select generate_series(1, 3000)`
        expect(yield* statistics("later")).toBe(0)
        yield* TestClock.adjust("1 minute")
        // the round runs on the database's thread: wait for it, not for time
        let analyzed = 0
        for (let i = 0; i < 100_000 && analyzed === 0; i++) {
          yield* ioTurn
          analyzed = yield* statistics("later")
        }
        expect(analyzed).toBeGreaterThan(0)
        yield* Fiber.interrupt(loop)
      }))
  })
})
