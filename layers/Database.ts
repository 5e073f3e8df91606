/**
 * Database layers: PGlite (embedded, for dev/tests; its parts in `pglite/`)
 * and PostgreSQL (pg pool).
 * Both provide `SqlClient.SqlClient` with the same SQL dialect and the same
 * result types, plus `Database` (kind + ping for health checks, and whether
 * the pgvector extension is there: always on PGlite, through
 * `@electric-sql/pglite-pgvector`; on a server only if its operator installed it).
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { acquirePglite, openPglite, pgliteClient } from "./pglite/Client.js"
import type { PgliteSession } from "./pglite/Thread.js"

export class Database extends Context.Tag("Layers/Database")<
  Database,
  {
    readonly kind: "pglite" | "postgres"
    readonly ping: Effect.Effect<void, SqlError>
    /** pgvector is installed in this database: retrieval may cast `real[]` embeddings to `vector`. */
    readonly vector: boolean
    /**
     * The payloads any session sends with `pg_notify(channel, ...)`. PostgreSQL: through one LISTEN connection
     * (it goes quiet if that connection is lost, so a listener keeps a bound of its own). PGlite: nothing, ever:
     * one process owns the database, so no other process sends any.
     */
    readonly notifications: (channel: string) => Stream.Stream<string, SqlError>
  }
>() {}

/**
 * Installs pgvector when the server has it (a role without the right to
 * create extensions, or a server without the package, gets `false`: retrieval
 * then computes cosine over `real[]` itself). Installed already (every start
 * but a database's first): one catalog lookup, not the scan of the
 * extension files behind `pg_available_extensions`.
 */
const enableVector = (sql: SqlClient.SqlClient) => {
  const exists = (statement: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    SqlSchema.single({ Request: Schema.Void, Result: Schema.Struct({ exists: Schema.Boolean }), execute: () => statement })(undefined)
  const install = exists(sql`select exists (select 1 from pg_available_extensions where name = 'vector')`).pipe(
    Effect.flatMap((available) =>
      available.exists ? Effect.as(sql`create extension if not exists vector`, true) : Effect.succeed(false)
    )
  )
  return exists(sql`select exists (select 1 from pg_extension where extname = 'vector')`).pipe(
    Effect.flatMap((installed) => (installed.exists ? Effect.succeed(true) : install)),
    Effect.catchAll((error) => Effect.as(Effect.logWarning("pgvector not enabled; retrieval uses real[] cosine", error), false))
  )
}

/** What a PostgreSQL server has (PGlite's is known without a statement, see `layerPglite`). */
const postgresInfo = Layer.effect(
  Database,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const vector = yield* enableVector(sql)
    return { kind: "postgres" as const, ping: Effect.asVoid(sql`select 1`), vector, notifications: pg.listen }
  })
)

// PGlite

/**
 * Embedded PostgreSQL (WASM). `dataDir: undefined` keeps everything in memory.
 * An empty `dataDir` starts from `template` when there is one. `opening`: a
 * session already being opened (`main.ts` starts one on its own thread before
 * loading the service) instead of opening one here, in this thread.
 */
export const layerPglite = (options: {
  readonly dataDir: string | undefined
  /** A `writePgliteTemplate` directory copied into an empty `dataDir`. */
  readonly template?: string | undefined
  readonly opening?: Promise<PgliteSession> | undefined
}): Layer.Layer<SqlClient.SqlClient | Database, SqlError> => {
  const open = () => options.opening ?? openPglite(options.dataDir, options.template)
  const client = Layer.scoped(SqlClient.SqlClient, Effect.flatMap(acquirePglite(open), pgliteClient)).pipe(
    Layer.provide(Reactivity.layer)
  )
  // known without a statement (which would wait for the open): PGlite always has pgvector (see `openPglite`)
  const info = Layer.effect(
    Database,
    Effect.map(SqlClient.SqlClient, (sql) => ({
      kind: "pglite" as const,
      ping: Effect.asVoid(sql`select 1`),
      vector: true,
      notifications: () => Stream.never
    }))
  )
  return info.pipe(Layer.provideMerge(client))
}

// PostgreSQL

/** PostgreSQL through a node-postgres pool. */
export const layerPg = (options: {
  readonly url: Redacted.Redacted<string>
  readonly maxConnections?: number
}): Layer.Layer<SqlClient.SqlClient | Database, SqlError> =>
  postgresInfo.pipe(
    Layer.provideMerge(
      PgClient.layer({
        url: options.url,
        maxConnections: options.maxConnections ?? 10,
        // Return idle connections so scaled-down instances release server slots.
        idleTimeout: "30 seconds",
        // Also bounds the startup `SELECT 1` check.
        connectTimeout: "10 seconds",
        applicationName: "assistant-platform"
      })
    )
  )
