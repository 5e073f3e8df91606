/**
 * The catalog of expected failures: one tagged error class per public `code`.
 *
 * Programs fail with these classes. `ApiError(X)` is the schema endpoints
 * declare: the platform encodes a failure with it into the error envelope
 * `{ error: { type, code, message, param?, doc_url }, meta }` and its status,
 * and the OpenAPI document shows that body.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { CurrentRequestId } from "./Envelope.js"

/** What a request can get wrong, in Stripe's vocabulary of error types. */
export const ErrorType = Schema.Literal(
  "invalid_request",
  "authentication_error",
  "permission_error",
  "idempotency_error",
  "rate_limit_error",
  "api_error"
)
export type ErrorType = typeof ErrorType.Type

const fields = {
  message: Schema.String,
  param: Schema.optional(Schema.String)
}

/** One row of the catalog: what a failure class says about itself on the wire and in the docs. */
interface CatalogEntry<Code extends string> {
  readonly code: Code
  readonly status: number
  readonly type: ErrorType
  readonly description: string
}

/**
 * A catalog class: the tagged error `Base` plus its entry as statics
 * (`X.code`, `X.status`, `X.type`, `X.description`).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- `any[]`: the mixin form TypeScript requires to extend a class given as a value
const catalog = <B extends new (...args: Array<any>) => object, const Code extends string>(
  Base: B,
  entry: CatalogEntry<Code>
) =>
  class extends Base {
    static readonly code: Code = entry.code
    static readonly status: number = entry.status
    static readonly type: ErrorType = entry.type
    static readonly description: string = entry.description
  }

export class MissingAuthorization extends catalog(Schema.TaggedError<MissingAuthorization>()("MissingAuthorization", fields), {
  code: "missing_authorization",
  status: 401,
  type: "authentication_error",
  description: "No `Authorization: Bearer` or `x-api-key` header was sent."
}) {}
export class InvalidApiKey extends catalog(Schema.TaggedError<InvalidApiKey>()("InvalidApiKey", fields), {
  code: "invalid_api_key",
  status: 401,
  type: "authentication_error",
  description: "The key is unknown, malformed or revoked, or `Authorization` does not use the `Bearer` scheme."
}) {}
export class KeyScopeMismatch extends catalog(Schema.TaggedError<KeyScopeMismatch>()("KeyScopeMismatch", fields), {
  code: "key_scope_mismatch",
  status: 403,
  type: "permission_error",
  description: "The key is valid but its kind or scopes do not allow this operation."
}) {}
export class ParameterInvalid extends catalog(Schema.TaggedError<ParameterInvalid>()("ParameterInvalid", fields), {
  code: "parameter_invalid",
  status: 400,
  type: "invalid_request",
  description: "A parameter has the wrong type or value, an unknown parameter was sent, or the body is not valid JSON; `param` names the path."
}) {}
export class ParameterMissing extends catalog(Schema.TaggedError<ParameterMissing>()("ParameterMissing", fields), {
  code: "parameter_missing",
  status: 400,
  type: "invalid_request",
  description: "A required parameter is absent; `param` names it."
}) {}
export class InvalidLimit extends catalog(Schema.TaggedError<InvalidLimit>()("InvalidLimit", fields), {
  code: "invalid_limit",
  status: 400,
  type: "invalid_request",
  description: "`limit` must be an integer from 1 to 100."
}) {}
export class InvalidCursor extends catalog(Schema.TaggedError<InvalidCursor>()("InvalidCursor", fields), {
  code: "invalid_cursor",
  status: 400,
  type: "invalid_request",
  description: "`starting_after` is not a cursor this list returned."
}) {}
export class InvalidIdempotencyKey extends catalog(Schema.TaggedError<InvalidIdempotencyKey>()("InvalidIdempotencyKey", fields), {
  code: "invalid_idempotency_key",
  status: 400,
  type: "idempotency_error",
  description: "`Idempotency-Key` must be 1 to 255 printable ASCII characters (a UUID where required)."
}) {}
export class TooManyUrls extends catalog(Schema.TaggedError<TooManyUrls>()("TooManyUrls", fields), {
  code: "too_many_urls",
  status: 400,
  type: "invalid_request",
  description: "A batch holds more than 500 URLs."
}) {}
export class AgentTypeMismatch extends catalog(Schema.TaggedError<AgentTypeMismatch>()("AgentTypeMismatch", fields), {
  code: "agent_type_mismatch",
  status: 400,
  type: "invalid_request",
  description: "The operation needs an agent of another type (training features need `training`)."
}) {}
export class UrlNotAllowed extends catalog(Schema.TaggedError<UrlNotAllowed>()("UrlNotAllowed", fields), {
  code: "url_not_allowed",
  status: 400,
  type: "invalid_request",
  description: "The URL is not allowed: not HTTPS in live mode, or it resolves to a loopback, private or link-local address."
}) {}
export class UnknownEventType extends catalog(Schema.TaggedError<UnknownEventType>()("UnknownEventType", fields), {
  code: "unknown_event_type",
  status: 400,
  type: "invalid_request",
  description: "An event name is not a known event type; `param` is `events[i]`."
}) {}
export class ValidationFailed extends catalog(
  Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
    ...fields,
    field_errors: Schema.Array(Schema.Struct({ field: Schema.String, message: Schema.String }))
  }),
  {
    code: "validation_failed",
    status: 400,
    type: "invalid_request",
    description: "A form submission failed validation; see `error.field_errors[]`."
  }
) {}
export class LimitReached extends catalog(Schema.TaggedError<LimitReached>()("LimitReached", fields), {
  code: "limit_reached",
  status: 402,
  type: "invalid_request",
  description:
    "The plan's monthly cap is reached (tickets: Free 20, Starter 200; replies: Free 100, Starter 2,000; refreshes of `url` sources: Free 1,000, Starter 10,000, Pro 100,000; evaluation runs: Free 20, Starter 200, Pro 2,000)."
}) {}
export class IdentityRequired extends catalog(Schema.TaggedError<IdentityRequired>()("IdentityRequired", fields), {
  code: "identity_required",
  status: 401,
  type: "authentication_error",
  description: "The form requires a signed `identity_token` and none was sent."
}) {}
export class IdentityInvalid extends catalog(Schema.TaggedError<IdentityInvalid>()("IdentityInvalid", fields), {
  code: "identity_invalid",
  status: 401,
  type: "authentication_error",
  description: "The `identity_token` is malformed, expired or not signed with the identity secret."
}) {}
export class OriginNotAllowed extends catalog(Schema.TaggedError<OriginNotAllowed>()("OriginNotAllowed", fields), {
  code: "origin_not_allowed",
  status: 403,
  type: "permission_error",
  description: "The form, or the agent of a widget request, does not accept requests from this `Origin`."
}) {}
export class ResourceMissing extends catalog(Schema.TaggedError<ResourceMissing>()("ResourceMissing", fields), {
  code: "resource_missing",
  status: 404,
  type: "invalid_request",
  description: "No such object in this workspace and environment."
}) {}
export class ModelNotFound extends catalog(Schema.TaggedError<ModelNotFound>()("ModelNotFound", fields), {
  code: "model_not_found",
  status: 404,
  type: "invalid_request",
  description: "The `model` of an OpenAI-compatible request names no agent (by id or slug) of this workspace and environment."
}) {}
export class RouteNotFound extends catalog(Schema.TaggedError<RouteNotFound>()("RouteNotFound", fields), {
  code: "route_not_found",
  status: 404,
  type: "invalid_request",
  description: "No endpoint has this path."
}) {}
export class MethodNotAllowed extends catalog(Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", fields), {
  code: "method_not_allowed",
  status: 405,
  type: "invalid_request",
  description: "The path exists but not with this method; the `Allow` header lists the methods."
}) {}
export class FileNotUploaded extends catalog(Schema.TaggedError<FileNotUploaded>()("FileNotUploaded", fields), {
  code: "file_not_uploaded",
  status: 409,
  type: "invalid_request",
  description: "The file's bytes have not been uploaded yet."
}) {}
export class SubscriptionInactive extends catalog(Schema.TaggedError<SubscriptionInactive>()("SubscriptionInactive", fields), {
  code: "subscription_inactive",
  status: 409,
  type: "invalid_request",
  description: "The webhook subscription is inactive (`is_active: false`), so no delivery is scheduled to it; set `is_active` to true first."
}) {}
export class CrawlInProgress extends catalog(Schema.TaggedError<CrawlInProgress>()("CrawlInProgress", fields), {
  code: "crawl_in_progress",
  status: 409,
  type: "invalid_request",
  description: "The agent already has a crawl of this site queued or running; cancel it or wait for its end."
}) {}
export class SourceNotRefreshable extends catalog(Schema.TaggedError<SourceNotRefreshable>()("SourceNotRefreshable", fields), {
  code: "source_not_refreshable",
  status: 409,
  type: "invalid_request",
  description: "Only an indexed `url` source can be refreshed; this one is of another type, or not indexed yet."
}) {}
export class TermExists extends catalog(Schema.TaggedError<TermExists>()("TermExists", fields), {
  code: "term_exists",
  status: 409,
  type: "invalid_request",
  description: "The glossary already holds this term."
}) {}
export class CategoryExists extends catalog(Schema.TaggedError<CategoryExists>()("CategoryExists", fields), {
  code: "category_exists",
  status: 409,
  type: "invalid_request",
  description: "The agent already has a category with this name (names are compared ignoring case)."
}) {}
export class HasChildren extends catalog(Schema.TaggedError<HasChildren>()("HasChildren", fields), {
  code: "resource_has_children",
  status: 409,
  type: "invalid_request",
  description: "A module with lessons, or a lesson with sources, is deleted only with `?cascade=true`."
}) {}
export class IdempotencyRequestInProgress extends catalog(Schema.TaggedError<IdempotencyRequestInProgress>()("IdempotencyRequestInProgress", fields), {
  code: "idempotency_request_in_progress",
  status: 409,
  type: "idempotency_error",
  description: "A request with this `Idempotency-Key` is still running; retry later."
}) {}
export class PayloadTooLarge extends catalog(Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", fields), {
  code: "payload_too_large",
  status: 413,
  type: "invalid_request",
  description: "The body is larger than the endpoint accepts."
}) {}
export class HeadersTooLarge extends catalog(Schema.TaggedError<HeadersTooLarge>()("HeadersTooLarge", fields), {
  code: "header_too_large",
  status: 431,
  type: "invalid_request",
  description: "The request headers exceed 16 KB; Node refuses them before they reach the API."
}) {}
export class ExpectationFailed extends catalog(Schema.TaggedError<ExpectationFailed>()("ExpectationFailed", fields), {
  code: "expectation_failed",
  status: 417,
  type: "invalid_request",
  description:
    "The `Expect` header asks for something other than `100-continue`, the only expectation the service meets; nothing was done: send the request without it."
}) {}
export class UnsupportedMediaType extends catalog(Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", fields), {
  code: "unsupported_media_type",
  status: 415,
  type: "invalid_request",
  description: "The body's `Content-Type` (or its bytes) is not one the endpoint accepts."
}) {}
export class IdempotencyKeyMismatch extends catalog(Schema.TaggedError<IdempotencyKeyMismatch>()("IdempotencyKeyMismatch", fields), {
  code: "idempotency_key_mismatch",
  status: 422,
  type: "idempotency_error",
  description: "This `Idempotency-Key` was used with another method, path or body in the last 24 h, or by another API key where the answer shows a secret."
}) {}
export class RateLimited extends catalog(
  Schema.TaggedError<RateLimited>()("RateLimited", {
    ...fields,
    retry_after_seconds: Schema.optional(Schema.Int)
  }),
  {
    code: "rate_limited",
    status: 429,
    type: "rate_limit_error",
    description: "Too many requests for this key; wait `Retry-After` seconds."
  }
) {}
export class InternalError extends catalog(Schema.TaggedError<InternalError>()("InternalError", fields), {
  code: "internal_error",
  status: 500,
  type: "api_error",
  description: "Something failed on our side; quote `meta.request_id` when reporting it."
}) {}
export class ServiceUnavailable extends catalog(Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", fields), {
  code: "service_unavailable",
  status: 503,
  type: "api_error",
  description: "A dependency (the database) is not reachable; retry with backoff."
}) {}
/**
 * How long a client waits after an AI provider outage, in seconds: a provider's own retry advice is rarely shorter.
 * The 503's `Retry-After` and a reply stream's `error` event (`retry_after`) both give it.
 */
