/**
 * Many rows into one table, for writes that need no rows back (the knowledge
 * pipeline's chunks and Q&A). On PGlite one binary COPY per batch: PostgreSQL
 * in WebAssembly parses a `real[]` text literal's floats slowly, and binary COPY
 * hands them over as floats. On PostgreSQL multi-row INSERTs, which it parses
 * natively (node-postgres has no COPY of its own). Either way, defaults and
 * generated columns (identity `seq`, `tsv`) are filled as by an INSERT, and the
 * statements run on the caller's connection, so inside its transaction.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import { Database } from "../../layers/Database.js"
import { type CopyType, type CopyValues, encodeBinaryCopy } from "./BinaryCopy.js"
import { realArrayLiteral } from "./Columns.js"

/** A table's columns that a bulk insert writes, each with its type. */
export type BulkColumns = Readonly<Record<string, CopyType>>

/** A row: a value (or `null`) for each column. */
export type BulkRow<C extends BulkColumns> = { readonly [K in keyof C]: CopyValues[C[K]] | null }

// rows per statement: an INSERT stays well below the parameter limit, a COPY's bytes bounded
const insertBatch = 50
const copyBatch = 500

/** `(a, b, c)`: the names are the code's own, never input. */
const columnList = (columns: BulkColumns) => `(${Object.keys(columns).join(", ")})`

/** `bulkInsert(table, columns, rows)`: inserts `rows` into `table`, returning nothing. */
export const makeBulkInsert = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const database = yield* Database

  const copy = <C extends BulkColumns>(table: string, columns: C, rows: ReadonlyArray<BulkRow<C>>) => {
    const names = Object.keys(columns)
    const types = names.map((name) => columns[name]!)
    const statement = `copy ${table} ${columnList(columns)} from '/dev/blob' with (format binary)`
    // the PGlite client's convention: a COPY from '/dev/blob' reads its one Uint8Array parameter
    return sql.unsafe(statement, [encodeBinaryCopy(types, rows.map((row) => names.map((name) => row[name])))])
  }

  const insert = <C extends BulkColumns>(table: string, columns: C, rows: ReadonlyArray<BulkRow<C>>) =>
    sql`insert into ${sql(table)} ${sql.insert(
      rows.map((row) =>
        Object.fromEntries(
          Object.keys(columns).map((name) => {
            const value = row[name]
            return [name, columns[name] === "float4[]" && value !== null ? realArrayLiteral(value as ReadonlyArray<number>) : value]
          })
        )
      )
    )}`

  return <C extends BulkColumns>(
    table: string,
    columns: C,
    rows: ReadonlyArray<BulkRow<C>>
  ): Effect.Effect<void, SqlError> =>
    Effect.gen(function* () {
      const [write, batch] = database.kind === "pglite" ? [copy, copyBatch] : [insert, insertBatch]
      for (let i = 0; i < rows.length; i += batch) yield* write(table, columns, rows.slice(i, i + batch))
    })
})
