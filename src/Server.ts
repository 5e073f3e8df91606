/**
 * The composition root: the API with its handlers, the edge, the services and
 * their layers, startup work (migrations, bootstrap) and background fibers.
 * `main.ts` runs it with layers from the environment; tests with test layers.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Server as NodeServer } from "node:http"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Clock from "effect/Clock"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Api } from "../schema/Api.js"
import { ValidationFailed } from "../schema/Errors.js"
import type { ConversationId, LeadId } from "../schema/Ids.js"
import { Authentication } from "../schema/Auth.js"
import { FormId } from "../schema/Forms.js"
import type { Tenant } from "../schema/Tenant.js"
import * as Ai from "../layers/Ai.js"
import { Database } from "../layers/Database.js"
import { IdGenerator } from "../layers/IdGenerator.js"
import * as JobQueue from "../layers/JobQueue.js"
import { layerPostgres as JobQueuePostgres } from "../layers/jobqueue/Postgres.js"
import * as Lifecycle from "../layers/Lifecycle.js"
import { type Extractor, layerThreads } from "../layers/Extractor.js"
import type { Fetcher } from "../layers/Fetcher.js"
import type { FileStorage } from "../layers/FileStorage.js"
import type { Ocr } from "../layers/Ocr.js"
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
import { Conversations, IDLE_MAX_ATTEMPTS, IDLE_QUEUE, replyEventPruneEveryMillis } from "./conversations/Conversations.js"
import { ConversationsRepo } from "./conversations/ConversationsRepo.js"
import { ConversationsHttp, ReplayableStreamsLive } from "./conversations/Http.js"
import { Emails } from "./email/Emails.js"
import { Outbox } from "./events/Outbox.js"
import { Glossary } from "./glossary/Glossary.js"
import { GlossaryHttp } from "./glossary/Http.js"
import { Forms } from "./forms/Forms.js"
import { DemoRoutes } from "./forms/Demo.js"
import { ElementRoutes } from "./forms/ElementBundle.js"
import { ConsoleRoutes } from "./console/ConsoleBundle.js"
import { FormsHttp, FormsPreflightRoutes, FormsPublicHttp } from "./forms/Http.js"
import { IdentitySecrets } from "./forms/Identity.js"
import { type LeadFromForm, LeadTarget } from "./forms/LeadTarget.js"
import { FormSubmissions } from "./forms/Submit.js"
import { CursorKeyLive } from "./http/CursorSecret.js"
import { EdgeLive } from "./http/Edge.js"
import { isolate } from "./Isolate.js"
import { Paginator } from "./http/Pagination.js"
import { listening, makeNodeServer } from "./http/NodeServer.js"
import { defaultGraceMillis, makeDrain } from "./http/Drain.js"
import { IdempotencyStore } from "./http/Idempotency.js"
import { FormOrigins, WidgetOrigins } from "./http/Cors.js"
import { LeadsHttp } from "./leads/Http.js"
import { ConversationLink } from "./leads/ConversationLink.js"
import { Leads } from "./leads/Leads.js"
import { UsageHttp } from "./usage/Http.js"
import { Usage } from "./usage/Usage.js"
import { WidgetChat } from "./widget/Chat.js"
import { WidgetHttp } from "./widget/Http.js"
import { RequestRateLimiter } from "./http/RateLimit.js"
import { Categories } from "./qa/Categories.js"
import { QaHttp } from "./qa/Http.js"
import { QaItems } from "./qa/QaItems.js"
import { maxAttempts as regenerationMaxAttempts, regenerateQueue, Regeneration } from "./qa/Regeneration.js"
import { SourceTexts } from "./qa/SourceTexts.js"
import { Files } from "./files/Files.js"
import { FilesHttp } from "./files/Http.js"
import { KnowledgeHttp } from "./knowledge/Http.js"
import { INGEST_QUEUE, Knowledge } from "./knowledge/Knowledge.js"
import { KnowledgeRepo } from "./knowledge/KnowledgeRepo.js"
import { JOB_MAX_ATTEMPTS as INGEST_JOB_MAX_ATTEMPTS, Pipeline } from "./knowledge/Pipeline.js"
import { Retrieval } from "./knowledge/Retrieval.js"
import { QaRepo } from "./qa/QaRepo.js"
import { DocsRoutes, SystemHttp } from "./system/Http.js"
import { MetricsRoutes } from "./system/Metrics.js"
import { TicketsHttp } from "./tickets/Http.js"
import { Course } from "./training/Course.js"
import { TrainingHttp } from "./training/Http.js"
import { LessonSources } from "./training/LessonSources.js"
import { LessonSourceOwner } from "./training/Outcome.js"
import { Erasure } from "./tickets/Erasure.js"
import { Tickets } from "./tickets/Tickets.js"
import { Dispatcher } from "./webhooks/Dispatcher.js"
import { WebhookFanOut } from "./webhooks/FanOut.js"
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
  readonly ai: Layer.Layer<Ai.Ai>
  readonly ocr: Layer.Layer<Ocr>
  readonly fileStorage: Layer.Layer<FileStorage>
  /** Default: the knowledge area's indexed sources. */
  readonly sourceTexts?: Layer.Layer<SourceTexts>
  /** Default: a pool of extraction threads with the configured limits. */
  readonly extractor?: Layer.Layer<Extractor>
}
export type { RateLimitStore }

