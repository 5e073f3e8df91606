/**
 * PGlite behind `SqlClient`: a connection over one PGlite session (in this
 * thread or on its own, `Thread.ts`), usable while the session still opens,
 * and the template database the build writes. `layers/Database.ts` makes the
 * `Database` service of it (`layerPglite`).
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import type { Results, RowMode } from "@electric-sql/pglite"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { makeSessionLock } from "./SessionLock.js"
import type { PgliteSession, QueryOptions } from "./Thread.js"

type TransformRows = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

/** `copy <table> (<columns>) from '/dev/blob' ...`: a COPY reading the bytes given with the statement. */
const copyFromBlob = /^\s*copy\s[^;]*\sfrom\s+'\/dev\/blob'[^;]*;?\s*$/i

/**
 * The bytes of a COPY from `/dev/blob`, by this client's convention: such a
 * statement with one parameter, a `Uint8Array`, reads that parameter, e.g.
 * `sql.unsafe("copy t (a, b) from '/dev/blob' with (format binary)", [bytes])`.
 * It runs like any statement, so inside `sql.withTransaction` too.
 */
const copyBytes = (sql: string, params: ReadonlyArray<unknown>): Uint8Array | undefined =>
  params.length === 1 && params[0] instanceof Uint8Array && copyFromBlob.test(sql) ? params[0] : undefined

const makePgliteConnection = (db: PgliteSession): Connection => {
  // Like node-postgres: no parameters -> simple protocol (multi-statement SQL
  // works, e.g. in migrations); with parameters -> one prepared statement.
  const statement = (sql: string, params: ReadonlyArray<unknown>, rowMode: RowMode): Promise<Array<Results>> => {
    const bytes = copyBytes(sql, params)
    if (bytes !== undefined) {
      return db.query<Record<string, unknown>>(sql, [], { rowMode, blob: new Blob([bytes as Uint8Array<ArrayBuffer>]) })
        .then((result) => [result])
    }
    return params.length === 0
      ? db.exec(sql, { rowMode })
      : db.query<Record<string, unknown>>(sql, params as Array<unknown>, { rowMode }).then((result) => [result])
  }
  const run = (sql: string, params: ReadonlyArray<unknown>, rowMode: RowMode) =>
    Effect.tryPromise({
      try: () => statement(sql, params, rowMode),
      catch: (cause) =>
        cause instanceof NotOpened
          ? new SqlError({ cause: cause.cause, message: cause.message })
          : new SqlError({ cause, message: "Failed to execute statement" })
    })

  // node-postgres returns one result per statement only for multi-statement SQL.
  const unwrap = (results: Array<Results>) => (results.length === 1 ? results[0] : results)

  const rows = (sql: string, params: ReadonlyArray<unknown>, transformRows: TransformRows) =>
    Effect.map(run(sql, params, "object"), (results) => {
      if (results.length > 1) return results.map((result) => result.rows)
      const first = results[0]?.rows ?? []
      return transformRows ? transformRows(first) : first
    })

  return {
    execute: rows,
    executeUnprepared: rows,
    executeRaw: (sql, params) => Effect.map(run(sql, params, "object"), unwrap),
    executeValues: (sql, params) =>
      Effect.map(run(sql, params, "array"), (results) => (results[0]?.rows ?? []) as Array<Array<unknown>>),
    // PGlite has no cursors over this API; results are materialised first.
    executeStream: (sql, params, transformRows) => Stream.fromIterableEffect(rows(sql, params, transformRows))
  }
}

/** Loaded on first use: a PostgreSQL-only process never loads PGlite (see `Open.ts`). */
export const openPglite = (dataDir: string | undefined, template: string | undefined): Promise<PgliteSession> =>
  import("./Open.js").then((pglite) => pglite.openPglite(dataDir, template))

/** Why a statement failed: the session never opened. */
class NotOpened extends Error {
  constructor(override readonly cause: unknown) {
    super("Failed to start PGlite", { cause })
  }
}

/**
 * A session still opening, usable at once: its statements wait for the open
 * (and fail with `NotOpened` if it failed). So the service's layers build while
 * PostgreSQL starts on its thread; the first statement (the migrations) waits.
 */
const whenOpen = (opening: Promise<PgliteSession>): PgliteSession => {
  const opened = opening.catch((cause: unknown) => Promise.reject(new NotOpened(cause)))
  // a failure is reported by the first statement, not as an unhandled rejection
  opened.catch(() => undefined)
  return {
    exec: (sql, options) => opened.then((db) => db.exec(sql, options)),
    query: <T>(sql: string, params: Array<unknown>, options: QueryOptions) =>
      opened.then((db) => db.query<T>(sql, params, options)),
    close: () => opened.then((db) => db.close(), () => undefined)
  }
}

/** Closes the session with the scope, whoever started opening it. */
export const acquirePglite = (open: () => Promise<PgliteSession>) =>
  Effect.acquireRelease(Effect.sync(() => whenOpen(open())), (db) => Effect.ignoreLogged(Effect.tryPromise(() => db.close())))

/** A SqlClient over one PGlite session (in this thread or another, see `Thread.ts`). */
export const pgliteClient = (db: PgliteSession) =>
  Effect.gen(function*() {
    const connection = makePgliteConnection(db)
    // PGlite is a single session. A statement on its own holds the lock shared while it runs (statements are
    // posted to the session's thread as they come, it runs them in order); a transaction holds it exclusive
    // from BEGIN to COMMIT/ROLLBACK (the lock lives in the acquirer's Scope), so no other fiber's statement
    // can land inside someone else's transaction (`SessionLock.ts`).
    const session = makeSessionLock()
    const acquire = (exclusive: boolean): Connection.Acquirer =>
      Effect.uninterruptibleMask((restore) =>
        restore(session.take(exclusive)).pipe(
          Effect.zipRight(Effect.addFinalizer(() => session.release(exclusive))),
          Effect.as(connection)
        )
      )
    return yield* SqlClient.make({
      acquirer: acquire(false),
      transactionAcquirer: acquire(true),
      compiler: PgClient.makeCompiler(),
      spanAttributes: [
        ["db.system.name", "postgresql"],
        ["db.namespace", "pglite"]
      ]
    })
  })

/**
 * Writes into `dir` (new or empty) a database after `prepare` (the build
 * passes the migrations) and pgvector, closed cleanly: the template that
 * `layerPglite` copies into an empty data dir at a first start. Its cluster
 * holds the one database PGlite opens, `postgres`.
 */
export const writePgliteTemplate = <E>(
  prepare: Effect.Effect<unknown, E, SqlClient.SqlClient>,
  dir: string
): Effect.Effect<void, E | SqlError> =>
  Effect.scoped(
    Effect.gen(function*() {
      const db = yield* acquirePglite(() => openPglite(dir, undefined))
      const sql = yield* pgliteClient(db)
      yield* prepare.pipe(Effect.provideService(SqlClient.SqlClient, sql))
      // The service only ever uses `postgres`. Without initdb's two template databases (nothing here creates a
      // database) a first start copies 560 files, not 1,160: creating a file costs far more than its bytes.
      for (const name of ["template0", "template1"]) {
        yield* sql.unsafe(`alter database ${name} is_template false`)
        yield* sql.unsafe(`drop database ${name}`)
      }
    })
  ).pipe(Effect.provide(Reactivity.layer))
