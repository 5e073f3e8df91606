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
import { SqlError } from "@effect/sql/SqlError"
import {
  type ApiFailure,
  failureClassOf,
  InternalError,
  InvalidCursor,
  InvalidLimit,
  MethodNotAllowed,
  ParameterInvalid,
  ParameterMissing,
  PayloadTooLarge,
  ResourceMissing,
  RouteNotFound,
  ServiceUnavailable
} from "../../schema/Errors.js"

/** `["urls", 3, "href"]` becomes `urls[3].href`. */
export const formatParam = (path: ReadonlyArray<PropertyKey>): string | undefined =>
  path.length === 0
    ? undefined
    : path.reduce<string>(
        (acc, key) => (typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`),
        ""
      )

const excerptOf = (text: string, length = 40) => (text.length <= length ? text : `${text.slice(0, length)}…`)

/**
 * The library's issue text ("Expected { readonly a: string }, actual {...}")
 * rewritten for people: what was expected in plain words, and the input only
 * as a short excerpt. Read from the text because the platform's
 * `HttpApiDecodeError` keeps only the formatted issues, not the parse tree.
 */
export const humanExpected = (message: string): string => {
  const match = /^Expected ([\s\S]*?)(?:, actual ([\s\S]*))?$/.exec(message.trim())
  if (match === null) return excerptOf(message, 200)
  const expected = describe(match[1]!.trim())
  const actual = match[2]
  return actual === undefined ? `expected ${expected}` : `expected ${expected}, got ${excerptOf(actual)}`
}

const describe = (schema: string): string => {
  if (/^\{[\s\S]*\}$/.test(schema) || schema.startsWith("Record<")) return "an object"
  if (/^(ReadonlyArray|Array)<|^readonly \[|^\[/.test(schema)) return "an array"
  const literals = schema.split(" | ").map((part) => /^"((?:[^"\\]|\\.)*)"$/.exec(part.trim()))
  if (literals.every((l) => l !== null)) {
    const values = literals.map((l) => `'${l![1]}'`)
    return values.length === 1 ? values[0]! : `one of ${values.join(", ")}`
  }
  switch (schema) {
    case "string":
      return "a string"
    case "number":
    case "Int":
      return schema === "Int" ? "an integer" : "a number"
    case "boolean":
      return "a boolean (true or false)"
    case "null":
      return "null"
  }
  return excerptOf(schema, 120)
}

const fromDecodeError = (error: HttpApiError.HttpApiDecodeError, method: string): ApiFailure => {
  const issue = error.issues[0]
  if (issue === undefined) return new ParameterInvalid({ message: "The request does not match the expected shape" })
  const param = formatParam(issue.path)
  // a union of literals fails once per member: name them all
  const literals = error.issues
    .filter((i) => i._tag === "Type" && formatParam(i.path) === param)
    .map((i) => /^Expected ("(?:[^"\\]|\\.)*"), actual/.exec(i.message)?.[1])
  if (literals.length > 1 && literals.every((l) => l !== undefined)) {
    const actual = /, actual ([\s\S]*)$/.exec(issue.message)?.[1] ?? ""
    const expected = `one of ${literals.map((l) => `'${l!.slice(1, -1)}'`).join(", ")}`
    return new ParameterInvalid({
      message: `Invalid ${param ?? "body"}: expected ${expected}, got ${excerptOf(actual)}`,
      ...(param ? { param } : {})
    })
  }
  // `limit=1&limit=2` and other malformed paging parameters of a list (a GET's query) keep their own codes; a
  // `limit` in a body (a knowledge search's) has its own range, which its schema's message names
  const paging = method === "GET" || method === "HEAD"
  if (paging && param === "limit") {
    return new InvalidLimit({ message: "limit must be one integer between 1 and 100", param })
  }
  if (paging && param === "starting_after") {
    return new InvalidCursor({ message: "starting_after must be one cursor returned by this list", param })
  }
  switch (issue._tag) {
    case "Missing":
      return new ParameterMissing({ message: `Missing required parameter: ${param}`, ...(param ? { param } : {}) })
    case "Unexpected":
      return new ParameterInvalid({ message: `Received unknown parameter: ${param}`, ...(param ? { param } : {}) })
    default:
      if (param === undefined) {
        return issue.message.includes("actual null") || issue.message.includes("actual undefined")
          ? new ParameterMissing({ message: "The request body is empty; expected a JSON object" })
          : new ParameterInvalid({
              message: `Invalid request body: expected an object${/, actual ([\s\S]*)$/.test(issue.message) ? `, got ${excerptOf(/, actual ([\s\S]*)$/.exec(issue.message)![1]!)}` : ""}`
            })
      }
      return new ParameterInvalid({ message: `Invalid ${param}: ${humanExpected(issue.message)}`, param })
  }
}

const fromRequestError = (error: HttpServerError.RequestError): ApiFailure =>
  error.cause instanceof Error && error.cause.message === "maxBytes exceeded"
    ? new PayloadTooLarge({ message: "The request body is too large" })
    : new ParameterInvalid({ message: "The request body is not valid JSON" })

export interface AllowedMethods {
  /** Methods that serve this path, if any endpoint's path matches it. */
  readonly methodsFor: (path: string) => ReadonlyArray<string>
}

export const fromCause = (
  cause: Cause.Cause<unknown>,
  request: { readonly method: string; readonly path: string },
  routes: AllowedMethods
): { readonly failure: ApiFailure; readonly defect: boolean } => {
  const failure = Cause.failureOption(cause)
  const error: unknown = Option.isSome(failure) ? failure.value : Option.getOrUndefined(Cause.dieOption(cause))
  if (failureClassOf(error) !== undefined) return { failure: error as ApiFailure, defect: false }
  if (error instanceof HttpApiError.HttpApiDecodeError) return { failure: fromDecodeError(error, request.method), defect: false }
  if (HttpServerError.isServerError(error)) {
    if (error._tag === "RouteNotFound") {
      const allowed = routes.methodsFor(request.path)
      // the method is served here, so the router refused the id itself (too long, undecodable): no such object
      if (allowed.includes(request.method)) {
        return { failure: new ResourceMissing({ message: `No such object at ${excerptOf(request.path, 80)}` }), defect: false }
      }
      return {
        failure:
          allowed.length > 0
            ? new MethodNotAllowed({ message: `${request.method} is not allowed on ${excerptOf(request.path, 80)}; use ${allowed.join(", ")}` })
            : new RouteNotFound({ message: `Unrecognized request URL (${request.method} ${excerptOf(request.path, 80)})` }),
        defect: false
      }
    }
    if (error._tag === "RequestError" && error.reason === "Decode") {
      return { failure: fromRequestError(error), defect: false }
    }
  }
  if (databaseUnreachable(error)) {
    return { failure: new ServiceUnavailable({ message: "The database is not reachable; retry shortly" }), defect: true }
  }
  return { failure: new InternalError({ message: "An internal error occurred" }), defect: true }
}

/** Connection errors (refused, reset, timed out) and the server's own shutdown codes: 08xxx, 57P0x. */
const unreachableCodes = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|08...|57P0[123])$/

/**
 * A query that failed because the database is away (stopped, restarting, the
 * network), not because of the query: the caller should retry, so 503. Any
 * other SQL failure stays a 500.
 */
const databaseUnreachable = (error: unknown): boolean => {
  if (!(error instanceof SqlError)) return false
  // the driver's error, possibly wrapped once more (pool → client → socket)
  for (let cause: unknown = error.cause, depth = 0; cause instanceof Error && depth < 4; depth++) {
    const code = (cause as { readonly code?: unknown }).code
    if (typeof code === "string" && unreachableCodes.test(code)) return true
    if (/Connection terminated|connection timeout|Failed to acquire connection/i.test(cause.message)) return true
    cause = cause.cause
  }
  return /Failed to acquire connection|Connection terminated/i.test(error.message)
}