/** A lead captured in a conversation becomes its `lead_id`, and a deleted one stops being it (the leads area names the port, the conversations area serves it). */
const ConversationLinkLive = Layer.effect(
  ConversationLink,
  Effect.map(ConversationsRepo, (repo) => ({
    linkLead: (tenant: Tenant, conversationId: ConversationId, leadId: LeadId) => repo.setLead(tenant, conversationId, leadId),
    unlinkLead: (tenant: Tenant, leadId: LeadId) => repo.clearLead(tenant, leadId)
  }))
).pipe(Layer.provide(ConversationsRepo.Default))

const LeadsLive = Leads.Default.pipe(Layer.provide(ConversationLinkLive))

/** The programs handlers and the edge call; each brings the repositories it declares as dependencies. */
const Programs = Layer.mergeAll(
  Agents.Default,
  Webhooks.Default,
  Tickets.Default,
  Erasure.Default,
  Authenticator.Default,
  LeadsLive,
  Usage.Default
)

/** The edge answers the widget surface's CORS from the agents' `allowed_origins`. */
const WidgetOriginsLive = Layer.effect(
  WidgetOrigins,
  Effect.map(AgentsRepo, (repo) => ({ allowedOrigins: repo.allowedOriginsOf }))
).pipe(Layer.provide(AgentsRepo.Default))

const decodeFormId = Schema.decodeUnknownOption(FormId)

/** The edge answers the form endpoints' CORS from the forms' `allowed_origins` (ids that cannot be a form's: none). */
const FormOriginsLive = Layer.effect(
  FormOrigins,
  Effect.map(FormSubmissions, (submissions) => ({
    allowedOrigin: (formId: string, origin: string | undefined) =>
      Option.match(decodeFormId(formId), {
        onNone: () => Effect.succeed(Option.none<string>()),
        onSome: (id) => submissions.corsOrigin(id, origin)
      })
  }))
)

/**
 * Lead-target forms capture their leads through the leads area (the forms area
 * names the port, so neither imports the other). A lead needs an e-mail or a
 * phone: a form that asked for neither gets it as a field error.
 */
const LeadTargetLive = Layer.effect(
  LeadTarget,
  Effect.map(Leads, (leads) => ({
    captureLeadFromForm: (lead: LeadFromForm) =>
      leads
        .capture(
          lead.tenant,
          lead.agentId,
          {
            email: lead.email,
            name: lead.name,
            metadata: {
              form_id: lead.formId,
              identity_verified: lead.identityVerified,
              ...(lead.page === null ? {} : { page: lead.page }),
              fields: lead.fields
            }
          },
          { channel: "form", agentParam: "form" }
        )
        .pipe(
          Effect.map((captured) => ({ id: captured.id })),
          Effect.catchTag("ParameterMissing", (missing) =>
            Effect.fail(
              new ValidationFailed({
                message: "The submission has errors; see `error.field_errors`",
                field_errors: [{ field: "email", message: missing.message }]
              })
            )
          )
        )
  }))
).pipe(Layer.provide(LeadsLive))

