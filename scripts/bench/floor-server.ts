/**
 * The framework's floor for `GET /v1/agents/{id}`: a bare `HttpApi` on
 * `@effect/platform-node` with one endpoint and `@effect/sql-pg`, doing the bare
 * baseline's work (the key by SHA-256, then the agent) and nothing else: no
 * edge, no logs, no metrics, no rate limit, no cache, no spans (as the service
 * runs without a trace collector). Beside the bare baseline it
 * splits the service's cost into the framework's share and the service's own.
 * Run as a child with PORT and DATABASE_URL, like baseline-server.ts.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import { host } from "./lib.js"

const wellFormedKey = /^(sk|widget_pk|pk)_(test|live)_[A-Za-z0-9]{16,128}$/

const Agent = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("agent"),
  type: Schema.String,
  name: Schema.String,
  slug: Schema.String,
  instructions: Schema.NullOr(Schema.String),
  welcome_message: Schema.NullOr(Schema.String),
  allowed_origins: Schema.Array(Schema.String),
  knowledge_refresh: Schema.Struct({ schedule: Schema.String, gone_grace_days: Schema.Number }),
  created_at: Schema.String,
  updated_at: Schema.String
})
const Envelope = Schema.Struct({ data: Agent, meta: Schema.Struct({ request_id: Schema.String }) })

const idParam = HttpApiSchema.param("id", Schema.String)

class Agents extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/agents/${idParam}`
      .addSuccess(Envelope)
      .addError(HttpApiError.Unauthorized)
      .addError(HttpApiError.NotFound)
  )
  .add(HttpApiEndpoint.get("ready")`/readyz`.addSuccess(Schema.Struct({ status: Schema.Literal("ready") }))) {}
class Api extends HttpApi.make("floor").add(Agents) {}

const AgentsLive = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return handlers.handle("ready", () => Effect.succeed({ status: "ready" as const })).handle("retrieve", ({ path }) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const token = /^Bearer\s+(.*)$/i.exec(request.headers["authorization"]?.trim() ?? "")?.[1]?.trim()
        if (token === undefined || !wellFormedKey.test(token)) return yield* new HttpApiError.Unauthorized()
        const hash = createHash("sha256").update(token).digest("hex")
        const keys = yield* sql<{ workspace_id: string; environment: string; revoked_at: Date | null }>`
          select k.*, w.plan from api_keys k join workspaces w on w.id = k.workspace_id where k.key_hash = ${hash}`
        const key = keys[0]
        if (key === undefined || key.revoked_at !== null) return yield* new HttpApiError.Unauthorized()
        const rows = yield* sql<{
          id: string
          type: string
          name: string
          slug: string
          instructions: string | null
          welcome_message: string | null
          allowed_origins: ReadonlyArray<string>
          refresh_schedule: string
          gone_grace_days: number
          created_at: Date
          updated_at: Date
        }>`select seq::text as seq, id, type, name, slug, instructions, welcome_message, allowed_origins, refresh_schedule,
             gone_grace_days, created_at, updated_at
           from agents where id = ${path.id} and workspace_id = ${key.workspace_id}
             and environment = ${key.environment} and deleted_at is null`
        const a = rows[0]
        if (a === undefined) return yield* new HttpApiError.NotFound()
        return {
          data: {
            id: a.id,
            object: "agent" as const,
            type: a.type,
            name: a.name,
            slug: a.slug,
            instructions: a.instructions,
            welcome_message: a.welcome_message,
            allowed_origins: a.allowed_origins,
            knowledge_refresh: { schedule: a.refresh_schedule, gone_grace_days: a.gone_grace_days },
            created_at: a.created_at.toISOString(),
            updated_at: a.updated_at.toISOString()
          },
          meta: { request_id: `req_${crypto.randomUUID().replace(/-/g, "").slice(0, 24)}` }
        }
      }).pipe(Effect.catchTag("SqlError", Effect.die))
    )
  })
)

const port = Number(process.env["PORT"])
const ApiLive = HttpApiBuilder.api(Api).pipe(Layer.provide(AgentsLive))
const ServerLive = HttpApiBuilder.serve().pipe(
  Layer.provide(ApiLive),
  Layer.provide(NodeHttpServer.layer(createServer, { port, host })),
  Layer.provide(PgClient.layerConfig({ url: Config.redacted("DATABASE_URL"), maxConnections: Config.succeed(10) })),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)),
  // the service's own setting without a trace collector: no spans made
  Layer.provide(Layer.setTracerEnabled(false)),
  Layer.provide(Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, () => true))
)

NodeRuntime.runMain(Layer.launch(ServerLive))
