/**
 * The embedded database on its own thread (`layers/pglite/Thread.ts`), as
 * `npm start` opens it: values cross the thread unchanged (dates, bytes, int8
 * as text, JSON, arrays, NULL), so do a binary COPY's bytes, a database error keeps its SQLSTATE (what
 * `isUniqueViolation` and the migrator read), transactions roll back, pgvector
 * is there, statements sent before the open finishes wait for it, a failed
 * open fails the first statement with "Failed to start PGlite", and once the
 * layer is closed the thread has ended. PGlite only; runs on both passes alike.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Database, layerPglite } from "../../layers/Database.js"
import { openPgliteThread, type PgliteSession } from "../../layers/pglite/Thread.js"
import { encodeBinaryCopy } from "../../src/db/BinaryCopy.js"
import { isUniqueViolation } from "../../src/db/Sql.js"

const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "pglite-thread-test-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

it.scopedLive(
  "statements run on the thread with values, errors and transactions as in process; closing ends the thread",
  () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      let session: PgliteSession | undefined
      const opening = openPgliteThread(join(dir, "pglite"), undefined).then((s) => (session = s))
      const database = layerPglite({ dataDir: undefined, opening })

      yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const info = yield* Database
        expect(info).toMatchObject({ kind: "pglite", vector: true })
        // sent while the thread may still be opening (initdb here): it waits for the open
        yield* sql`create table t (id int primary key, at timestamptz, bytes bytea, big int8, doc jsonb, reals real[], note text)`
        const at = new Date("2026-11-23T10:00:00.123Z")
        yield* sql`insert into t ${sql.insert({
          id: 1,
          at,
          bytes: new Uint8Array([0, 1, 254, 255]),
          big: "9007199254740993",
          doc: JSON.stringify({ a: [1, "x", null] }),
          reals: [0.5, -1.25],
          note: null
        })}`
        const [row] = yield* sql<Record<string, unknown>>`select * from t`
        expect(row).toEqual({
          id: 1,
          at,
          bytes: new Uint8Array([0, 1, 254, 255]),
          big: "9007199254740993",
          doc: { a: [1, "x", null] },
          reals: [0.5, -1.25],
          note: null
        })

        const duplicate = yield* Effect.either(sql`insert into t (id) values (1)`)
        expect(Either.isLeft(duplicate) && duplicate.left instanceof SqlError && isUniqueViolation(duplicate.left)).toBe(true)

        const rolledBack = yield* Effect.either(
          sql.withTransaction(Effect.zipRight(sql`insert into t (id) values (2)`, Effect.fail("undo" as const)))
        )
        expect(rolledBack).toEqual(Either.left("undo"))
        expect(yield* sql<{ n: string }>`select count(*) as n from t`).toEqual([{ n: "1" }])

        // a binary COPY's bytes cross to the thread, inside a transaction (rolled back with it)
        const copy = "copy t (id, reals, note) from '/dev/blob' with (format binary)"
        const bytes = encodeBinaryCopy(["int4", "float4[]", "text"], [[10, [0.25, -2], "copied"], [11, [], null]])
        yield* sql.withTransaction(sql.unsafe(copy, [bytes]))
        expect(yield* sql<Record<string, unknown>>`select id, reals, note from t where id >= 10 order by id`).toEqual([
          { id: 10, reals: [0.25, -2], note: "copied" },
          { id: 11, reals: [], note: null }
        ])
        const bytes12 = encodeBinaryCopy(["int4", "float4[]", "text"], [[12, [1], null]])
        const undone = yield* Effect.either(
          sql.withTransaction(Effect.zipRight(sql.unsafe(copy, [bytes12]), Effect.fail("undo" as const)))
        )
        expect(undone).toEqual(Either.left("undo"))
        expect(yield* sql<{ n: string }>`select count(*) as n from t where id = 12`).toEqual([{ n: "0" }])
        yield* sql`delete from t where id >= 10`

        // several statements in one call (the simple protocol, as migrations use it)
        yield* sql.unsafe("insert into t (id) values (3); insert into t (id) values (4)")
        expect(yield* sql<{ distance: number }>`select '[1,0]'::vector <=> '[0,1]'::vector as distance`).toEqual([{ distance: 1 }])
      }).pipe(Effect.provide(Layer.orDie(database)))

      // the layer closed the session: the thread has ended, and a statement fails at once
      const after = yield* Effect.either(Effect.tryPromise(() => session!.query("select 1", [], { rowMode: "object" })))
      expect(Either.isLeft(after)).toBe(true)
      expect(String(Either.isLeft(after) ? after.left.error : "")).toContain("PGlite thread has ended")
    }),
  120_000
)

it.scopedLive("a database that cannot open fails the first statement with the reason", () =>
  Effect.gen(function* () {
    const dir = yield* tempDir
    // a file where the data dir's folder should be
    yield* Effect.promise(() => writeFile(join(dir, "pglite"), "not a folder"))
    const database = layerPglite({ dataDir: undefined, opening: openPgliteThread(join(dir, "pglite"), undefined) })
    const failed = yield* Effect.either(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`select 1`).pipe(Effect.provide(database))
    )
    expect(Either.isLeft(failed)).toBe(true)
    const error = Either.isLeft(failed) ? failed.left : undefined
    expect(error).toBeInstanceOf(SqlError)
    expect(error?.message).toBe("Failed to start PGlite")
    expect(String((error?.cause as Error | undefined)?.message)).toMatch(/EEXIST|ENOTDIR|not a directory|exists/i)
  }), 60_000)
