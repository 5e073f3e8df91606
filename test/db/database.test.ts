import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { Database } from "../../layers/Database.js"
import { latestMigrationId, migrationsApplied, runMigrations } from "../../src/db/Migrator.js"
import { databaseKind, testDatabaseLayer } from "../support/database.js"

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: string }>`select count(*) as n from ${sql(table)}`, ([row]) => row!.n))

describe(`database (${databaseKind})`, () => {
  // `layer` is `it.layer` plus `excludeTestServices`: the live clock lets the
  // isolation test wait in real time.
  layer(testDatabaseLayer, { excludeTestServices: true, timeout: "60 seconds" })("shared database", (it) => {
    it.effect("reports its kind and pings", () =>
      Effect.gen(function*() {
        const db = yield* Database
        expect(db.kind).toBe(databaseKind)
        yield* db.ping
      }))

    it.effect("a committed transaction is visible", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`create table tx_commit (id int primary key, note text not null)`
        yield* sql.withTransaction(
          Effect.gen(function*() {
            yield* sql`insert into tx_commit ${sql.insert({ id: 1, note: "a" })}`
            yield* sql`insert into tx_commit ${sql.insert({ id: 2, note: "b" })}`
          })
        )
        expect(yield* count("tx_commit")).toBe("2")
        const rows = yield* sql<{ id: number }>`select id from tx_commit where ${sql.in("id", [1, 2])} order by id`
        expect(rows.map((row) => row.id)).toEqual([1, 2])
      }))

    it.effect("a failed transaction rolls back every statement", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`create table tx_rollback (id int primary key)`
        const failed = yield* Effect.either(
          sql.withTransaction(
            Effect.gen(function*() {
              yield* sql`insert into tx_rollback (id) values (1)`
              yield* sql`insert into tx_rollback (id) values (2)`
              return yield* Effect.fail("boom" as const)
            })
          )
        )
        expect(Either.isLeft(failed)).toBe(true)
        // A SQL error part-way through rolls back the earlier statements too.
        const duplicate = yield* Effect.either(
          sql.withTransaction(
            Effect.gen(function*() {
              yield* sql`insert into tx_rollback (id) values (3)`
              yield* sql`insert into tx_rollback (id) values (3)`
            })
          )
        )
        expect(Either.isLeft(duplicate) && duplicate.left._tag).toBe("SqlError")
        expect(yield* count("tx_rollback")).toBe("0")
        // The session is usable afterwards (no transaction left open).
        yield* sql`insert into tx_rollback (id) values (4)`
        expect(yield* count("tx_rollback")).toBe("1")
      }))

    it.effect("another fiber never sees a transaction's uncommitted row", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`create table tx_isolation (id int primary key)`
        const inserted = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const writer = yield* Effect.fork(
          sql.withTransaction(
            Effect.gen(function*() {
              yield* sql`insert into tx_isolation (id) values (1)`
              yield* Deferred.succeed(inserted, undefined)
              yield* Deferred.await(release)
            })
          )
        )
        yield* Deferred.await(inserted)
        const reader = yield* Effect.fork(count("tx_isolation"))
        if (databaseKind === "postgres") {
          expect(yield* Fiber.join(reader)).toBe("0")
        } else {
          // One PGlite session: the reader must queue behind the transaction.
          yield* Effect.sleep("250 millis")
          expect(Option.isNone(yield* Fiber.poll(reader))).toBe(true)
        }
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(writer)
        if (databaseKind === "pglite") {
          expect(yield* Fiber.join(reader)).toBe("1")
        }
        expect(yield* count("tx_isolation")).toBe("1")
      }))

    it.effect("jsonb round-trips as an object", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const doc = { name: "assistant", tags: ["a", "b"], nested: { n: 1, ok: true, none: null } }
        yield* sql`create table json_rows (id int primary key, doc jsonb not null)`
        yield* sql`insert into json_rows ${sql.insert({ id: 1, doc })}`
        yield* sql`insert into json_rows ${sql.insert({ id: 2, doc: JSON.stringify(doc) })}`
        const rows = yield* sql<{ doc: unknown }>`select doc from json_rows order by id`
        expect(rows.map((row) => row.doc)).toEqual([doc, doc])
        const [built] = yield* sql<{ j: unknown }>`select jsonb_build_object('a', 1, 'b', ${"x"}::text) as j`
        expect(built!.j).toEqual({ a: 1, b: "x" })
      }))

    it.effect("timestamptz comes back as a Date", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const at = new Date("2024-05-06T07:08:09.123Z")
        yield* sql`create table ts_rows (id int primary key, at timestamptz not null, created_at timestamptz not null default now())`
        yield* sql`insert into ts_rows ${sql.insert({ id: 1, at })}`
        const [row] = yield* sql<{ at: unknown; created_at: unknown }>`select at, created_at from ts_rows`
        expect(row!.at).toBeInstanceOf(Date)
        expect((row!.at as Date).toISOString()).toBe(at.toISOString())
        expect(row!.created_at).toBeInstanceOf(Date)
      }))

    it.effect("int8 and numeric come back as strings, int4 as numbers", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<Record<string, unknown>>`
          select count(*) as n,
                 ${"9007199254740993"}::int8 as big,
                 ${BigInt("9007199254740995")}::int8 as big_param,
                 array[1, 2]::int8[] as bigs,
                 1.50::numeric as price,
                 42::int4 as small`
        expect(row).toEqual({
          n: "1",
          big: "9007199254740993",
          big_param: "9007199254740995",
          bigs: ["1", "2"],
          price: "1.50",
          small: 42
        })
        const values = yield* sql`select count(*) as n, 2::int4 as m`.values
        expect(values).toEqual([["1", 2]])
      }))

    it.effect("multi-statement SQL without parameters runs (as with node-postgres)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`create table multi_a (id int); create table multi_b (id int)`
        expect(yield* count("multi_a")).toBe("0")
        expect(yield* count("multi_b")).toBe("0")
      }))
  })

  describe("migrations", () => {
    const migrations = {
      "0001_log": Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql`create table mig_log (id serial primary key, note text not null);
              insert into mig_log (note) values ('first')`
      ),
      "0002_second": Effect.flatMap(SqlClient.SqlClient, (sql) => sql`insert into mig_log (note) values ('second')`)
    }

    it("latestMigrationId is the highest numeric prefix", () => {
      expect(latestMigrationId(migrations)).toBe(2)
      expect(latestMigrationId({})).toBe(0)
    })

    it.live("runMigrations is idempotent", () =>
      Effect.gen(function*() {
        expect(yield* migrationsApplied(migrations)).toBe(false)
        const first = yield* runMigrations(migrations)
        expect(first.map(([id]) => id)).toEqual([1, 2])
        const second = yield* runMigrations(migrations)
        expect(second).toEqual([])
        expect(yield* count("mig_log")).toBe("2")
        expect(yield* migrationsApplied(migrations)).toBe(true)
        expect(yield* migrationsApplied({ ...migrations, "0003_next": Effect.void })).toBe(false)
      }).pipe(Effect.provide(testDatabaseLayer)))

    it.live("concurrent runs both succeed and apply each migration once", () =>
      Effect.gen(function*() {
        const [a, b] = yield* Effect.all([runMigrations(migrations), runMigrations(migrations)], {
          concurrency: "unbounded"
        })
        expect([...a, ...b].map(([id]) => id).sort()).toEqual([1, 2])
        expect(yield* count("mig_log")).toBe("2")
        expect(yield* migrationsApplied(migrations)).toBe(true)
      }).pipe(Effect.provide(testDatabaseLayer)))
  })
})
