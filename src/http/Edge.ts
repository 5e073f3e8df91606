/**
 * The edge: one middleware around the whole API. For every request it assigns
 * the request id, resolves the presented key once, takes a rate-limit token,
 * applies the input policy (`InputPolicy.ts`: path, query, body size, media
 * type, JSON shape) and hands the API the checked body, applies Idempotency-Key
 * to POSTs, renders every failure into the error envelope, and sets
 * `Request-Id` and `X-RateLimit-*`.
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import {
  IdempotencyKeyMismatch,
  IdempotencyRequestInProgress,
  InvalidIdempotencyKey,
  ParameterInvalid,
  PayloadTooLarge,
  UnsupportedMediaType
} from "../../schema/Errors.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { withAfterCommit } from "../../layers/JobQueue.js"
import { type AuthResult, Authenticator, CurrentAuth } from "../auth/Authentication.js"
import { AppConfig } from "../Config.js"
import { CurrentRequestId } from "./Envelope.js"
import { errorResponse } from "./ErrorResponse.js"
import { fromCause } from "./Failures.js"
import { bodyLeftUnread, checkPath, checkQuery, maxBodyBytes, parseJsonBody, readBody } from "./InputPolicy.js"
import { IdempotencyStore } from "./Idempotency.js"
import { type RateLimitState, RequestRateLimiter } from "./RateLimit.js"
import { routeTable } from "./Routes.js"

/** Operational paths: no key, no rate limit (probes and docs must always answer). */
const isOperational = (path: string) =>
  path === "/healthz" || path === "/readyz" || path === "/docs" || path.startsWith("/docs/") || path.startsWith("/admin/")

const isWrite = (method: string) => method === "POST" || method === "PUT" || method === "PATCH" || method === "DELETE"

const validIdempotencyKey = /^[\x21-\x7e]{1,255}$/

