/**
 * The public contract: every group composed into one `HttpApi`. It is the single
 * source of the router, the OpenAPI document and the typed client.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { AgentsGroup } from "./Agents.js"
import {
  ApiError,
  InternalError,
  InvalidIdempotencyKey,
  IdempotencyKeyMismatch,
  IdempotencyRequestInProgress,
  MethodNotAllowed,
  ParameterInvalid,
  ParameterMissing,
  PayloadTooLarge,
  RateLimited,
  RouteNotFound,
  ServiceUnavailable,
  UnsupportedMediaType
} from "./Errors.js"
import { CompletionsGroup } from "./Completions.js"
import { ConversationsGroup } from "./Conversations.js"
import { EvaluationsGroup } from "./Evaluations.js"
import { FormsGroup, FormsPublicGroup } from "./Forms.js"
import { GlossaryGroup } from "./Glossary.js"
import { InsightsGroup } from "./Insights.js"
import { QaGroup } from "./Qa.js"
import { FilesGroup } from "./Files.js"
import { KeysGroup } from "./Keys.js"
import { KnowledgeGroup } from "./Knowledge.js"
import { CrawlsGroup } from "./Crawls.js"
import { LeadsGroup } from "./Leads.js"
import { McpGroup } from "./Mcp.js"
import { BodyPolicy, Idempotency, RouteName } from "./Endpoint.js"
import { completeDocument } from "./OpenApiDocument.js"
import { SystemGroup } from "./System.js"
import { TicketsGroup } from "./Tickets.js"
import { TrainingGroup } from "./Training.js"
import { UsageGroup } from "./Usage.js"
import { WebhooksGroup } from "./Webhooks.js"
import { WidgetGroup } from "./Widget.js"
import { reference } from "./Reference.js"

/**
 * The library's own decode-error schema is replaced on the wire by our envelope
 * (`parameter_invalid` / `parameter_missing`), so the document drops it too.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the OpenAPI document is walked as plain JSON
const dropLibraryDecodeError = (spec: Record<string, any>): Record<string, any> => {
  const isLibraryRef = (s: unknown) =>
    typeof s === "object" && s !== null && (s as { $ref?: string }).$ref === "#/components/schemas/HttpApiDecodeError"
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the OpenAPI document is walked as plain JSON
  for (const item of Object.values<Record<string, any>>(spec.paths ?? {})) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the OpenAPI document is walked as plain JSON
    for (const op of Object.values<Record<string, any>>(item)) {
      const schema = op?.responses?.["400"]?.content?.["application/json"]?.schema
      if (schema?.anyOf) schema.anyOf = schema.anyOf.filter((s: unknown) => !isLibraryRef(s))
      else if (isLibraryRef(schema)) delete op.responses["400"]
    }
  }
  delete spec.components?.schemas?.HttpApiDecodeError
  return spec
}

/** The conventions every endpoint follows, in Markdown: the document's description, at the top of `/docs`. */
const apiReference = reference("overview")

/**
 * The middlewares every endpoint runs after routing, before its group's own (a group's last middleware runs
 * first): the route's name, the body policy, then idempotency (whose fingerprint covers the checked body).
 */
const withRequestPolicy = <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R, TopLevel extends boolean>(
  group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R, TopLevel>
) => group.middleware(Idempotency).middleware(BodyPolicy).middleware(RouteName)

const Contract = HttpApi.make("assistant-platform")
  .add(withRequestPolicy(SystemGroup))
  .add(withRequestPolicy(AgentsGroup))
  .add(withRequestPolicy(WebhooksGroup))
  .add(withRequestPolicy(TicketsGroup))
  .add(withRequestPolicy(QaGroup))
  .add(withRequestPolicy(GlossaryGroup))
  .add(withRequestPolicy(KnowledgeGroup))
  .add(withRequestPolicy(CrawlsGroup))
  .add(withRequestPolicy(TrainingGroup))
  .add(withRequestPolicy(FilesGroup))
  .add(withRequestPolicy(ConversationsGroup))
  .add(withRequestPolicy(InsightsGroup))
  .add(withRequestPolicy(EvaluationsGroup))
  .add(withRequestPolicy(LeadsGroup))
  .add(withRequestPolicy(UsageGroup))
  .add(withRequestPolicy(McpGroup))
  .add(withRequestPolicy(CompletionsGroup))
  .add(withRequestPolicy(KeysGroup))
  .add(withRequestPolicy(WidgetGroup))
  .add(withRequestPolicy(FormsGroup))
  .add(withRequestPolicy(FormsPublicGroup))
  .addError(ApiError(ParameterInvalid))
  .addError(ApiError(ParameterMissing))
  .addError(ApiError(InvalidIdempotencyKey))
  .addError(ApiError(RouteNotFound))
  .addError(ApiError(MethodNotAllowed))
  .addError(ApiError(IdempotencyRequestInProgress))
  .addError(ApiError(PayloadTooLarge))
  .addError(ApiError(UnsupportedMediaType))
  .addError(ApiError(IdempotencyKeyMismatch))
  .addError(ApiError(RateLimited))
  .addError(ApiError(InternalError))
  .addError(ApiError(ServiceUnavailable))
  .annotate(OpenApi.Title, "Assistant Platform API")
  .annotate(OpenApi.Version, "v1")
  .annotate(OpenApi.Description, apiReference)

export class Api extends Contract.annotate(OpenApi.Transform, (spec) =>
  completeDocument(Contract)(dropLibraryDecodeError(spec))
) {}
