/**
 * What the HTTP edge must know of an endpoint before its handler runs, declared on the endpoint
 * (`.annotate(UploadBody, ...)`) and read once from the contract into the route table (src/http/Routes.ts).
 * A POST that declares no payload needs no annotation: the edge reads that from the endpoint itself.
 */
import * as Context from "effect/Context"

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
