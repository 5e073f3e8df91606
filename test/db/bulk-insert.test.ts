/**
 * Bulk writes: rows encoded in PostgreSQL's binary COPY format (`BinaryCopy.ts`)
 * read back from PGlite as they were written (text with NULL and non-ASCII, int4,
 * `real[]` to float4 precision, empty, non-finite, timestamptz), and
 * `makeBulkInsert` (COPY on PGlite, INSERT on PostgreSQL) writing the same rows
 * with generated columns filled, inside a transaction that can undo them.
 * The encoder's round trip runs on PGlite; the bulk insert on either pass.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { layerPglite } from "../../layers/Database.js"
import { encodeBinaryCopy } from "../../src/db/BinaryCopy.js"
import { makeBulkInsert } from "../../src/db/BulkInsert.js"
import { databaseKind, testDatabaseLayer } from "../support/database.js"

const at = new Date("2026-11-26T16:30:00.123Z")
const before2000 = new Date("1999-12-31T23:59:59.999Z")
/** Values as float4 holds them (read back, a `real[]` is parsed from its shortest decimal text). */
const float4 = (values: ReadonlyArray<number>) => values.map(Math.fround)
const embedding = Array.from({ length: 384 }, (_, i) => Math.sin(i + 1) / 7)

describe("binary COPY on PGlite", () => {
  layer(layerPglite({ dataDir: undefined }), { timeout: "60 seconds" })((it) => {
    it.effect("rows come back as encoded", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`create table copied (n int4, label text, reals real[], at timestamptz)`
        const bytes = encodeBinaryCopy(
          ["int4", "text", "float4[]", "timestamptz"],
          [
            [1, "plain", embedding, at],
            [-2147483648, "ünïcødé ✓ 日本", [], before2000],
            [2147483647, null, [Number.NaN, Number.POSITIVE_INFINITY, -0.5], null],
            [null, "", [1e-40, 3.4e38], new Date(0)]
          ]
        )
        yield* sql.unsafe("copy copied (n, label, reals, at) from '/dev/blob' with (format binary)", [bytes])
        const rows = yield* sql<{ n: number | null; label: string | null; reals: Array<number>; at: Date | null }>`
          select n, label, reals, at from copied order by n nulls last`
        expect(rows.map((r) => [r.n, r.label, r.at])).toEqual([
          [-2147483648, "ünïcødé ✓ 日本", before2000],
          [1, "plain", at],
          [2147483647, null, null],
          [null, "", new Date(0)]
        ])
        expect(float4(rows[1]!.reals)).toEqual(float4(embedding))
        expect(rows[0]!.reals).toEqual([])
        expect(rows[2]!.reals).toEqual([Number.NaN, Number.POSITIVE_INFINITY, -0.5])
        expect(float4(rows[3]!.reals)).toEqual(float4([1e-40, 3.4e38]))
        const [dims] = yield* sql<{ lower: number; length: number }>`
          select array_lower(reals, 1) as lower, array_length(reals, 1) as length from copied where n = 1`
        expect(dims).toEqual({ lower: 1, length: 384 })
      }))

    it.effect("text and numbers alone fill the buffer past its first size", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`create table texts (n int4, body text)`
        const rows = Array.from({ length: 300 }, (_, n) => [n, `${n} ${"é".repeat(500 + n)}`] as const)
        const bytes = encodeBinaryCopy(["int4", "text"], rows)
        yield* sql.unsafe("copy texts (n, body) from '/dev/blob' with (format binary)", [bytes])
        const back = yield* sql<{ n: number; body: string }>`select n, body from texts order by n`
        expect(back.map((r) => [r.n, r.body])).toEqual(rows)
      }))
  })
})

describe(`bulk insert (${databaseKind})`, () => {
  layer(testDatabaseLayer, { timeout: "60 seconds" })((it) => {
    const columns = { id: "text", position: "int4", note: "text", embedding: "float4[]", at: "timestamptz" } as const

    it.effect("writes the rows, generated columns filled; a transaction undoes them", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const bulkInsert = yield* makeBulkInsert
        yield* sql`create table bulk (
          seq bigint generated always as identity,
          id text primary key, position int4 not null, note text, embedding real[] not null, at timestamptz not null,
          tsv tsvector generated always as (to_tsvector('english', coalesce(note, ''))) stored)`
        // more rows than one statement's batch on either database
        const rows = Array.from({ length: 520 }, (_, i) => ({
          id: `row_${i}`,
          position: i,
          note: i % 2 === 0 ? `parcel delivery ${i}` : null,
          embedding: embedding.map((x) => x * (i + 1)),
          at
        }))
        yield* bulkInsert("bulk", columns, rows)
        const back = yield* sql<{ seq: string; id: string; position: number; note: string | null; embedding: Array<number>; at: Date }>`
          select seq::text as seq, id, position, note, embedding, at from bulk order by bulk.seq`
        expect(back.map(({ embedding: _, seq: __, ...rest }) => rest)).toEqual(rows.map(({ embedding: _, ...rest }) => rest))
        expect(back.map((r) => r.seq)).toEqual(rows.map((_, i) => String(i + 1)))
        back.forEach((r, i) => expect(float4(r.embedding)).toEqual(float4(rows[i]!.embedding)))
        const [found] = yield* sql<{ n: string }>`select count(*)::text as n from bulk where tsv @@ to_tsquery('english', 'parcel')`
        expect(found).toEqual({ n: "260" })

        const undone = yield* Effect.either(
          sql.withTransaction(
            Effect.zipRight(bulkInsert("bulk", columns, [{ ...rows[0]!, id: "undone" }]), Effect.fail("undo" as const))
          )
        )
        expect(undone).toEqual(Either.left("undo"))
        expect(yield* sql<{ n: string }>`select count(*)::text as n from bulk where id = 'undone'`).toEqual([{ n: "0" }])
        // no rows: no statement
        yield* bulkInsert("bulk", columns, [])
      }))
  })
})
