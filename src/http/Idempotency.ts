/**
 * Idempotency records, per (workspace, environment, key), kept 24 h by the Clock.
 *
 * A request claims its key atomically (insert, or take over an expired record),
 * so of N concurrent requests with one key exactly one runs; the others see it
 * running (409) until it completes, then get its stored response. A claim is a
 * lease: if the process dies mid-request, the key frees itself when it lapses.
 *
 * An event stream (a reply to a message) is not kept as bytes: its record names
 * the reply it streams (`StreamRef`), and a replay is that reply's events from
 * the first, through `ReplayableStreams` (the completions area serves it, in the
 * shape the endpoint's `StreamFormat` names; the edge cannot import that area). The record is complete once the stream's
 * headers are ready, so a retry while the reply is still generated follows it live.
 *
 * An answer that shows a secret once (`ShowsSecret`) is kept sealed under the calling key's own value
 * (`SealedAnswer.ts`): a retry by that key gets it again; one by another key of the workspace is refused.
 */
import * as Headers from "@effect/platform/Headers"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { createHash } from "node:crypto"
import { Idempotency } from "../../schema/Endpoint.js"
import {
  type ApiFailure,
  IdempotencyKeyMismatch,
  IdempotencyRequestInProgress,
  InvalidIdempotencyKey
} from "../../schema/Errors.js"
import type { Tenant } from "../../schema/Tenant.js"
import { Authenticator, CurrentAuth, mayCall, presentedKey } from "../auth/Authentication.js"
import { IdempotencyRepo, type IdempotencyScope, type StoredResponse } from "./IdempotencyRepo.js"
import { type Endpoint, endpointAt } from "./Endpoints.js"
import * as SealedAnswer from "./SealedAnswer.js"

export { type IdempotencyScope, retentionMillis, type StoredResponse } from "./IdempotencyRepo.js"

/** The media type of a stored event stream: its body is the `StreamRef` as JSON, not events. */
export const eventStreamType = "text/event-stream"

/** The reply an event stream streams (its `Conversation-Id` and `Message-Id` response headers). */
export const StreamRef = Schema.Struct({ conversation_id: Schema.String, message_id: Schema.String })
export type StreamRef = typeof StreamRef.Type

/** What a replay is written from besides the record: the endpoint's `StreamFormat`, and the request's body (the first's). */
export interface ReplayRequest {
  readonly format: "messages" | "completions"
  readonly body: string
}

/** Serves a stored event stream again: the reply's events from the first, live while it is generated. */
export class ReplayableStreams extends Context.Tag("Http/ReplayableStreams")<
  ReplayableStreams,
  {
    readonly replay: (
      tenant: Tenant,
      ref: StreamRef,
      request: ReplayRequest
    ) => Effect.Effect<HttpServerResponse.HttpServerResponse, ApiFailure>
  }
>() {}

/**
 * Erasure of what stored answers say about a person (leads, tickets): each of the tenant's stored responses
 * that mentions `needle` rewritten with `scrub`, so a replay cannot bring erased data back.
 */
export class StoredResponses extends Effect.Service<StoredResponses>()("Http/StoredResponses", {
  effect: Effect.map(IdempotencyRepo, (repo) => ({ scrub: repo.scrub })),
  dependencies: [IdempotencyRepo.Default]
}) {}

const validIdempotencyKey = /^[\x21-\x7e]{1,255}$/

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

/** What a sealed answer is bound to: its record. */
const sealContext = (scope: IdempotencyScope) => `${scope.workspaceId}\n${scope.environment}\n${scope.key}`

/**
 * The `Idempotency` middleware, after the body policy (the fingerprint covers the body): `Idempotency-Key`
 * on a POST whose caller is known, by its key or, on a public form endpoint, by its `Service-Api-Key`. What
 * is kept is the answer as it goes out, a failure's envelope too, so it is taken from the response just
 * before it is sent (`HttpApp.appendPreResponseHandler`): a middleware runs before its handler and never
 * sees the answer. A stored answer is given again as the platform takes an early answer: the response as
 * the request's defect, which is no error.
 */
