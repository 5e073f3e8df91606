/** Renders a catalog failure into the error envelope, with its status and headers. */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  AiUnavailable,
  type ApiFailure,
  failureClassOf,
  InternalError,
  MethodNotAllowed,
  RateLimited
} from "../../schema/Errors.js"

/** How long a client waits after an AI provider outage: a provider's own retry advice is rarely shorter. */
const aiRetryAfterSeconds = 5

export const errorResponse = (
  failure: ApiFailure,
  options: { readonly requestId: string; readonly docsUrl: string; readonly allow?: ReadonlyArray<string> }
): HttpServerResponse.HttpServerResponse => {
  const cls = failureClassOf(failure) ?? InternalError
  const body = {
    error: {
      type: cls.type,
      code: cls.code,
      message: failure.message,
      ...(failure.param === undefined ? {} : { param: failure.param }),
      doc_url: `${options.docsUrl}#${cls.code}`,
      ...("field_errors" in failure ? { field_errors: failure.field_errors } : {})
    },
    meta: { request_id: options.requestId }
  }
  let response = HttpServerResponse.unsafeJson(body, { status: cls.status })
  if (failure instanceof MethodNotAllowed && options.allow !== undefined) {
    response = HttpServerResponse.setHeader(response, "allow", options.allow.join(", "))
  }
  if (failure instanceof RateLimited) {
    response = HttpServerResponse.setHeader(response, "retry-after", String(failure.retry_after_seconds ?? 1))
  }
  if (failure instanceof AiUnavailable) {
    response = HttpServerResponse.setHeader(response, "retry-after", String(aiRetryAfterSeconds))
  }
  return response
}
