/** What the edge's steps share: the request as the edge knows it, and the answer each step hands on. */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { AuthenticatedCaller } from "../auth/Authentication.js"

/** A request once it has its id and its caller. */
export interface EdgeRequest {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly requestId: string
  /** The fiber's Clock (a test's `TestClock`). */
  readonly clock: Clock.Clock
  /** Decoded. */
  readonly path: string
  /** None when the URL has no `?`. */
  readonly search: URLSearchParams | undefined
  /** A probe's path or a route's beside the API: answered without key, rate limit or CORS (`Endpoints.isOperational`). */
  readonly operational: boolean
  /** The caller whose key the request presented, when the key is valid. */
  readonly caller: Option.Option<AuthenticatedCaller>
  /** A failure as its error envelope. */
  readonly render: (cause: Cause.Cause<unknown>) => Effect.Effect<HttpServerResponse.HttpServerResponse>
}

/** What a step hands on: the answer of the steps after it and of the API, its failures not yet rendered. */
export type Answer = Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>

/**
 * `answer` with a failure rendered, then `decorate`d: for a step whose headers go on every answer, the
 * refusals of the steps after it too.
 */
export const decorated = (
  incoming: EdgeRequest,
  answer: Answer,
  decorate: (response: HttpServerResponse.HttpServerResponse) => HttpServerResponse.HttpServerResponse
): Answer =>
  Effect.matchCauseEffect(answer, {
    onFailure: (cause) => Effect.map(incoming.render(cause), decorate),
    onSuccess: (response) => Effect.succeed(decorate(response))
  })
