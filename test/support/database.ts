/**
 * Test database: a throwaway PostgreSQL database when DATABASE_URL is set,
 * otherwise an in-memory PGlite. Each build of `testDatabaseLayer` is isolated.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import { type Database, layerPg, layerPglite } from "../../layers/Database.js"

const databaseUrl = process.env.DATABASE_URL

export const databaseKind: "pglite" | "postgres" = databaseUrl ? "postgres" : "pglite"

// Creates `t_<hex>` through a one-connection admin client on the URL's
// database (pg, via PgClient, which has types), serves `layerPg` for it, and
// drops it when the layer's scope closes (FORCE: ignore leftover sessions).
const freshPostgres = (url: string): Layer.Layer<SqlClient.SqlClient | Database, SqlError> =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const adminContext = yield* Layer.build(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
      const admin = Context.get(adminContext, SqlClient.SqlClient)
      const name = `t_${randomBytes(8).toString("hex")}`
      yield* admin`CREATE DATABASE ${admin(name)}`
      // Registered after the admin client, so it runs before the admin pool closes;
      // the test database's own pool (built below) closes before this.
      yield* Effect.addFinalizer(() =>
        admin`DROP DATABASE IF EXISTS ${admin(name)} WITH (FORCE)`.pipe(
          Effect.catchAll((error) => Effect.logWarning(`Could not drop test database ${name}`, error))
        )
      )
      const testUrl = new URL(url)
      testUrl.pathname = `/${name}`
      return layerPg({ url: Redacted.make(testUrl.toString()), maxConnections: 5 })
    })
  )

export const testDatabaseLayer: Layer.Layer<SqlClient.SqlClient | Database, SqlError> = databaseUrl
  ? freshPostgres(databaseUrl)
  : layerPglite({ dataDir: undefined })