/** Forms, over the tickets program its submissions create tickets with and the leads port. */
const FormsPrograms = Layer.mergeAll(Forms.Default, IdentitySecrets.Default, FormSubmissions.Default).pipe(
  Layer.provide(LeadTargetLive),
  Layer.provide(Tickets.Default)
)

/** One instance: the widget's chat programs share its live replies. */
const ConversationsLive = Conversations.Default.pipe(Layer.provide(Retrieval.Default))

/** Q&A, categories, glossary, files and knowledge, over the Q&A and agents repositories they share. */
const KnowledgePrograms = Layer.mergeAll(
  QaItems.Default,
  Categories.Default,
  Regeneration.Default,
  Glossary.Default,
  Files.Default,
  Knowledge.Default,
  // the pipeline reports a lesson's source through the training area (the knowledge area names the port)
  Pipeline.Default.pipe(Layer.provide(LessonSourceOwner)),
  Retrieval.Default,
  Course.Default,
  LessonSources.Default.pipe(Layer.provide(Knowledge.Default)),
  ConversationsLive,
  WidgetChat.Default.pipe(Layer.provide(ConversationsLive), Layer.provide(Tickets.Default))
).pipe(Layer.provide(Agents.Default), Layer.provideMerge(Layer.mergeAll(QaRepo.Default, AgentsRepo.Default)))

/**
 * What several areas share, wired here because no area may import the one that
 * implements it: the outbox with the webhooks area's fan-out, the e-mail outbox,
 * the stores the edge and the admin RPC use, and the
 * job queue every background worker runs on.
 */
const Shared = Layer.mergeAll(
  Outbox.Default.pipe(Layer.provide(WebhookFanOut)),
  Emails.Default,
  ApiKeys.Default,
  Workspaces.Default,
  IdempotencyStore.Default,
  Paginator.Default,
  RequestRateLimiter.Default
).pipe(Layer.provideMerge(JobQueuePostgres))

const Services = Layer.mergeAll(
  Programs,
  KnowledgePrograms,
  FormsPrograms,
  FormOriginsLive.pipe(Layer.provide(FormsPrograms)),
  // the edge replays a message's stream kept for an Idempotency-Key through the conversations area
  ReplayableStreamsLive.pipe(Layer.provide(KnowledgePrograms)),
  Dispatcher.Default,
  WidgetOriginsLive
).pipe(
  Layer.provideMerge(Shared)
)

/**
 * Each API group built with only the services its handlers use (see `Isolate.ts`): a request merges
 * the group's context into its own, so a small one keeps every copy of it small.
 */
const ApiGroups = [
  isolate(Authentication, Agents)(AgentsHttp),
  isolate(Authentication, Webhooks)(WebhooksHttp),
  isolate(Authentication, Tickets, Erasure)(TicketsHttp),
  isolate(Authentication, IdGenerator, Knowledge)(KnowledgeHttp),
  isolate(Authentication, IdGenerator, Course, LessonSources)(TrainingHttp),
  isolate(Authentication, IdGenerator, Files)(FilesHttp),
  isolate(Authentication, Categories, QaItems, Regeneration)(QaHttp),
  isolate(Authentication, Glossary)(GlossaryHttp),
  isolate(SqlClient.SqlClient, Database, Lifecycle.Lifecycle)(SystemHttp),
  isolate(Authentication, Conversations)(ConversationsHttp),
  isolate(Authentication, Leads)(LeadsHttp),
  isolate(Authentication, Usage)(UsageHttp),
  isolate(Authentication, Conversations, Leads, WidgetChat)(WidgetHttp),
  isolate(Authentication, Forms, IdentitySecrets)(FormsHttp),
  isolate(FormSubmissions)(FormsPublicHttp)
] as const

const ApiLive = HttpApiBuilder.api(Api).pipe(Layer.provide(ApiGroups), Layer.provide(AuthenticationLive))