export const aiRetryAfterSeconds = 5

export class AiUnavailable extends catalog(Schema.TaggedError<AiUnavailable>()("AiUnavailable", fields), {
  code: "ai_unavailable",
  status: 503,
  type: "api_error",
  description:
    "The AI provider did not answer (an outage, a timeout, its own rate limit), so no reply was generated; send the message again after `Retry-After` seconds."
}) {}

/** Every failure class, in the order the README and `/docs/errors` list them. */
export const ErrorCatalog = [
  MissingAuthorization,
  InvalidApiKey,
  KeyScopeMismatch,
  ParameterInvalid,
  ParameterMissing,
  InvalidLimit,
  InvalidCursor,
  InvalidIdempotencyKey,
  TooManyUrls,
  AgentTypeMismatch,
  UrlNotAllowed,
  UnknownEventType,
  ValidationFailed,
  IdentityRequired,
  IdentityInvalid,
  OriginNotAllowed,
  LimitReached,
  ResourceMissing,
  ModelNotFound,
  RouteNotFound,
  MethodNotAllowed,
  FileNotUploaded,
  SubscriptionInactive,
  CrawlInProgress,
  SourceNotRefreshable,
  TermExists,
  CategoryExists,
  HasChildren,
  IdempotencyRequestInProgress,
  PayloadTooLarge,
  UnsupportedMediaType,
  HeadersTooLarge,
  ExpectationFailed,
  IdempotencyKeyMismatch,
  RateLimited,
  InternalError,
  ServiceUnavailable,
  AiUnavailable
] as const

