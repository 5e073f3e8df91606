/**
 * The composition root: the areas (each `src/<area>/Area.ts` gives its programs, the adapters of the ports it
 * serves, its API groups and its workers), what they share, startup work (migrations, bootstrap) and the order
 * of a stop. `main.ts` runs it with layers from the environment; tests with test layers.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Api } from "../schema/Api.js"
import type * as Ai from "../layers/Ai.js"
import type { Database } from "../layers/Database.js"
import type { IdGenerator } from "../layers/IdGenerator.js"
import { layerPostgres as JobQueuePostgres } from "../layers/jobqueue/Postgres.js"
import * as Lifecycle from "../layers/Lifecycle.js"
import * as Decoders from "../layers/Decoders.js"
import * as Extractor from "../layers/Extractor.js"
import type { Fetcher } from "../layers/Fetcher.js"
import type { FileStorage } from "../layers/FileStorage.js"
import * as Ocr from "../layers/Ocr.js"
import type { Mailer } from "../layers/Mailer.js"
import type * as RateLimitStore from "../layers/RateLimitStore.js"
import { AdminRoutes } from "./admin/Http.js"
import * as Agents from "./agents/Area.js"
import { ApiKeys } from "./auth/ApiKeys.js"
import { AuthenticationLive, Authenticator } from "./auth/Authentication.js"
import { AppConfig, type AppConfigShape } from "./Config.js"
import { ConsoleRoutes } from "./console/ConsoleBundle.js"
import * as Conversations from "./conversations/Area.js"
import * as Crawls from "./crawls/Area.js"
import { migrations } from "./db/migrations/index.js"
import * as Maintenance from "./db/Maintenance.js"
import { runMigrations } from "./db/Migrator.js"
import * as Email from "./email/Area.js"
import { Outbox } from "./events/Outbox.js"
import * as Files from "./files/Area.js"
import * as Forms from "./forms/Area.js"
import * as Glossary from "./glossary/Area.js"
import * as HttpPlumbing from "./http/Area.js"
import { CursorKeyLive } from "./http/CursorSecret.js"
import { EdgeLive } from "./http/Edge.js"
import { isolate } from "./Performance.js"
import * as Keys from "./keys/Area.js"
import * as Knowledge from "./knowledge/Area.js"
import { VectorIndex } from "./knowledge/VectorIndex.js"
import * as Leads from "./leads/Area.js"
import * as Qa from "./qa/Area.js"
import type { SourceTexts } from "./qa/SourceTexts.js"
import { inShutdownOrder } from "./Shutdown.js"
import * as System from "./system/Area.js"
import * as Tickets from "./tickets/Area.js"
import * as Training from "./training/Area.js"
import * as Usage from "./usage/Area.js"
import * as Webhooks from "./webhooks/Area.js"
import * as Widget from "./widget/Area.js"
import { bootstrap } from "./workspaces/Bootstrap.js"
import { Workspaces } from "./workspaces/Workspaces.js"

export interface ServerLayers {
  readonly config: AppConfigShape
  readonly database: Layer.Layer<SqlClient.SqlClient | Database, SqlError>
  readonly rateLimitStore: Layer.Layer<RateLimiter.RateLimiterStore>
  readonly ids: Layer.Layer<IdGenerator>
  readonly mailer: Layer.Layer<Mailer>
  readonly fetcher: Layer.Layer<Fetcher>
  readonly ai: Layer.Layer<Ai.Ai>
  /** Default: sharp and tesseract.js on the decoder processes. */
  readonly ocr?: Layer.Layer<Ocr.Ocr, never, Decoders.Decoders>
  readonly fileStorage: Layer.Layer<FileStorage>
  /** Default: the knowledge area's indexed sources. */
  readonly sourceTexts?: Layer.Layer<SourceTexts>
  /** Default: the readers on the decoder processes. */
  readonly extractor?: Layer.Layer<Extractor.Extractor, never, Decoders.Decoders>
}
export type { RateLimitStore }

/**
 * What every area uses: the outbox (its fan-out to webhook endpoints served by the webhooks area), e-mails,
 * keys and their authentication, workspaces, the edge's stores, and the job queue background work runs on.
 */
const Shared = Layer.mergeAll(
  Outbox.Default, Email.Live, ApiKeys.Default, Authenticator.Default, Workspaces.Default, HttpPlumbing.Live
).pipe(
  Layer.provide(Webhooks.FanOutLive),
  Layer.provideMerge(JobQueuePostgres)
)

/**
 * The ports one area names and another serves (the naming area may not import the serving one); each adapter
 * is exported by the area that serves it. Capturing a form's lead links it to its conversation.
 */
