/** Liveness, readiness, the OpenAPI document, and the human docs pages. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { Api } from "../../schema/Api.js"
import { ErrorCatalog, ServiceUnavailable } from "../../schema/Errors.js"
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

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** The catalog's descriptions are Markdown with `code` spans (the README shows them as such): render those. */
export const inlineMarkdown = (s: string) =>
  s
    .split(/(`[^`]*`)/)
    .map((part) =>
      part.length > 1 && part.startsWith("`") && part.endsWith("`")
        ? `<code>${escapeHtml(part.slice(1, -1))}</code>`
        : escapeHtml(part)
    )
    .join("")

/** `/docs/errors`: every error code with its status, the target of `doc_url`. */
const errorsPage = HttpServerResponse.html(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Error codes</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem}
td,th{padding:.35rem .6rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}code{font-size:.95em}</style>
</head><body><h1>Error codes</h1>
<p>Every error body is <code>{"error": {"type", "code", "message", "param", "doc_url"}, "meta": {"request_id"}}</code>.</p>
<table><tr><th>Code</th><th>Status</th><th>Type</th><th>Meaning</th></tr>
${ErrorCatalog.map(
  (c) =>
    `<tr id="${c.code}"><td><code>${c.code}</code></td><td>${c.status}</td><td>${c.type}</td><td>${inlineMarkdown(c.description)}</td></tr>`
).join("\n")}
</table></body></html>`)

/**
 * `/docs`, Scalar's API reference. Its page inlines megabytes of script and
 * the whole OpenAPI document, so its module is loaded and the page made on the
 * first visit, not at start.
 */
const ScalarRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const page = yield* Effect.cached(
      Effect.promise(() => import("@effect/platform/HttpApiScalar")).pipe(
        Effect.flatMap((Scalar) => HttpLayerRouter.toHttpEffect(Scalar.layerHttpLayerRouter({ api: Api, path: "/docs" }))),
        Scope.extend(scope)
      )
    )
    yield* router.get("/docs", Effect.scoped(Effect.flatten(page)))
  })
)

export const DocsRoutes = Layer.mergeAll(
  ScalarRoute,
  HttpApiBuilder.Router.use((router) => router.get("/docs/errors", Effect.succeed(errorsPage)))
)
