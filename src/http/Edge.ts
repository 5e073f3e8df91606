/**
 * The edge: one middleware around the whole API, a sequence of named steps, the same for every request
 * whatever its route (the router matches inside it). It assigns the request id and resolves the presented
 * key once (authentication; none on the probes and the routes beside the API); then, each step wrapping the
 * ones after it:
 * CORS (`Cors.ts`), the rate limit (`RateLimit.ts`), the input policy on the path and query
 * (`InputPolicy.ts`) and the API, whose body is capped. What depends on the endpoint the router matches (the
 * body policy, `Idempotency-Key`) runs as the API's own middlewares (`schema/Endpoint.ts`). Whatever stopped
 * the request becomes a failure of the catalog, which the platform encodes into the error envelope; every
 * answer leaves with `Request-Id`, logged and counted, and a refusal sent before the request's body has all
 * arrived closes gently (`Linger.ts`).
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { type ApiFailure, CurrentDocsUrl } from "../../schema/Errors.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { RequestLog } from "../Logging.js"
import { recordRequest } from "./Metrics.js"
import { afterCommitInFiber } from "../../layers/JobQueue.js"
import { type AuthResult, Authenticator, CurrentAuth } from "../auth/Authentication.js"
import { AppConfig } from "../Config.js"
import { fiberValue, requestAndClock, setOnFiber, withHeaders } from "../Performance.js"
import { makeCors } from "./Cors.js"
import { decorated, type EdgeRequest } from "./EdgeRequest.js"
import { CurrentRequestId } from "./Envelope.js"
import { failureHeaders } from "./ErrorResponse.js"
import { fromCause } from "./Failures.js"
import { closeGently } from "./Linger.js"
import { checkPathAndQuery, maxBodyBytes } from "./InputPolicy.js"
import { makeRateLimit } from "./RateLimit.js"
import * as Endpoints from "./Endpoints.js"
import { routeNameOf } from "./RouteName.js"

/**
 * A path of plain segments (no query, no dot segment, nothing a URL parser would escape or resolve): it is
 * its own `pathname`, so most requests skip parsing a URL.
 */
const plainPath = /^(?:\/[A-Za-z0-9_~-][A-Za-z0-9_.~-]*)*\/?$/

/** The request's decoded path and its query (none when it has no `?`). */
const pathAndQuery = (url: string): { readonly path: string; readonly search: URLSearchParams | undefined } => {
  if (plainPath.test(url)) return { path: url, search: undefined }
  const parsed = new URL(url, "http://edge")
  return { path: parsed.pathname, search: parsed.search === "" ? undefined : parsed.searchParams }
}