export const IdempotencyLive = Layer.effect(
  Idempotency,
  Effect.gen(function* () {
    const store = yield* IdempotencyRepo
    const replayable = yield* ReplayableStreams
    const authenticator = yield* Authenticator

    /**
     * Whose record the key names: the caller's workspace, or on a public form endpoint its `Service-Api-Key`'s.
     * A record is the workspace's, shared by its keys of one environment, so a key that may not call this
     * endpoint must not get another key's stored answer (a widget key replaying `POST /v1/keys`): it has none,
     * and is answered as if it sent no Idempotency-Key, which refuses it.
     */
    const ownerOf = (request: HttpServerRequest.HttpServerRequest, route: HttpRouter.Route<unknown, unknown>, endpoint: Endpoint | undefined) =>
      Effect.gen(function* () {
        const caller = Option.flatMap(yield* FiberRef.get(CurrentAuth), Either.getRight)
        if (Option.isSome(caller)) return Option.filter(caller, (c) => mayCall(c, route.method, route.path))
        const formsKey = request.headers["service-api-key"]
        if (formsKey === undefined || endpoint?.formParam === undefined) return Option.none()
        return Either.getRight(yield* authenticator.resolve(Headers.fromInput({ authorization: `Bearer ${formsKey}` })))
      })

    /** The answer a retry gets: the stored one, or the streamed reply it names followed from its first event. */
    const replay = (owner: Tenant, stored: StoredResponse, body: string, request: ReplayRequest) =>
      Effect.gen(function* () {
        if (stored.contentType !== eventStreamType) {
          return HttpServerResponse.text(body, {
            status: stored.status,
            contentType: stored.contentType,
            headers: { "idempotent-replayed": "true" }
          })
        }
        const ref = decodeStreamRef(body)
        if (Either.isLeft(ref)) return yield* Effect.die(ref.left)
        // a reply that cannot be followed again (its conversation erased) is answered as its failure
        const replayed = yield* Effect.orDie(replayable.replay(owner, ref.right, request))
        return HttpServerResponse.setHeader(replayed, "idempotent-replayed", "true")
      })

    /** Keeps the answer as it goes out; one that cannot be kept (a 5xx, a stream of no reply) frees the key. */
    const keep = (scope: IdempotencyScope, sealer: string | undefined) => (response: HttpServerResponse.HttpServerResponse) => {
      // kept as the reply it streams, once its headers are ready: a retry from then on follows that reply
      const ref = streamRefOf(response)
      if (ref !== undefined) {
        return store.complete(scope, { status: 200, contentType: eventStreamType, body: JSON.stringify(ref), sealed: false })
      }
      if (!storable(response)) return store.release(scope)
      const stored =
        response.body._tag === "Uint8Array"
          ? { contentType: response.body.contentType, body: new TextDecoder().decode(response.body.body) }
          : { contentType: "application/json", body: "" }
      return store.complete(
        scope,
        sealer === undefined
          ? { status: response.status, ...stored, sealed: false }
          : { status: response.status, ...stored, body: SealedAnswer.seal(stored.body, sealer, sealContext(scope)), sealed: true }
      )
    }

    /**
     * The request runs as the key's owner: its answer is kept as it goes out, and the key is freed when none
     * goes out (its client gone), through the request's scope.
     */
    const own = (scope: IdempotencyScope, sealer: string | undefined) =>
      Effect.gen(function* () {
        const answered = { done: false }
        yield* Scope.addFinalizer(yield* Effect.scope, Effect.suspend(() => (answered.done ? Effect.void : store.release(scope))))
        yield* HttpApp.appendPreResponseHandler((_, response) => {
          answered.done = true
          return Effect.as(keep(scope, sealer)(response), response)
        })
      })

    return Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const key = request.headers["idempotency-key"]
      if (request.method !== "POST" || key === undefined) return
      const { route } = yield* HttpRouter.RouteContext
      const endpoint = endpointAt(route)
      const owner = yield* ownerOf(request, route, endpoint)
      if (Option.isNone(owner)) return
      if (!validIdempotencyKey.test(key)) {
        return yield* new InvalidIdempotencyKey({
          message: "Idempotency-Key must be 1 to 255 printable ASCII characters",
          param: "Idempotency-Key"
        })
      }
      const requestBody = yield* Effect.orDie(request.text)
      const fingerprint = createHash("sha256").update(`${request.method} ${request.url}\n${requestBody}`).digest("hex")
      const scope = { workspaceId: owner.value.workspaceId, environment: owner.value.environment, key }
      // where the answer shows a secret, it is kept sealed under the calling key's own value; without one to seal
      // it under, none is kept
      const showsSecret = endpoint?.showsSecret === true
      const sealer = showsSecret ? Option.getOrUndefined(Option.flatMap(presentedKey(request.headers), Either.getRight)) : undefined
      if (showsSecret && sealer === undefined) return
      const claim = yield* store.claim(scope, fingerprint)
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
          const body = !stored.sealed
            ? Option.some(stored.body)
            : sealer === undefined
              ? Option.none()
              : SealedAnswer.open(stored.body, sealer, sealContext(scope))
          if (Option.isNone(body)) {
            return yield* new IdempotencyKeyMismatch({
              message: "This Idempotency-Key was used by another API key in the last 24 hours",
              param: "Idempotency-Key"
            })
          }
          const format = endpoint?.streamFormat ?? "messages"
          return yield* Effect.die(yield* replay(owner.value, stored, body.value, { format, body: requestBody }))
        }
        case "Owned":
          return yield* own(scope, sealer)
      }
    })
  })
)
