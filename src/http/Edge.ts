/**
 * The edge: one middleware around the whole API. For every request it assigns
 * the request id, resolves the presented key once, takes a rate-limit token,
 * applies the input policy (`InputPolicy.ts`: path, query, body size, media
 * type, JSON shape) and hands the API the checked body, applies Idempotency-Key
 * to POSTs (a streamed reply is kept as the reply it streams, see `Idempotency.ts`), renders every failure into the error envelope, and sets
 * `Request-Id` and `X-RateLimit-*`.
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import * as Headers from "@effect/platform/Headers"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberRefs from "effect/FiberRefs"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import {
  IdempotencyKeyMismatch,
  IdempotencyRequestInProgress,
  InvalidIdempotencyKey,
  OriginNotAllowed,
  ParameterInvalid,
  PayloadTooLarge,
  UnsupportedMediaType
} from "../../schema/Errors.js"
import { MAX_FILE_BYTES } from "../../schema/Files.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { RequestLog } from "../Logging.js"
import { recordRequest } from "./Metrics.js"
import { afterCommitInFiber } from "../../layers/JobQueue.js"
import { type AuthResult, Authenticator, CurrentAuth } from "../auth/Authentication.js"
import { AppConfig } from "../Config.js"
import {
  corsHeaders,
  formCorsHeaders,
  FormOrigins,
  formOf,
  preflightHeaders,
  varyOrigin,
  widgetAgentOf,
  WidgetOrigins
} from "./Cors.js"
import { CurrentRequestId } from "./Envelope.js"
import { errorResponse } from "./ErrorResponse.js"
import { fromCause } from "./Failures.js"
import { bodyLeftUnread, checkPath, checkQuery, maxBodyBytes, parseJsonBody, readBody } from "./InputPolicy.js"
import { eventStreamType, IdempotencyStore, ReplayableStreams, StreamRef } from "./Idempotency.js"
import { type RateLimitState, RequestRateLimiter } from "./RateLimit.js"
import { routeTable } from "./Routes.js"

/**
 * The one route whose body is raw bytes (a file's content): these media types,
 * up to 25 MB, counted as they stream in; the JSON rules do not apply to it.
 */
const isUpload = (method: string, path: string) => method === "PUT" && /^\/v1\/files\/[^/]+\/content\/?$/.test(path)
const uploadMediaType = /^(application\/octet-stream|application\/pdf|image\/(png|jpeg|webp)|audio\/(mpeg|wav|mp4|ogg)|text\/[a-z0-9.+-]+)\s*(;|$)/i

/**
 * Operational paths: no key, no rate limit (probes and docs must always answer;
 * the form component's script and demo page are public pages, not the API).
 */
const isOperational = (path: string) =>
  path === "/healthz" ||
  path === "/readyz" ||
  path === "/metrics" ||
  path === "/docs" ||
  path.startsWith("/docs/") ||
  path.startsWith("/admin/") ||
  path.startsWith("/storage/v1/object/public/widget/") ||
  path.startsWith("/demo/forms/")

/** The route template a request is counted and logged under: never the raw path (ids, unbounded label values). */
const routeOf = (method: string, path: string): string => {
  const entry = routeTable.find(method === "HEAD" ? "GET" : method, path)
  if (entry !== undefined) return entry.template
  if (path === "/metrics" || path === "/docs" || path === "/docs/errors") return path
  if (path.startsWith("/docs/")) return "/docs/*"
  if (path.startsWith("/admin/")) return "/admin/*"
  if (path.startsWith("/storage/v1/object/public/widget/")) return "/storage/v1/object/public/widget/*"
  if (path.startsWith("/demo/forms/")) return "/demo/forms/{form_id}"
  return "unmatched"
}

const isWrite = (method: string) => method === "POST" || method === "PUT" || method === "PATCH" || method === "DELETE"

const validIdempotencyKey = /^[\x21-\x7e]{1,255}$/

/** The form submit endpoint: its key comes in `Service-Api-Key`, which its handler checks itself. */
const isFormSubmit = (path: string) => /^\/api\/forms\/[^/]+\/submit$/.test(path)

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