/** Migrations, then the first-start bootstrap: done before the port opens. */
const Startup = Layer.effectDiscard(
  Effect.gen(function* () {
    const applied = yield* runMigrations(migrations)
    if (applied.length > 0) yield* Effect.logInfo(`applied migrations: ${applied.map(([, name]) => name).join(", ")}`)
    yield* bootstrap
  })
)

/** Sweeps of idempotency records are batched at least this far apart. */
const sweepMinGapMillis = 10 * 60_000

/**
 * A background fiber for the life of the server (JobQueue workers supervise themselves; others use `supervise`).
 * Forked once the port listens, it starts `workersStartAfterMillis` later: on one PGlite session every first claim
 * (a few statements per worker, cold caches) would otherwise run ahead of the first readiness checks.
 */
const background = <R>(work: Effect.Effect<never, never, R>) =>
  Layer.scopedDiscard(
    Effect.flatMap(AppConfig, (config) =>
      Effect.forkScoped(
        config.workersStartAfterMillis === undefined ? work : Effect.zipRight(Effect.sleep(config.workersStartAfterMillis), work)
      )
    )
  )

/** A JobQueue worker, started like the other background fibers (what `JobQueue.layerWorker` forks at once). */
const queueWorker = <R, P>(options: JobQueue.WorkerOptions<R, P>) =>
  Layer.unwrapEffect(Effect.map(JobQueue.JobQueue, (queue) => background(queue.worker(options))))

const AllWorkers = Layer.mergeAll(
  Layer.unwrapEffect(
    Effect.map(Dispatcher, (dispatcher) => background(dispatcher.run))
  ),
  Layer.unwrapEffect(
    Effect.map(IdempotencyStore, (store) =>
      background(
        JobQueue.supervise(
          "idempotency-sweeper",
          // sleeps until the oldest record expires (at least `sweepMinGap` apart), not on a fixed beat
          Effect.forever(
            Effect.flatMap(store.sweep(), (next) =>
              Effect.flatMap(Clock.currentTimeMillis, (at) => Effect.sleep(Math.max(sweepMinGapMillis, next - at)))
            )
          )
        )
      )
    )
  ),
  Layer.unwrapEffect(Effect.map(Emails, (emails) => background(emails.run))),
  Layer.unwrapEffect(
    Effect.map(Conversations, (conversations) =>
      background(
        JobQueue.supervise(
          "reply-events-pruner",
          Effect.forever(Effect.zipRight(conversations.pruneReplyEvents, Effect.sleep(replyEventPruneEveryMillis)))
        )
      )
    )
  ),
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const regeneration = yield* Regeneration
      const config = yield* AppConfig
      return queueWorker({
        queue: regenerateQueue,
        concurrency: 2,
        pollMillis: config.qaRegeneratePollMillis,
        // no record of its own to mark: a regeneration given up is in the log and `jobs_failed_total`
        maxAttempts: regenerationMaxAttempts,
        handle: regeneration.handle
      })
    })
  ),
  // one job per conversation (its key): ends it once idle
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const conversations = yield* Conversations
      const config = yield* AppConfig
      return queueWorker({
        queue: IDLE_QUEUE,
        concurrency: 4,
        // unset (test configs): only local enqueues wake it, so TestClock jumps do not spin it
        pollMillis: config.conversationIdlePollMillis ?? 366 * 24 * 60 * 60 * 1000,
        maxAttempts: IDLE_MAX_ATTEMPTS,
        handle: conversations.handleIdle
      })
    })
  ),
  // one source at a time per agent (the job key), up to `INGEST_CONCURRENCY` agents at once
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const pipeline = yield* Pipeline
      const config = yield* AppConfig
      return queueWorker({
        queue: INGEST_QUEUE,
        concurrency: config.ingest.concurrency,
        leaseMillis: config.ingest.leaseMillis,
        pollMillis: config.ingest.pollMillis,
        // processing that dies shows on the source while it waits, and fails it (`internal_error`) at the last
        maxAttempts: INGEST_JOB_MAX_ATTEMPTS,
        onRetry: pipeline.retrying,
        onGiveUp: pipeline.giveUp,
        handle: pipeline.handle
      })
    })
  )
)