export type ApiFailure = InstanceType<(typeof ErrorCatalog)[number]>
export type ApiFailureClass = (typeof ErrorCatalog)[number]

const byConstructor: ReadonlyMap<unknown, ApiFailureClass> = new Map(ErrorCatalog.map((c) => [c, c]))

/**
 * The class of a failure value, when it is one of ours. By constructor, not by
 * `_tag`: the platform's own errors reuse names such as `RouteNotFound`.
 */
export const failureClassOf = (u: unknown): ApiFailureClass | undefined =>
  typeof u === "object" && u !== null ? byConstructor.get(u.constructor) : undefined

/** The envelope's `error` object as it appears on the wire. */
export const ErrorObject = Schema.Struct({
  type: ErrorType,
  code: Schema.String,
  message: Schema.String,
  param: Schema.optional(Schema.String),
  doc_url: Schema.String,
  field_errors: Schema.optional(Schema.Array(Schema.Struct({ field: Schema.String, message: Schema.String })))
})

export const ErrorMeta = Schema.Struct({ request_id: Schema.String })

/**
 * Where the catalog's documentation lives (`<PUBLIC_URL>/docs/errors`): set by the HTTP edge beside the request
 * id, read when a failure is encoded.
 */
export const CurrentDocsUrl = FiberRef.unsafeMake("/docs/errors")

