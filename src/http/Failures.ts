/**
 * Turns whatever stopped a request into one of the catalog's failures: our own
 * tagged errors pass through; the library's decode errors, unknown routes and
 * body errors get their public code; anything else is a defect, logged with the
 * request id and answered as `500 internal_error` without internals.
 */
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as Cause from "effect/Cause"
import * as Option from "effect/Option"
import {
  type ApiFailure,
  failureClassOf,
  InternalError,
  MethodNotAllowed,
  ParameterInvalid,
  ParameterMissing,
  PayloadTooLarge,
  RouteNotFound
} from "../../schema/Errors.js"

/** `["urls", 3, "href"]` becomes `urls[3].href`. */
export const formatParam = (path: ReadonlyArray<PropertyKey>): string | undefined =>
  path.length === 0
    ? undefined
    : path.reduce<string>(
        (acc, key) => (typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`),
        ""
      )

const fromDecodeError = (error: HttpApiError.HttpApiDecodeError): ApiFailure => {
  const issue = error.issues[0]
  if (issue === undefined) return new ParameterInvalid({ message: error.message })
  const param = formatParam(issue.path)
  switch (issue._tag) {
    case "Missing":
      return new ParameterMissing({ message: `Missing required parameter: ${param}`, ...(param ? { param } : {}) })
    case "Unexpected":
      return new ParameterInvalid({ message: `Received unknown parameter: ${param}`, ...(param ? { param } : {}) })
    default:
      if (param === undefined) {
        return issue.message.includes("actual null")
          ? new ParameterMissing({ message: "The request body is empty; expected a JSON object" })
          : new ParameterInvalid({ message: `Invalid request body: ${issue.message}` })
      }
      return new ParameterInvalid({ message: `Invalid ${param}: ${issue.message}`, param })
  }
}

const fromRequestError = (error: HttpServerError.RequestError): ApiFailure =>
  error.cause instanceof Error && error.cause.message === "maxBytes exceeded"
    ? new PayloadTooLarge({ message: "The request body is too large" })
    : new ParameterInvalid({ message: "The request body is not valid JSON" })

export interface RouteTable {
  /** Methods that serve this path, if any endpoint matches it. */
  readonly methodsFor: (path: string) => ReadonlyArray<string>
}

export const fromCause = (
  cause: Cause.Cause<unknown>,
  request: { readonly method: string; readonly path: string },
  routes: RouteTable
): { readonly failure: ApiFailure; readonly defect: boolean } => {
  const failure = Cause.failureOption(cause)
  const error: unknown = Option.isSome(failure) ? failure.value : Option.getOrUndefined(Cause.dieOption(cause))
  if (failureClassOf(error) !== undefined) return { failure: error as ApiFailure, defect: false }
  if (error instanceof HttpApiError.HttpApiDecodeError) return { failure: fromDecodeError(error), defect: false }
  if (HttpServerError.isServerError(error)) {
    if (error._tag === "RouteNotFound") {
      const allowed = routes.methodsFor(request.path)
      return {
        failure:
          allowed.length > 0
            ? new MethodNotAllowed({ message: `${request.method} is not allowed on ${request.path}; use ${allowed.join(", ")}` })
            : new RouteNotFound({ message: `Unrecognized request URL (${request.method} ${request.path})` }),
        defect: false
      }
    }
    if (error._tag === "RequestError" && error.reason === "Decode") {
      return { failure: fromRequestError(error), defect: false }
    }
  }
  return { failure: new InternalError({ message: "An internal error occurred" }), defect: true }
}