/** `application/json` and every `+json` type (`application/merge-patch+json`), with parameters. */
const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/([a-z0-9!#$&^_.-]+\+)?json\s*(;.*)?$/is.test(contentType.trim())

const isEmptyObject = (value: unknown) =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0

/**
 * The request the API sees: the body already read and checked by the edge, as
 * `application/json` (a `+json` type, or no type on an empty body), which is how
 * the library picks its decoder; any other decoder would read the already
 * consumed stream and wait forever. Everything else is the original request
 * (its prototype).
 */
const withCheckedBody = (
  request: HttpServerRequest.HttpServerRequest,
  text: string,
  value: unknown
): HttpServerRequest.HttpServerRequest => {
  const headers = { ...request.headers, "content-type": "application/json" }
  const bytes = new TextEncoder().encode(text)
  return Object.create(request, {
    headers: { value: headers },
    text: { get: () => Effect.succeed(text) },
    json: { get: () => Effect.succeed(value) },
    arrayBuffer: { get: () => Effect.succeed(bytes.buffer) },
    stream: { get: () => Stream.succeed(bytes) }
  })
}

/** The path as sent, before any decoding. */
const rawPathOf = (url: string) => url.split("?", 1)[0]!

const storable = (response: HttpServerResponse.HttpServerResponse) =>
  response.status < 500 && (response.body._tag === "Uint8Array" || response.body._tag === "Empty")

export const makeEdge = Effect.gen(function* () {
  const authenticator = yield* Authenticator
  const rateLimiter = yield* RequestRateLimiter
  const idempotency = yield* IdempotencyStore
  const ids = yield* IdGenerator
  const config = yield* AppConfig
  const docsUrl = `${config.publicUrl}/docs/errors`

  return (app: HttpApp.Default): HttpApp.Default =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const requestId = yield* ids.make("req")
      const path = new URL(request.url, "http://edge").pathname
      const operational = isOperational(path)

      const render = (cause: Cause.Cause<unknown>) => {
        const { failure, defect } = fromCause(cause, { method: request.method, path }, routeTable)
        const response = errorResponse(failure, { requestId, docsUrl, allow: routeTable.methodsFor(path) })
        return defect
          ? Effect.as(Effect.logError("request failed with a defect", cause), response)
          : Effect.succeed(response)
      }
      const rendered = <E, R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
        Effect.catchAllCause(effect, render)

      const auth: Option.Option<AuthResult> = operational
        ? Option.none()
        : Option.some(yield* authenticator.resolve(request.headers))
      const caller = Option.flatMap(auth, Either.getRight)
      let rate: RateLimitState | undefined
      let closeAfter = false

      const idempotent = (
        body: string,
        inner: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
      ) =>
        Effect.gen(function* () {
          const key = request.headers["idempotency-key"]
          if (request.method !== "POST" || key === undefined || Option.isNone(caller)) return yield* inner
          if (!validIdempotencyKey.test(key)) {
            return yield* new InvalidIdempotencyKey({
              message: "Idempotency-Key must be 1 to 255 printable ASCII characters",
              param: "Idempotency-Key"
            })
          }
          const fingerprint = createHash("sha256").update(`${request.method} ${request.url}\n${body}`).digest("hex")
          const scope = { workspaceId: caller.value.workspaceId, environment: caller.value.environment, key }
          const claim = yield* idempotency.claim(scope, fingerprint)
          switch (claim._tag) {
            case "Mismatch":
              return yield* new IdempotencyKeyMismatch({
                message: "This Idempotency-Key was used with a different request in the last 24 hours",
                param: "Idempotency-Key"
              })
            case "InProgress":
              return yield* new IdempotencyRequestInProgress({
                message: "A request with this Idempotency-Key is still in progress; retry shortly",
                param: "Idempotency-Key"
              })
            case "Replay":
              return HttpServerResponse.text(claim.response.body, {
                status: claim.response.status,
                contentType: claim.response.contentType,
                headers: { "idempotent-replayed": "true" }
              })
            case "Owned": {
              const response = yield* Effect.onInterrupt(inner, () => idempotency.release(scope))
              if (!storable(response)) {
                yield* idempotency.release(scope)
                return response
              }
              const stored =
                response.body._tag === "Uint8Array"
                  ? { contentType: response.body.contentType, body: new TextDecoder().decode(response.body.body) }
                  : { contentType: "application/json", body: "" }
              yield* idempotency.complete(scope, { status: response.status, ...stored })
              return response
            }
          }
        })

      const guarded = Effect.gen(function* () {
        if (!operational) {
          const key = Option.match(caller, {
            onSome: (c) => `key:${c.keyId}`,
            onNone: () => `ip:${Option.getOrElse(request.remoteAddress, () => "unknown")}`
          })
          const decision = yield* rateLimiter.take(key)
          rate = decision.state
          if (decision.rejected !== undefined) return yield* decision.rejected
        }
        const refused = checkPath(rawPathOf(request.url)) ?? checkQuery(new URL(request.url, "http://edge").searchParams)
        if (refused !== undefined) return yield* refused
        // refuse an oversized body before reading any of it
        if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) {
          return yield* new PayloadTooLarge({ message: `The request body exceeds ${maxBodyBytes} bytes` })
        }
        if (operational || !isWrite(request.method) || request.method === "DELETE") return yield* idempotent("", rendered(app))
        const source = NodeHttpServerRequest.toIncomingMessage(request)
        const text = yield* readBody(source).pipe(
          Effect.tapError(() => Effect.sync(() => (closeAfter = bodyLeftUnread(source))))
        )
        if (text !== "" && !isJson(request.headers["content-type"])) {
          return yield* new UnsupportedMediaType({
            message: "Send the body as JSON with `Content-Type: application/json` (or a `+json` type)",
            param: "Content-Type"
          })
        }
        const value = yield* parseJsonBody(text)
        if (routeTable.find(request.method, path)?.bodiless && value !== undefined && !isEmptyObject(value)) {
          return yield* new ParameterInvalid({
            message: "This endpoint takes no body: send none, or `{}`",
            param: "body"
          })
        }
        return yield* idempotent(
          text,
          rendered(app).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, withCheckedBody(request, text, value)))
        )
      })

      let response = yield* rendered(guarded).pipe(
        // wake-ups registered inside the request's transactions (e.g. new jobs), now that they committed
        withAfterCommit,
        Effect.locally(CurrentRequestId, requestId),
        Effect.locally(CurrentAuth, auth)
      )
      response = HttpServerResponse.setHeader(response, "request-id", requestId)
      if (closeAfter) response = HttpServerResponse.setHeader(response, "connection", "close")
      if (rate !== undefined) {
        const nowMillis = yield* Clock.currentTimeMillis
        response = HttpServerResponse.setHeaders(response, {
          "x-ratelimit-limit": String(rate.limit),
          "x-ratelimit-remaining": String(rate.remaining),
          "x-ratelimit-reset": String(Math.ceil((nowMillis + rate.resetAfterMillis) / 1000))
        })
      }
      return response
    }).pipe(HttpIncomingMessage.withMaxBodySize(Option.some(maxBodyBytes)))
})

/** Installs the edge around the API (the `HttpApiBuilder` global middleware slot). */
export const EdgeLive = HttpApiBuilder.middleware(makeEdge)