/**
 * `response` with these headers, set one by one: `HttpServerResponse.setHeaders` builds its headers through
 * `Headers.fromInput` and two spreads, and cost 2.3 µs for the edge's four headers where setting them one by
 * one cost 0.4 µs (a microbenchmark on Node 20).
 */
const withHeaders = (response: HttpServerResponse.HttpServerResponse, headers: Record<string, string>) => {
  let out = response
  for (const name in headers) out = HttpServerResponse.setHeader(out, name, headers[name]!)
  return out
}

/** Adds CORS headers; a `Vary` the response already has (a form's config varies by its key too) keeps its names. */
const withCors = (response: HttpServerResponse.HttpServerResponse, headers: Record<string, string>) => {
  const vary = response.headers["vary"]
  const merged = withHeaders(response, headers)
  return vary === undefined || headers["vary"] === undefined || /\borigin\b/i.test(vary)
    ? vary === undefined
      ? merged
      : HttpServerResponse.setHeader(merged, "vary", vary)
    : HttpServerResponse.setHeader(merged, "vary", `${vary}, ${headers["vary"]}`)
}

/**
 * The request and the fiber's Clock in one fiber step: every request reads both, and `Clock.currentTimeNanos`
 * plus the request's tag took several (a test's `TestClock` is the fiber's Clock all the same).
 */
const requestAndClock = Effect.withFiberRuntime<{
  readonly request: HttpServerRequest.HttpServerRequest
  readonly clock: Clock.Clock
}>((fiber) =>
  Effect.succeed({
    request: Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest),
    clock: Context.get(fiber.getFiberRef(DefaultServices.currentServices), Clock.Clock)
  })
)

const storable = (response: HttpServerResponse.HttpServerResponse) =>
  response.status < 500 && (response.body._tag === "Uint8Array" || response.body._tag === "Empty")

/** The reply an event-stream answer streams, when it names one (a message's reply): kept instead of its bytes. */
const streamRefOf = (response: HttpServerResponse.HttpServerResponse): StreamRef | undefined => {
  const conversationId = response.headers["conversation-id"]
  const messageId = response.headers["message-id"]
  return response.status === 200 &&
    response.body._tag === "Stream" &&
    response.body.contentType.startsWith(eventStreamType) &&
    conversationId !== undefined &&
    messageId !== undefined
    ? { conversation_id: conversationId, message_id: messageId }
    : undefined
}

const decodeStreamRef = Schema.decodeUnknownEither(Schema.parseJson(StreamRef))

