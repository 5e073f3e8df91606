/** What the edge's steps share: the request as the edge knows it, and the answer each step hands on. */
import * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
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
}

/** What a step hands on: the answer of the steps after it and of the API, or their failure, which the platform encodes. */
export type Answer = Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>

/**
 * `answer`, with `decorate` applied to whatever goes out for it, a failure once the platform has encoded it
 * included: for a step whose headers go on every answer, the refusals of the steps after it too.
 */
export const decorated = <E, R>(
  answer: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  decorate: (response: HttpServerResponse.HttpServerResponse) => HttpServerResponse.HttpServerResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.zipRight(HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(decorate(response))), answer)
