/** Liveness, readiness and the OpenAPI document (the human docs pages are `Docs.ts`). */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { ServiceUnavailable } from "../../schema/Errors.js"
import { Database } from "../../layers/Database.js"
import { Lifecycle } from "../../layers/Lifecycle.js"
import { migrations } from "../db/migrations/index.js"
import { migrationsApplied } from "../db/Migrator.js"
import * as SqlClient from "@effect/sql/SqlClient"

export const SystemHttp = HttpApiBuilder.group(Api, "system", (handlers) =>
  Effect.gen(function* () {
    const database = yield* Database
    const lifecycle = yield* Lifecycle
    const sql = yield* SqlClient.SqlClient
    const unavailable = (message: string) => new ServiceUnavailable({ message })
    // made on the first request, not at start: it walks the schemas of every endpoint
    const openApi = yield* Effect.cached(Effect.sync(() => HttpServerResponse.unsafeJson(OpenApi.fromApi(Api))))
    return handlers
      .handle("health", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () =>
        Effect.gen(function* () {
          if (yield* lifecycle.draining) return yield* unavailable("The service is shutting down")
          yield* database.ping.pipe(Effect.mapError(() => unavailable("The database is not reachable")))
          const applied = yield* migrationsApplied(migrations).pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.mapError(() => unavailable("The database is not reachable"))
          )
          if (!applied) return yield* unavailable("Database migrations are not applied yet")
          return { status: "ready" as const, database: database.kind, migrations: "applied" as const }
        })
      )
      .handle("openapi", () => openApi)
  })
)
