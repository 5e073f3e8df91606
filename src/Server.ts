/**
 * The composition root: the areas (each `src/<area>/Area.ts` gives its programs, the adapters of the ports it
 * serves, its API groups and its workers), what they share, and the order of a stop, on the infrastructure the
 * caller chose (`Infrastructure.ts`) after the startup work (`Startup.ts`). `main.ts` runs it with layers from
 * the environment; tests with test layers.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as Layer from "effect/Layer"
import { Api } from "../schema/Api.js"
import { layerPostgres as JobQueuePostgres } from "../layers/jobqueue/Postgres.js"
import { AdminRoutes } from "./admin/Http.js"
import * as Agents from "./agents/Area.js"
import { ApiKeys } from "./auth/ApiKeys.js"
import { AuthenticationLive, Authenticator } from "./auth/Authentication.js"
import { ConsoleRoutes } from "./console/ConsoleBundle.js"
import * as Completions from "./completions/Area.js"
import * as Conversations from "./conversations/Area.js"
import * as Crawls from "./crawls/Area.js"
import * as Maintenance from "./db/Maintenance.js"
import * as Email from "./email/Area.js"
import * as Evaluations from "./evaluations/Area.js"
import { Outbox } from "./events/Outbox.js"
import * as Files from "./files/Area.js"
import * as Forms from "./forms/Area.js"
import * as Glossary from "./glossary/Area.js"
import * as HttpPlumbing from "./http/Area.js"
import * as Insights from "./insights/Area.js"
import { EdgeLive } from "./http/Edge.js"
import { makeInfrastructure, type ServerLayers } from "./Infrastructure.js"
import { isolate } from "./Performance.js"
import * as Keys from "./keys/Area.js"
import * as Knowledge from "./knowledge/Area.js"
import * as Leads from "./leads/Area.js"
import * as Mcp from "./mcp/Area.js"
import * as Qa from "./qa/Area.js"
import { inShutdownOrder } from "./Shutdown.js"
import { Startup } from "./Startup.js"
import * as System from "./system/Area.js"
import * as Tickets from "./tickets/Area.js"
import * as Training from "./training/Area.js"
import * as Usage from "./usage/Area.js"
import * as Webhooks from "./webhooks/Area.js"
import * as Widget from "./widget/Area.js"
import { Workspaces } from "./workspaces/Workspaces.js"

export type { RateLimitStore, ServerLayers } from "./Infrastructure.js"

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
 * is exported by the area that serves it. Capturing a form's lead links it to its conversation; a member's
 * message on an escalated ticket reaches its conversation's hand-off; a change of an agent's knowledge makes its
 * evaluations' automatic runs due.
 */
const Ports = Layer.mergeAll(
  Leads.LeadTargetLive, Training.SourceOwnerLive, Crawls.CrawlReportLive, Conversations.ConversationHandoffLive,
  Evaluations.KnowledgeChangedLive
).pipe(
  Layer.provideMerge(Conversations.ConversationLinkLive)
)

/** The OpenAI-compatible chat, over the agents' and conversations' programs. */
const CompletionsLive = Completions.Live.pipe(Layer.provide(Layer.mergeAll(Agents.Live, Conversations.Live)))

/** The areas' programs, and the ports the edge uses (CORS origins, replays of kept streams). */
const Areas = Layer.mergeAll(
  Agents.Live, Conversations.Live, Files.Live, Forms.Live, Glossary.Live, Knowledge.Live, Leads.Live, Qa.Live,
  Tickets.Live, Training.Live, Usage.Live, Webhooks.Live, Widget.Live, Insights.Live, Evaluations.Live, Crawls.Live.pipe(Layer.provide(Knowledge.Live)),
  Mcp.Live.pipe(Layer.provide(Layer.mergeAll(Agents.Live, Knowledge.Live, Conversations.Live, Tickets.Live))),
  CompletionsLive, Agents.WidgetOriginsLive, Forms.FormOriginsLive,
  Completions.ReplayableStreamsLive.pipe(Layer.provide(Layer.merge(CompletionsLive, Conversations.Live)))
).pipe(Layer.provide(Ports), Layer.provideMerge(Shared))

/**
 * The areas' API groups, built with only the services their handlers use (each area's `ApiServices`; the type
 * checks the lists are whole): the platform merges a group's context into each of its requests, so a request
 * carries these, not every service of the process (see `Performance.ts`).
 */
const Handlers = isolate(
  ...HttpPlumbing.ApiServices, ...Agents.ApiServices, ...Webhooks.ApiServices, ...Tickets.ApiServices, ...Knowledge.ApiServices,
  ...Training.ApiServices, ...Files.ApiServices, ...Qa.ApiServices, ...Glossary.ApiServices, ...System.ApiServices,
  ...Conversations.ApiServices, ...Leads.ApiServices, ...Usage.ApiServices, ...Widget.ApiServices,
  ...Forms.ApiServices, ...Keys.ApiServices, ...Crawls.ApiServices, ...Insights.ApiServices,
  ...Evaluations.ApiServices, ...Mcp.ApiServices, ...Completions.ApiServices
)(
  Layer.mergeAll(
    Agents.ApiGroups, Webhooks.ApiGroups, Tickets.ApiGroups, Knowledge.ApiGroups, Training.ApiGroups,
    Files.ApiGroups, Qa.ApiGroups, Glossary.ApiGroups, System.ApiGroups, Conversations.ApiGroups,
    Leads.ApiGroups, Usage.ApiGroups, Widget.ApiGroups, Forms.ApiGroups, Keys.ApiGroups, Crawls.ApiGroups,
    Insights.ApiGroups, Evaluations.ApiGroups, Mcp.ApiGroups, Completions.ApiGroups
  )
)

const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide(Handlers),
  Layer.provide([AuthenticationLive, HttpPlumbing.ApiMiddlewares])
)

/** The routes beside the API. */
const Routes = Layer.mergeAll(System.Routes, AdminRoutes, Forms.Routes, Widget.Routes, ConsoleRoutes)

/** Each area's background fibers. */
const Workers = Layer.mergeAll(
  Webhooks.Workers, HttpPlumbing.Workers, Email.Workers, Conversations.Workers, Qa.Workers, Knowledge.Workers,
  Crawls.Workers, Evaluations.Workers, Maintenance.Workers
)

/**
 * Everything, listening on `config.port` (0 picks a free port). The output
 * keeps the services so tests can reach the HttpServer address and seed data.
 */
export const makeServer = (layers: ServerLayers) => {
  const Infra = makeInfrastructure(layers)
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