type FieldError = { readonly field: string; readonly message: string }

/**
 * The schema an endpoint declares for a failure class: its wire form is the error envelope with the class's
 * code and status, which the OpenAPI document shows and the platform encodes a failure into. The envelope's
 * `doc_url` and `meta.request_id` are the request's: encoding runs on its fiber.
 */
const makeApiError = <C extends ApiFailureClass>(cls: C) => {
  const body = Schema.Struct({
    error: Schema.Struct({
      ...ErrorObject.fields,
      type: Schema.Literal(cls.type),
      code: Schema.Literal(cls.code)
    }),
    meta: ErrorMeta
  }).annotations({ identifier: `Error_${cls.code}`, description: cls.description })
  // the class is a schema of its own fields: decoding the envelope's fields with it makes an instance
  return Schema.transformOrFail(body, Schema.asSchema(cls).annotations({ identifier: cls._tag }), {
    // the literal code and type are fixed by `body`; TypeScript cannot follow them through the union of classes
    strict: false,
    decode: ({ error }) => {
      const { message, param, field_errors } = error
      return ParseResult.succeed({ _tag: cls._tag, message, param, ...(field_errors === undefined ? {} : { field_errors }) })
    },
    encode: (f: { readonly message: string; readonly param?: string; readonly field_errors?: ReadonlyArray<FieldError> }) =>
      Effect.map(Effect.zip(FiberRef.get(CurrentRequestId), FiberRef.get(CurrentDocsUrl)), ([requestId, docsUrl]) => ({
        error: {
          type: cls.type,
          code: cls.code,
          message: f.message,
          ...(f.param === undefined ? {} : { param: f.param }),
          doc_url: `${docsUrl}#${cls.code}`,
          ...(f.field_errors === undefined ? {} : { field_errors: f.field_errors })
        },
        meta: { request_id: requestId ?? "req_unassigned" }
      }))
  }).annotations(HttpApiSchema.annotations({ status: cls.status }))
}

/**
 * One schema per class, however many endpoints declare it: about 120 declarations
 * name some 30 classes, and making one walks a dozen schemas at module load, which
 * every start pays before it can serve.
 */
const apiErrors = new Map<ApiFailureClass, unknown>()

export const ApiError = <C extends ApiFailureClass>(cls: C): ReturnType<typeof makeApiError<C>> => {
  const known = apiErrors.get(cls)
  if (known !== undefined) return known as ReturnType<typeof makeApiError<C>>
  const made = makeApiError(cls)
  apiErrors.set(cls, made)
  return made
}
