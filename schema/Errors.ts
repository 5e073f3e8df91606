/**
 * The catalog of expected failures: one tagged error class per public `code`.
 *
 * Programs fail with these classes; the HTTP edge renders every one of them into
 * the error envelope `{ error: { type, code, message, param?, doc_url }, meta }`.
 * `ApiError(X)` is the schema endpoints declare, so the OpenAPI document shows
 * the real envelope body with its status.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"

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

export class MissingAuthorization extends Schema.TaggedError<MissingAuthorization>()("MissingAuthorization", fields) {
  static readonly code = "missing_authorization"
  static readonly status = 401
  static readonly type: ErrorType = "authentication_error"
  static readonly description = "No `Authorization: Bearer` or `x-api-key` header was sent."
}
export class InvalidApiKey extends Schema.TaggedError<InvalidApiKey>()("InvalidApiKey", fields) {
  static readonly code = "invalid_api_key"
  static readonly status = 401
  static readonly type: ErrorType = "authentication_error"
  static readonly description = "The key is unknown, malformed or revoked."
}
export class KeyScopeMismatch extends Schema.TaggedError<KeyScopeMismatch>()("KeyScopeMismatch", fields) {
  static readonly code = "key_scope_mismatch"
  static readonly status = 403
  static readonly type: ErrorType = "permission_error"
  static readonly description = "The key is valid but its kind or scopes do not allow this operation."
}
export class ParameterInvalid extends Schema.TaggedError<ParameterInvalid>()("ParameterInvalid", fields) {
  static readonly code = "parameter_invalid"
  static readonly status = 400
  static readonly type: ErrorType = "invalid_request"
  static readonly description =
    "A parameter has the wrong type or value, an unknown parameter was sent, or the body is not valid JSON; `param` names the path."
}
export class ParameterMissing extends Schema.TaggedError<ParameterMissing>()("ParameterMissing", fields) {
  static readonly code = "parameter_missing"
  static readonly status = 400
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "A required parameter is absent; `param` names it."
}
export class InvalidLimit extends Schema.TaggedError<InvalidLimit>()("InvalidLimit", fields) {
  static readonly code = "invalid_limit"
  static readonly status = 400
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "`limit` must be an integer from 1 to 100."
}
export class InvalidCursor extends Schema.TaggedError<InvalidCursor>()("InvalidCursor", fields) {
  static readonly code = "invalid_cursor"
  static readonly status = 400
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "`starting_after` is not a cursor this list returned."
}
export class InvalidIdempotencyKey extends Schema.TaggedError<InvalidIdempotencyKey>()("InvalidIdempotencyKey", fields) {
  static readonly code = "invalid_idempotency_key"
  static readonly status = 400
  static readonly type: ErrorType = "idempotency_error"
  static readonly description = "`Idempotency-Key` must be 1 to 255 printable ASCII characters (a UUID where required)."
}
export class TooManyUrls extends Schema.TaggedError<TooManyUrls>()("TooManyUrls", fields) {
  static readonly code = "too_many_urls"
  static readonly status = 400
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "A batch holds more than 500 URLs."
}
export class AgentTypeMismatch extends Schema.TaggedError<AgentTypeMismatch>()("AgentTypeMismatch", fields) {
  static readonly code = "agent_type_mismatch"
  static readonly status = 400
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "The operation needs an agent of another type (training features need `training`)."
}
export class UrlNotAllowed extends Schema.TaggedError<UrlNotAllowed>()("UrlNotAllowed", fields) {
  static readonly code = "url_not_allowed"
  static readonly status = 400
  static readonly type: ErrorType = "invalid_request"
  static readonly description =
    "The URL is not allowed: not HTTPS in live mode, or it resolves to a loopback, private or link-local address."
}
export class UnknownEventType extends Schema.TaggedError<UnknownEventType>()("UnknownEventType", fields) {
  static readonly code = "unknown_event_type"
  static readonly status = 400
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "An event name is not a known event type; `param` is `events[i]`."
}
export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
  ...fields,
  field_errors: Schema.Array(Schema.Struct({ field: Schema.String, message: Schema.String }))
}) {
  static readonly code = "validation_failed"
  static readonly status = 400
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "A form submission failed validation; see `error.field_errors[]`."
}
export class LimitReached extends Schema.TaggedError<LimitReached>()("LimitReached", fields) {
  static readonly code = "limit_reached"
  static readonly status = 402
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "The plan's monthly cap is reached (tickets: Free 20, Starter 200)."
}
export class IdentityRequired extends Schema.TaggedError<IdentityRequired>()("IdentityRequired", fields) {
  static readonly code = "identity_required"
  static readonly status = 401
  static readonly type: ErrorType = "authentication_error"
  static readonly description = "The form requires a signed `identity_token` and none was sent."
}
export class IdentityInvalid extends Schema.TaggedError<IdentityInvalid>()("IdentityInvalid", fields) {
  static readonly code = "identity_invalid"
  static readonly status = 401
  static readonly type: ErrorType = "authentication_error"
  static readonly description = "The `identity_token` is malformed, expired or not signed with the identity secret."
}
export class OriginNotAllowed extends Schema.TaggedError<OriginNotAllowed>()("OriginNotAllowed", fields) {
  static readonly code = "origin_not_allowed"
  static readonly status = 403
  static readonly type: ErrorType = "permission_error"
  static readonly description = "The form does not accept submissions from this `Origin`."
}
export class ResourceMissing extends Schema.TaggedError<ResourceMissing>()("ResourceMissing", fields) {
  static readonly code = "resource_missing"
  static readonly status = 404
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "No such object in this workspace and environment."
}
export class RouteNotFound extends Schema.TaggedError<RouteNotFound>()("RouteNotFound", fields) {
  static readonly code = "route_not_found"
  static readonly status = 404
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "No endpoint has this path."
}
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", fields) {
  static readonly code = "method_not_allowed"
  static readonly status = 405
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "The path exists but not with this method; the `Allow` header lists the methods."
}
export class FileNotUploaded extends Schema.TaggedError<FileNotUploaded>()("FileNotUploaded", fields) {
  static readonly code = "file_not_uploaded"
  static readonly status = 409
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "The file's bytes have not been uploaded yet."
}
export class TermExists extends Schema.TaggedError<TermExists>()("TermExists", fields) {
  static readonly code = "term_exists"
  static readonly status = 409
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "The glossary already holds this term."
}
export class CategoryExists extends Schema.TaggedError<CategoryExists>()("CategoryExists", fields) {
  static readonly code = "category_exists"
  static readonly status = 409
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "The agent already has a category with this name (names are compared ignoring case)."
}
export class IdempotencyRequestInProgress extends Schema.TaggedError<IdempotencyRequestInProgress>()(
  "IdempotencyRequestInProgress",
  fields
) {
  static readonly code = "idempotency_request_in_progress"
  static readonly status = 409
  static readonly type: ErrorType = "idempotency_error"
  static readonly description = "A request with this `Idempotency-Key` is still running; retry later."
}
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", fields) {
  static readonly code = "payload_too_large"
  static readonly status = 413
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "The body is larger than the endpoint accepts."
}
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", fields) {
  static readonly code = "unsupported_media_type"
  static readonly status = 415
  static readonly type: ErrorType = "invalid_request"
  static readonly description = "The body's `Content-Type` (or its bytes) is not one the endpoint accepts."
}
export class IdempotencyKeyMismatch extends Schema.TaggedError<IdempotencyKeyMismatch>()("IdempotencyKeyMismatch", fields) {
  static readonly code = "idempotency_key_mismatch"
  static readonly status = 422
  static readonly type: ErrorType = "idempotency_error"
  static readonly description = "This `Idempotency-Key` was used with another method, path or body in the last 24 h."
}
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...fields,
  retry_after_seconds: Schema.optional(Schema.Int)
}) {
  static readonly code = "rate_limited"
  static readonly status = 429
  static readonly type: ErrorType = "rate_limit_error"
  static readonly description = "Too many requests for this key; wait `Retry-After` seconds."
}
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", fields) {
  static readonly code = "internal_error"
  static readonly status = 500
  static readonly type: ErrorType = "api_error"
  static readonly description = "Something failed on our side; quote `meta.request_id` when reporting it."
}
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", fields) {
  static readonly code = "service_unavailable"
  static readonly status = 503
  static readonly type: ErrorType = "api_error"
  static readonly description = "A dependency (the database) is not reachable; retry with backoff."
}

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
  RouteNotFound,
  MethodNotAllowed,
  FileNotUploaded,
  TermExists,
  CategoryExists,
  IdempotencyRequestInProgress,
  PayloadTooLarge,
  UnsupportedMediaType,
  IdempotencyKeyMismatch,
  RateLimited,
  InternalError,
  ServiceUnavailable
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
 * The schema an endpoint declares for a failure class: its wire form is the
 * error envelope with the class's code and status. The HTTP edge renders
 * failures itself (it knows the request id), so `encode` here only serves the
 * OpenAPI document and the typed client's decoding.
 */
export const ApiError = <C extends ApiFailureClass>(cls: C) => {
  type Failure = InstanceType<C>
  const body = Schema.Struct({
    error: Schema.Struct({
      ...ErrorObject.fields,
      type: Schema.Literal(cls.type),
      code: Schema.Literal(cls.code)
    }),
    meta: ErrorMeta
  }).annotations({ identifier: `Error_${cls.code}`, description: cls.description })
  const failure = Schema.declare((u): u is Failure => u instanceof cls, { identifier: cls._tag })
  return Schema.transform(body, failure, {
    // the literal code and type are fixed by `body`; TypeScript cannot follow them through the union of classes
    strict: false,
    decode: ({ error }) => {
      const { message, param, field_errors } = error
      const Ctor = cls as unknown as new (args: object) => Failure
      return new Ctor({ message, param, ...(field_errors === undefined ? {} : { field_errors }) })
    },
    encode: (f) => ({
      error: {
        type: cls.type,
        code: cls.code,
        message: f.message,
        ...(f.param === undefined ? {} : { param: f.param }),
        doc_url: ""
      },
      meta: { request_id: "" }
    })
  }).annotations(HttpApiSchema.annotations({ status: cls.status }))
}