/**
 * The workers' fibers start from the context they are built in; built with only the services they use (see
 * `Isolate.ts`), each statement they run copies that much less.
 */
const Workers = isolate(
  AppConfig,
  JobQueue.JobQueue,
  Dispatcher,
  IdempotencyStore,
  Emails,
  Conversations,
  Regeneration,
  Pipeline
)(AllWorkers)

/** The Q&A area reads indexed texts through its own port; the knowledge repository serves it. */
const SourceTextsLive = Layer.effect(
  SourceTexts,
  Effect.map(KnowledgeRepo, (repo) => ({ indexedTexts: repo.indexedTexts }))
).pipe(Layer.provide(KnowledgeRepo.Default))

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
    layers.ocr,
    layers.extractor ??
      layerThreads({
        threads: layers.config.ingest.concurrency,
        timeoutMillis: layers.config.ingest.extractTimeoutMillis,
        memoryMb: layers.config.ingest.extractMemoryMb
      }),
    layers.fileStorage,
    Layer.succeed(AppConfig, layers.config),
    Lifecycle.layer,
    CursorKeyLive.pipe(Layer.provide(Layer.succeed(AppConfig, layers.config))),
    // the request limiter takes from the store itself; the forms limiter uses `RateLimiter`
    RateLimiter.layer.pipe(Layer.provideMerge(layers.rateLimitStore))
  ).pipe(Layer.provideMerge(layers.database))
  // every listener this server opens, for the shutdown drain
  const listeners: Array<NodeServer> = []
  const makeListener = makeNodeServer({ docsUrl: `${layers.config.publicUrl}/docs/errors` })
  const nodeServer = () => {
    const server = makeListener()
    listeners.push(server)
    return server
  }
  const drain = makeDrain({ servers: () => listeners, graceMillis: layers.config.shutdownGraceMillis ?? defaultGraceMillis })
  // `FORMS_PORT`: the same app on a second listener, the spec's `{forms_url}` (the main port serves it too)
  const FormsListener =
    layers.config.formsPort === undefined
      ? Layer.empty
      : HttpApiBuilder.serve().pipe(
          HttpServer.withLogAddress,
          Layer.provide(listening(nodeServer, { port: layers.config.formsPort, host: layers.config.host }))
        )
  const Serving = Layer.mergeAll(HttpApiBuilder.serve(), FormsListener).pipe(
    HttpServer.withLogAddress,
    Layer.provideMerge(listening(nodeServer, { port: layers.config.port, host: layers.config.host }))
  )
  // Every request's fiber starts from the context the server is built in: only the API and the platform's
  // services (see `Isolate.ts`). The API, the routes beside it and the edge are built first, each with what it
  // uses, so the server serves them.
  const Http = isolate(HttpApi.Api)(Serving).pipe(
    Layer.provide(ApiLive),
    Layer.provide([DocsRoutes, AdminRoutes, FormsPreflightRoutes, ElementRoutes, DemoRoutes, MetricsRoutes, ConsoleRoutes]),
    // the admin endpoint reads its token file
    Layer.provide([NodeFileSystem.layer, NodePath.layer]),
    Layer.provide(EdgeLive)
  )
  // built in this order so that a stop closes the listeners, then stops the workers (their jobs handed back at
  // once), then waits for requests in flight, then closes the services and the database (see http/Drain.ts)
  const Running = drain.stopAccepting.pipe(
    Layer.provideMerge(Workers),
    Layer.provideMerge(drain.awaitInFlight),
    Layer.provideMerge(Http)
  )
  return Running.pipe(
    // the API's router and the edge build while the migrations run: the main thread is free meanwhile (the
    // statements run on the database's side); `Running` (the port, then the workers) waits for both
    Layer.provide(Layer.mergeAll(Startup, ApiLive, EdgeLive)),
    Layer.provideMerge(Services),
    Layer.provideMerge(layers.sourceTexts ?? SourceTextsLive),
    Layer.provideMerge(Infra)
  )
}
