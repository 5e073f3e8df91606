/**
 * What the request path must know of an endpoint before its handler runs, declared on the endpoint
 * (`.annotate(UploadBody, ...)`), and the middlewares every group runs after routing (src/http): the
 * route's name, the body policy and idempotency, which read those annotations of the endpoint the router
 * matched. A POST that declares no payload needs no annotation: that is read from the endpoint itself.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import {
  ApiError,
  IdempotencyKeyMismatch,
  IdempotencyRequestInProgress,
  InvalidIdempotencyKey,
  ParameterInvalid,
  PayloadTooLarge,
  UnsupportedMediaType
} from "./Errors.js"

export interface UploadBodyShape {
  /** Counted as the bytes stream in; more is `413 payload_too_large`. */
  readonly maxBytes: number
  /** The accepted `Content-Type`s, parameters allowed; any other is `415 unsupported_media_type`. */
  readonly mediaType: RegExp
  /** The accepted types as the `415` names them. */
  readonly mediaTypeNames: string
}

/** The body is a file's bytes, not JSON: the JSON rules do not apply, and the handler reads it itself. */
export class UploadBody extends Context.Tag("Endpoint/UploadBody")<UploadBody, UploadBodyShape>() {}

/**
 * A public form endpoint, called by a page's form component: its key comes in `Service-Api-Key` (checked by
 * its handler, and the owner of an `Idempotency-Key` sent with it), and its CORS answer follows the origins
 * of the form its path parameter `formParam` names.
 */
export class FormEndpoint extends Context.Tag("Endpoint/FormEndpoint")<
  FormEndpoint,
  { readonly formParam: string }
>() {}

/** An operational endpoint (a probe): answered without a key and without a rate-limit token, so it always answers. */
export class Operational extends Context.Tag("Endpoint/Operational")<Operational, true>() {}

/**
 * Its answer shows a secret this once (a new key's value, a signing or identity secret): a retry with the same
 * `Idempotency-Key` gets it again, but the record keeps it sealed under the caller's own key (src/http/SealedAnswer.ts).
 */
export class ShowsSecret extends Context.Tag("Endpoint/ShowsSecret")<ShowsSecret, true>() {}

/**
 * The shape its event stream is written in: an `Idempotency-Key`'s replay writes the reply it names again in
 * it (absent: the messages endpoint's events). `completions`: OpenAI's `chat.completion.chunk` events.
 */
export class StreamFormat extends Context.Tag("Endpoint/StreamFormat")<StreamFormat, "completions">() {}

/** Names the request after the route the router matched, for its log line and metrics (never its raw path). */
export class RouteName extends HttpApiMiddleware.Tag<RouteName>()("Endpoint/RouteName") {}

/**
 * The input policy on the body, by what the endpoint takes: JSON read, counted and checked, then handed to
 * the decoder as the request it reads; a file's bytes (`UploadBody`) left to the handler under their cap; a
 * POST without payload takes no body or `{}`.
 */
export class BodyPolicy extends HttpApiMiddleware.Tag<BodyPolicy>()("Endpoint/BodyPolicy", {
  provides: HttpServerRequest.HttpServerRequest,
  failure: Schema.Union(ApiError(PayloadTooLarge), ApiError(UnsupportedMediaType), ApiError(ParameterInvalid))
}) {}

/** `Idempotency-Key` on a POST: one run per key, its answer kept 24 hours and given again to a retry. */
export class Idempotency extends HttpApiMiddleware.Tag<Idempotency>()("Endpoint/Idempotency", {
  failure: Schema.Union(
    ApiError(InvalidIdempotencyKey),
    ApiError(IdempotencyKeyMismatch),
    ApiError(IdempotencyRequestInProgress)
  )
}) {}
