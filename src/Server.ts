/**
 * The composition root: the API with its handlers, the edge, the services and
 * their layers, startup work (migrations, bootstrap) and background fibers.
 * `main.ts` runs it with layers from the environment; tests with test layers.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { Api } from "../schema/Api.js"
import * as Ai from "../layers/Ai.js"
import type { Database } from "../layers/Database.js"
import { IdGenerator } from "../layers/IdGenerator.js"
import type { Fetcher } from "../layers/Fetcher.js"
import * as JobQueue from "../layers/JobQueue.js"
import type { Mailer } from "../layers/Mailer.js"
import type * as RateLimitStore from "../layers/RateLimitStore.js"
import { AdminRoutes } from "./admin/Http.js"
import { Agents } from "./agents/Agents.js"
import { AgentsRepo } from "./agents/AgentsRepo.js"
import { AgentsHttp } from "./agents/Http.js"
import { ApiKeys } from "./auth/ApiKeys.js"
import { AuthenticationLive, Authenticator } from "./auth/Authentication.js"
import { AppConfig, type AppConfigShape } from "./Config.js"
import { migrations } from "./db/migrations/index.js"
import { runMigrations } from "./db/Migrator.js"
import { Emails } from "./email/Emails.js"
import { Outbox } from "./events/Outbox.js"
import { Glossary } from "./glossary/Glossary.js"
import { GlossaryHttp } from "./glossary/Http.js"
import { CursorKeyLive } from "./http/CursorSecret.js"
import { EdgeLive } from "./http/Edge.js"
import { Paginator } from "./http/Pagination.js"
import { makeNodeServer } from "./http/NodeServer.js"
import { IdempotencyStore } from "./http/Idempotency.js"
import { RequestRateLimiter } from "./http/RateLimit.js"
import { Categories } from "./qa/Categories.js"
import { QaHttp } from "./qa/Http.js"
import { QaItems } from "./qa/QaItems.js"
import { regenerateQueue, Regeneration } from "./qa/Regeneration.js"
import { SourceTexts } from "./qa/SourceTexts.js"
import { DocsRoutes, SystemHttp } from "./system/Http.js"
import { TicketsHttp } from "./tickets/Http.js"
import { Tickets } from "./tickets/Tickets.js"
import { TicketsRepo } from "./tickets/TicketsRepo.js"
import { DeliverySignal } from "./webhooks/Signal.js"
import { WebhooksRepo } from "./webhooks/WebhooksRepo.js"
import { Dispatcher } from "./webhooks/Dispatcher.js"
import { WebhooksHttp } from "./webhooks/Http.js"
import { Webhooks } from "./webhooks/Webhooks.js"
import { bootstrap } from "./workspaces/Bootstrap.js"
import { Workspaces } from "./workspaces/Workspaces.js"

export interface ServerLayers {
  readonly config: AppConfigShape
  readonly database: Layer.Layer<SqlClient.SqlClient | Database, SqlError>
  readonly rateLimitStore: Layer.Layer<RateLimiter.RateLimiterStore>
  readonly ids: Layer.Layer<IdGenerator>
  readonly mailer: Layer.Layer<Mailer>
  readonly fetcher: Layer.Layer<Fetcher>
  /** Default: the provider `config.ai` names. */
  readonly ai?: Layer.Layer<Ai.Ai>
  /** Default: the knowledge area's indexed sources. */
  readonly sourceTexts?: Layer.Layer<SourceTexts>
}
export type { RateLimitStore }

/** Application services over the database; what handlers and the edge use. */
const KnowledgeServices = Layer.mergeAll(
  QaItems.Default,
  Categories.Default,
  Regeneration.Default,
  Glossary.Default
).pipe(Layer.provide(Agents.Default))

const Services = Layer.mergeAll(
  Agents.Default,
  Authenticator.Default,
  Webhooks.Default,
  Dispatcher.Default,
  Tickets.Default,
  KnowledgeServices
).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      AgentsRepo.Default,
      TicketsRepo.Default,
      Outbox.Default.pipe(Layer.provideMerge(Layer.mergeAll(WebhooksRepo.Default, DeliverySignal.Default))),
      Emails.Default,
      ApiKeys.Default,
      Workspaces.Default,
      IdempotencyStore.Default,
      Paginator.Default,
      RequestRateLimiter.Default
    )
  )
)