export const makeEdge = Effect.gen(function* () {
  const authenticator = yield* Authenticator
  const ids = yield* IdGenerator
  const config = yield* AppConfig
  const requestLog = yield* RequestLog
  const cors = yield* makeCors
  const rateLimit = yield* makeRateLimit
  const docsUrl = `${config.publicUrl}/docs/errors`

  /**
   * What stopped a request, as a failure of the catalog for the platform to encode (`ApiError`), with the
   * headers it carries: ours pass as they are; the router's misses, the library's decode and body errors get
   * their public code; a defect is logged and becomes `internal_error`. An answer given as the defect (an
   * idempotent retry's stored one) is the answer.
   */
  const refusal = (request: HttpServerRequest.HttpServerRequest, path: string) => (cause: Cause.Cause<unknown>) => {
    const early = Cause.dieOption(cause).pipe(Option.filter(HttpServerResponse.isServerResponse))
    if (Option.isSome(early)) return Effect.succeed(early.value)
    const { failure, defect } = fromCause(cause, { method: request.method, path }, Endpoints)
    const headers = failureHeaders(failure, Endpoints.methodsFor(path))
    const refused = decorated(Effect.fail(failure), (response) => withHeaders(response, headers))
    return defect ? Effect.zipRight(Effect.logError("request failed with a defect", cause), refused) : refused
  }

  /**
   * Authentication: the presented key resolved once (the rate limit and idempotency need the caller, and the
   * Authentication middleware reads it from `CurrentAuth`); none on operational paths. A defect of the
   * lookup (the database away) is refused like any other.
   */
  const authenticate = (request: HttpServerRequest.HttpServerRequest, operational: boolean) =>
    operational ? Effect.succeed(undefined) : Effect.exit(authenticator.resolve(request.headers))

  /** The request line and the metrics: only these fields, as the path, query, headers and body may carry ids of people, keys and tokens. */
  const logged = (
    incoming: EdgeRequest,
    response: HttpServerResponse.HttpServerResponse,
    startNanos: bigint
  ): Effect.Effect<void> =>
    Effect.flatMap(routeNameOf(incoming.path), (route) => {
      const { clock, request, requestId } = incoming
      const endNanos = clock.unsafeCurrentTimeNanos()
      const seconds = Number(endNanos - startNanos) / 1e9
      recordRequest(route, request.method, response.status, seconds)
      return requestLog.line(
        {
          request_id: requestId,
          method: request.method,
          route,
          status: response.status,
          duration_ms: Math.round(seconds * 1e6) / 1e3
        },
        Number(endNanos / 1_000_000n)
      )
    })

  /** How every answer leaves, the platform's encoding of a failure included: with its id, logged, closed gently. */
  const leaving = (incoming: EdgeRequest, startNanos: bigint): HttpApp.PreResponseHandler => (_, answer) => {
    const response = HttpServerResponse.setHeader(answer, "request-id", incoming.requestId)
    return Effect.as(logged(incoming, response, startNanos), closeGently(incoming.request, response))
  }

  return (app: HttpApp.Default): HttpApp.Default<ApiFailure> =>
    Effect.gen(function* () {
      const { clock, request } = yield* requestAndClock
      const startNanos = clock.unsafeCurrentTimeNanos()
      const requestId = yield* ids.make("req")
      const { path, search } = pathAndQuery(request.url)
      const operational = Endpoints.isOperational(path)

      const resolved = yield* authenticate(request, operational)
      const auth: Option.Option<AuthResult> =
        resolved === undefined || Exit.isFailure(resolved) ? Option.none() : Option.some(resolved.value)
      // wake-ups registered inside the request's transactions (e.g. new jobs) run once it is answered
      const afterCommit = afterCommitInFiber()
      yield* setOnFiber(
        fiberValue(CurrentRequestId, requestId),
        fiberValue(CurrentDocsUrl, docsUrl),
        fiberValue(CurrentAuth, auth),
        fiberValue(afterCommit.fiberRef, afterCommit.hooks)
      )
      const incoming: EdgeRequest = {
        request,
        requestId,
        clock,
        path,
        search,
        operational,
        caller: Option.flatMap(auth, Either.getRight)
      }
      // the steps, outermost first, each around the ones after it; a body is read under the cap of the API's
      // (the body policy raises it for an upload)
      const api = app.pipe(HttpIncomingMessage.withMaxBodySize(Option.some(maxBodyBytes)))
      const answer =
        resolved !== undefined && Exit.isFailure(resolved)
          ? Effect.failCause(resolved.cause)
          : cors(incoming, rateLimit(incoming, checkPathAndQuery(incoming, api)))
      const settled = yield* Effect.exit(Effect.catchAllCause(answer, refusal(request, path)))
      // registered once the steps have run, the answer's last handler: it sees what the others made of it
      yield* HttpApp.appendPreResponseHandler(leaving(incoming, startNanos))
      return yield* afterCommit.after(settled)
    })
})

/**
 * Installs the edge around the API (the `HttpApiBuilder` global middleware slot). The platform encodes its
 * refusals with the schemas the endpoints declare (each class is declared on some endpoint:
 * test/http/refusals-declared.test.ts); the slot's type admits no failure, hence the cast.
 */
export const EdgeLive = HttpApiBuilder.middleware(
  Effect.map(makeEdge, (edge) => edge as (app: HttpApp.Default) => HttpApp.Default)
)