export const makeEdge = Effect.gen(function* () {
  const authenticator = yield* Authenticator
  const rateLimiter = yield* RequestRateLimiter
  const idempotency = yield* IdempotencyStore
  const replayable = yield* ReplayableStreams
  const ids = yield* IdGenerator
  const config = yield* AppConfig
  const widgetOrigins = yield* WidgetOrigins
  const formOrigins = yield* FormOrigins
  const requestLog = yield* RequestLog
  const docsUrl = `${config.publicUrl}/docs/errors`

  return (app: HttpApp.Default): HttpApp.Default =>
    Effect.gen(function* () {
      const { clock, request } = yield* requestAndClock
      const startNanos = clock.unsafeCurrentTimeNanos()
      const requestId = yield* ids.make("req")
      const { path, search } = pathAndQuery(request.url)
      const operational = isOperational(path)

      const render = (cause: Cause.Cause<unknown>) => {
        const { failure, defect } = fromCause(cause, { method: request.method, path }, routeTable)
        const response = errorResponse(failure, { requestId, docsUrl, allow: routeTable.methodsFor(path) })
        return defect
          ? Effect.as(Effect.logError("request failed with a defect", cause), response)
          : Effect.succeed(response)
      }
      // Failures are rendered once, by the match around `guarded` below; only an answer kept for an
      // Idempotency-Key replay is rendered where it is made, since the failure's envelope is what is kept.
      const rendered = <E, R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
        Effect.catchAllCause(effect, render)

      // the key lookup reads the database: a defect there (the database away) is rendered like any other
      const resolved = operational ? undefined : yield* Effect.exit(authenticator.resolve(request.headers))
      const auth: Option.Option<AuthResult> =
        resolved === undefined || Exit.isFailure(resolved) ? Option.none() : Option.some(resolved.value)
      // wake-ups registered inside the request's transactions (e.g. new jobs) run once it is answered
      const afterCommit = afterCommitInFiber()
      // The platform runs each request in a fiber of its own, so the request's values are set on that fiber
      // for the rest of its life, all in one step (each `FiberRef.set` is a fiber step and a copy of the
      // fiber's FiberRefs).
      yield* Effect.updateFiberRefs((fiberId, refs) =>
        FiberRefs.updateManyAs(refs, {
          entries: [
            [CurrentRequestId, [[fiberId, requestId]]],
            [CurrentAuth, [[fiberId, auth]]],
            [afterCommit.fiberRef, [[fiberId, afterCommit.hooks]]]
          ]
        })
      )
      if (resolved !== undefined && Exit.isFailure(resolved)) {
        return HttpServerResponse.setHeader(yield* render(resolved.cause), "request-id", requestId)
      }
      const caller = Option.flatMap(auth, Either.getRight)
      let rate: RateLimitState | undefined
      let closeAfter = false
      const widget = operational ? undefined : widgetAgentOf(path)
      const form = operational ? undefined : formOf(path)
      /** Headers of the widget surface's CORS answer, once the origin is known to be allowed. */
      let cors: Record<string, string> | undefined

      /** Whose Idempotency-Key a form submission's is: the workspace of its `Service-Api-Key`, when valid. */
      const formsKeyOwner = Effect.gen(function* () {
        const formsKey = request.headers["service-api-key"]
        if (formsKey === undefined || !isFormSubmit(path)) return Option.none()
        return Either.getRight(yield* authenticator.resolve(Headers.fromInput({ authorization: `Bearer ${formsKey}` })))
      })

      const idempotent = (
        body: string,
        inner: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
      ) =>
        Effect.gen(function* () {
          const key = request.headers["idempotency-key"]
          if (request.method !== "POST" || key === undefined) return yield* inner
          const owner = Option.isSome(caller) ? caller : yield* formsKeyOwner
          if (Option.isNone(owner)) return yield* inner
          if (!validIdempotencyKey.test(key)) {
            return yield* new InvalidIdempotencyKey({
              message: "Idempotency-Key must be 1 to 255 printable ASCII characters",
              param: "Idempotency-Key"
            })
          }
          const fingerprint = createHash("sha256").update(`${request.method} ${request.url}\n${body}`).digest("hex")
          const scope = { workspaceId: owner.value.workspaceId, environment: owner.value.environment, key }
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
            case "Replay": {
              const stored = claim.response
              if (stored.contentType !== eventStreamType) {
                return HttpServerResponse.text(stored.body, {
                  status: stored.status,
                  contentType: stored.contentType,
                  headers: { "idempotent-replayed": "true" }
                })
              }
              // a streamed reply: its events again from the first, followed live while it is generated
              const ref = decodeStreamRef(stored.body)
              if (Either.isLeft(ref)) return yield* Effect.die(ref.left)
              const replayed = yield* replayable.replay(owner.value, ref.right)
              return HttpServerResponse.setHeader(replayed, "idempotent-replayed", "true")
            }
            case "Owned": {
              const response = yield* Effect.onInterrupt(inner, () => idempotency.release(scope))
              // kept as the reply it streams, once its headers are ready: a retry from then on follows that reply
              const ref = streamRefOf(response)
              if (ref !== undefined) {
                yield* idempotency.complete(scope, { status: 200, contentType: eventStreamType, body: JSON.stringify(ref) })
                return response
              }
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
        // The page's origin is settled first, so that every answer to an allowed origin carries the CORS
        // headers, the edge's own refusals too: a 429 without them is a network error to the page.
        if (widget !== undefined) {
          cors = varyOrigin
          const origin = request.headers["origin"]
          const allowed =
            origin !== undefined &&
            widget.agentId !== undefined &&
            (yield* widgetOrigins.allowedOrigins(widget.agentId)).includes(origin)
          if (request.method === "OPTIONS") {
            const methods = routeTable.methodsFor(path)
            // a foreign origin gets a bare 204: without CORS headers the browser refuses the call
            return HttpServerResponse.empty({
              status: 204,
              headers: allowed && methods.length > 0 ? preflightHeaders(origin, methods) : varyOrigin
            })
          }
          if (allowed) cors = corsHeaders(origin)
          else if (origin !== undefined) {
            return yield* new OriginNotAllowed({
              message: `This agent's widget does not accept requests from the origin '${origin.slice(0, 200)}'; add it to the agent's allowed_origins`,
              param: "Origin"
            })
          }
        }
        if (form !== undefined && request.method !== "OPTIONS") {
          const allowed = yield* formOrigins.allowedOrigin(form, request.headers["origin"])
          cors = Option.isSome(allowed) ? { ...formCorsHeaders(allowed.value), ...varyOrigin } : varyOrigin
        }
        // A preflight changes nothing and its answer is cached; refused, the page could not even send the
        // request it asks about, nor read why. It takes no token.
        if (!operational && request.method !== "OPTIONS") {
          const key = Option.match(caller, {
            onSome: (c) => `key:${c.keyId}`,
            onNone: () => `ip:${Option.getOrElse(request.remoteAddress, () => "unknown")}`
          })
          const decision = yield* rateLimiter.take(key)
          rate = decision.state
          if (decision.rejected !== undefined) return yield* decision.rejected
        }
        const refused = checkPath(rawPathOf(request.url)) ?? (search === undefined ? undefined : checkQuery(search))
        if (refused !== undefined) return yield* refused
        const upload = isUpload(request.method, path)
        const maxBytes = upload ? MAX_FILE_BYTES : maxBodyBytes
        // refuse an oversized body before reading any of it
        if (Number(request.headers["content-length"] ?? 0) > maxBytes) {
          return yield* new PayloadTooLarge({ message: `The request body exceeds ${maxBytes} bytes` })
        }
        if (upload) {
          if (!uploadMediaType.test(request.headers["content-type"] ?? "")) {
            return yield* new UnsupportedMediaType({
              message: "Send the file's bytes as application/octet-stream, image/*, audio/*, application/pdf or text/*",
              param: "Content-Type"
            })
          }
          // the handler reads the bytes itself, counted against this cap as they stream in
          return yield* app.pipe(HttpIncomingMessage.withMaxBodySize(Option.some(MAX_FILE_BYTES)))
        }
        if (!isWrite(request.method)) return yield* app
        if (operational || request.method === "DELETE") {
          // read by the app itself (the admin endpoints), under the same cap
          const capped = app.pipe(HttpIncomingMessage.withMaxBodySize(Option.some(maxBodyBytes)))
          // a bodiless POST (operational paths) may still carry an Idempotency-Key
          return yield* request.method === "POST" ? idempotent("", rendered(capped)) : capped
        }
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

      let response = yield* Effect.matchCauseEffect(guarded, {
        onFailure: (cause) => afterCommit.after(render(cause)),
        onSuccess: (answer) => afterCommit.after(Effect.succeed(answer))
      })
      if (cors !== undefined) response = withCors(response, cors)
      const endNanos = clock.unsafeCurrentTimeNanos()
      const nowMillis = Number(endNanos / 1_000_000n)
      const headers: Record<string, string> = { "request-id": requestId }
      if (closeAfter) headers["connection"] = "close"
      if (rate !== undefined) {
        headers["x-ratelimit-limit"] = String(rate.limit)
        headers["x-ratelimit-remaining"] = String(rate.remaining)
        headers["x-ratelimit-reset"] = String(Math.ceil((nowMillis + rate.resetAfterMillis) / 1000))
      }
      response = withHeaders(response, headers)
      const seconds = Number(endNanos - startNanos) / 1e9
      const route = routeOf(request.method, path)
      recordRequest(route, request.method, response.status, seconds)
      // only these fields: the path, query, headers and body may carry ids of people, keys and tokens
      yield* requestLog.line(
        {
          request_id: requestId,
          method: request.method,
          route,
          status: response.status,
          duration_ms: Math.round(seconds * 1e6) / 1e3
        },
        nowMillis
      )
      return response
    })
})

/** Installs the edge around the API (the `HttpApiBuilder` global middleware slot). */
export const EdgeLive = HttpApiBuilder.middleware(makeEdge)