const Ports = Layer.mergeAll(Leads.LeadTargetLive, Training.SourceOwnerLive, Crawls.CrawlReportLive).pipe(
  Layer.provideMerge(Conversations.ConversationLinkLive)
)

/** The areas' programs, and the ports the edge uses (CORS origins, replays of kept streams). */
const Areas = Layer.mergeAll(
  Agents.Live, Conversations.Live, Files.Live, Forms.Live, Glossary.Live, Knowledge.Live, Leads.Live, Qa.Live,
  Tickets.Live, Training.Live, Usage.Live, Webhooks.Live, Widget.Live, Crawls.Live.pipe(Layer.provide(Knowledge.Live)),
  Agents.WidgetOriginsLive, Forms.FormOriginsLive, Conversations.ReplayableStreamsLive
).pipe(Layer.provide(Ports), Layer.provideMerge(Shared))

const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([
    Agents.ApiGroups, Webhooks.ApiGroups, Tickets.ApiGroups, Knowledge.ApiGroups, Training.ApiGroups,
    Files.ApiGroups, Qa.ApiGroups, Glossary.ApiGroups, System.ApiGroups, Conversations.ApiGroups,
    Leads.ApiGroups, Usage.ApiGroups, Widget.ApiGroups, Forms.ApiGroups, Keys.ApiGroups, Crawls.ApiGroups
  ]),
  Layer.provide(AuthenticationLive)
)

/** The routes beside the API. */
const Routes = Layer.mergeAll(System.Routes, AdminRoutes, Forms.Routes, ConsoleRoutes)

/** Each area's background fibers, built with only what they use. */
const Workers = Layer.mergeAll(
  Webhooks.Workers, HttpPlumbing.Workers, Email.Workers, Conversations.Workers, Qa.Workers, Knowledge.Workers,
  Crawls.Workers, Maintenance.Workers
)

/**
 * Migrations, retrieval's indexes, the first-start bootstrap, then the check of the stored vectors' embedding
 * space (which may queue their re-embedding): done before the port opens.
 */
const Startup = Layer.effectDiscard(
  Effect.gen(function* () {
    const applied = yield* runMigrations(migrations)
    if (applied.length > 0) yield* Effect.logInfo(`applied migrations: ${applied.map(([, name]) => name).join(", ")}`)
    yield* Effect.flatMap(VectorIndex, (index) => index.ensure)
    yield* bootstrap
    yield* Knowledge.checkEmbeddings
  })
)

/**
 * Everything, listening on `config.port` (0 picks a free port). The output
 * keeps the services so tests can reach the HttpServer address and seed data.
 */
export const makeServer = (layers: ServerLayers) => {
  const Infra = Layer.mergeAll(
    layers.ids,
    layers.mailer,
    layers.fetcher,
    layers.ai,
    Layer.merge(layers.ocr ?? Ocr.layerDecoders, layers.extractor ?? Extractor.layerDecoders).pipe(
      Layer.provide(
        Decoders.layerProcesses({
          processes: layers.config.ingest.concurrency,
          timeoutMillis: layers.config.ingest.extractTimeoutMillis,
          memoryMb: layers.config.ingest.extractMemoryMb
        })
      )
    ),
    layers.fileStorage,
    Layer.succeed(AppConfig, layers.config),
    Lifecycle.layer,
    CursorKeyLive.pipe(Layer.provide(Layer.succeed(AppConfig, layers.config))),
    // the request limiter takes from the store itself; the forms limiter uses `RateLimiter`
    RateLimiter.layer.pipe(Layer.provideMerge(layers.rateLimitStore))
  ).pipe(Layer.provideMerge(layers.database))
  const { Serving, drain } = HttpPlumbing.makeServing(layers.config)
  // Every request's fiber starts from the context the server is built in: only the API and the platform's
  // services (see `Performance.ts`). The API, the routes beside it and the edge are built first, each with what it
  // uses, so the server serves them.
  const Http = isolate(HttpApi.Api)(Serving).pipe(
    Layer.provide(ApiLive),
    Layer.provide(Routes),
    // the admin endpoint reads its token file
    Layer.provide([NodeFileSystem.layer, NodePath.layer]),
    Layer.provide(EdgeLive)
  )
  const Running = inShutdownOrder({
    listeners: drain.stopAccepting,
    workers: Workers,
    requests: drain.awaitInFlight,
    server: Http
  })
  return Running.pipe(
    // the API's router and the edge build while the migrations run: the main thread is free meanwhile (the
    // statements run on the database's side); `Running` (the port, then the workers) waits for both
    Layer.provide(Layer.mergeAll(Startup, ApiLive, EdgeLive)),
    Layer.provideMerge(Areas),
    Layer.provideMerge(layers.sourceTexts ?? Knowledge.SourceTextsLive),
    Layer.provideMerge(Infra)
  )
}