const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([AgentsHttp, WebhooksHttp, TicketsHttp, QaHttp, GlossaryHttp, SystemHttp]),
  Layer.provide(AuthenticationLive)
)

/** Migrations, then the first-start bootstrap: done before the port opens. */
const Startup = Layer.effectDiscard(
  Effect.gen(function* () {
    const applied = yield* runMigrations(migrations)
    if (applied.length > 0) yield* Effect.logInfo(`applied migrations: ${applied.map(([, name]) => name).join(", ")}`)
    yield* bootstrap
  })
)

/** Supervised background work: restarted with backoff if it ever fails. */
const supervised = (name: string, every: Duration.DurationInput, work: Effect.Effect<void>) =>
  Layer.scopedDiscard(
    work.pipe(
      Effect.repeat(Schedule.spaced(every)),
      Effect.catchAllCause((cause) => Effect.logError(`${name} failed; restarting`, cause)),
      Effect.repeat(Schedule.exponential("1 second").pipe(Schedule.union(Schedule.spaced("1 minute")))),
      Effect.annotateLogs("worker", name),
      Effect.forkScoped
    )
  )

/** A worker that loops forever on its own; restarted with backoff if it fails. */
const supervisedLoop = (name: string, loop: Effect.Effect<never>) =>
  Layer.scopedDiscard(
    loop.pipe(
      Effect.catchAllCause((cause) => Effect.logError(`${name} failed; restarting`, cause)),
      Effect.repeat(Schedule.exponential("1 second").pipe(Schedule.union(Schedule.spaced("1 minute")))),
      Effect.annotateLogs("worker", name),
      Effect.forkScoped
    )
  )

const Workers = Layer.mergeAll(
  Layer.unwrapEffect(Effect.map(Dispatcher, (dispatcher) => supervisedLoop("webhook-dispatcher", dispatcher.run))),
  Layer.unwrapEffect(
    Effect.map(IdempotencyStore, (store) => supervised("idempotency-sweeper", "10 minutes", store.sweep()))
  ),
  Layer.unwrapEffect(Effect.map(Emails, (emails) => supervisedLoop("email-sender", emails.run))),
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const regeneration = yield* Regeneration
      const config = yield* AppConfig
      return JobQueue.layerWorker({
        queue: regenerateQueue,
        concurrency: 2,
        pollMillis: config.qaRegeneratePollMillis,
        handle: regeneration.handle
      })
    })
  )
)

// Until the knowledge area is composed here, no source is indexed and regeneration finds no text. With it:
// Layer.effect(SourceTexts, Effect.map(KnowledgeRepo, (k) => ({ indexedTexts: k.indexedTexts })))
const noSourceTexts = Layer.succeed(SourceTexts, { indexedTexts: () => Effect.succeed([]) })

/**
 * Everything, listening on `config.port` (0 picks a free port). The output
 * keeps the services so tests can reach the HttpServer address and seed data.
 */
export const makeServer = (layers: ServerLayers) => {
  const Infra = Layer.mergeAll(
    layers.database,
    layers.ids,
    layers.mailer,
    layers.fetcher,
    layers.ai ?? (layers.config.ai.provider === "openai" ? Ai.layerOpenAi(layers.config.ai) : Ai.layerLocal),
    layers.sourceTexts ?? noSourceTexts,
    JobQueue.layerPostgres.pipe(Layer.provide(layers.database)),
    Layer.succeed(AppConfig, layers.config),
    CursorKeyLive.pipe(Layer.provide(Layer.succeed(AppConfig, layers.config))),
    RateLimiter.layer.pipe(Layer.provide(layers.rateLimitStore))
  )
  const Http = HttpApiBuilder.serve().pipe(
    Layer.provide([DocsRoutes, AdminRoutes]),
    Layer.provide(ApiLive),
    Layer.provide(EdgeLive),
    HttpServer.withLogAddress,
    Layer.provideMerge(NodeHttpServer.layer(makeNodeServer({ docsUrl: `${layers.config.publicUrl}/docs/errors` }), { port: layers.config.port, host: layers.config.host }))
  )
  return Layer.mergeAll(Http, Workers).pipe(
    Layer.provide(Startup),
    Layer.provideMerge(Services),
    Layer.provideMerge(Infra)
  )
}
