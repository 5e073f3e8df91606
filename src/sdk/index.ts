/**
 * The SDK for integrators: a typed client generated from the same `Api` the
 * server implements, so requests, responses and errors are checked at compile
 * time. Failures arrive as the catalog's tagged errors (`ResourceMissing`, ...).
 *
 *   const client = yield* makeClient({ baseUrl: "http://127.0.0.1:3000", apiKey: "sk_test_..." })
 *   const { data } = yield* client.agents.create({ payload: { type: "support", name: "Help" } })
 *
 * An `Idempotency-Key` belongs to one call (the server answers another request with the same key
 * `422 idempotency_key_mismatch`), so it is given per call, not per client:
 *
 *   client.tickets.create({ payload }).pipe(Effect.retry(policy), withIdempotencyKey(key))
 */
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { dual } from "effect/Function"
import { globalValue } from "effect/GlobalValue"
import * as Option from "effect/Option"
import { Api } from "../../schema/Api.js"

export { Api } from "../../schema/Api.js"
export * as Errors from "../../schema/Errors.js"

export interface ClientOptions {
  readonly baseUrl: string
  readonly apiKey: string
  /**
   * `"auto"`: every POST that has no key of its own (`withIdempotencyKey`) is sent with a fresh random
   * `Idempotency-Key` (a UUID), one per request. Default `"none"`: only the calls given a key send one.
   * An `Effect.retry` of a call makes new requests, hence new automatic keys: to have the server deduplicate
   * retries, give the call its key with `withIdempotencyKey` (or `idempotent`) outside the retry.
   */
  readonly idempotencyKeys?: "auto" | "none" | undefined
  /**
   * @deprecated A key belongs to one call: use `withIdempotencyKey` (or `idempotent`) on the call. Kept so code
   * written for it compiles: the key is sent with this client's first POST only (the one call it was meant for);
   * later POSTs follow `idempotencyKeys`, rather than all reusing it and failing with `422 idempotency_key_mismatch`.
   */
  readonly idempotencyKey?: string | undefined
}

/** The `Idempotency-Key` the POSTs of the current fiber send (set by `withIdempotencyKey`). */
const currentIdempotencyKey = globalValue("@service/sdk/currentIdempotencyKey", () =>
  FiberRef.unsafeMake<Option.Option<string>>(Option.none())
)

/**
 * Runs `self` (one call of the client) with `key` as its `Idempotency-Key`: sent on its POST, and on each request
 * an `Effect.retry` inside makes again, so the server runs it once and replays its response to the repeats.
 * Wrap one call: another POST under the same key is `422 idempotency_key_mismatch`.
 */
export const withIdempotencyKey: {
  (key: string): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, key: string): Effect.Effect<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, key: string): Effect.Effect<A, E, R> =>
    Effect.locally(self, currentIdempotencyKey, Option.some(key))
)

/** Runs `self` (one call) under a fresh random `Idempotency-Key`, kept for the retries inside it. */
export const idempotent = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => withIdempotencyKey(self, globalThis.crypto.randomUUID()))

export const makeClient = (options: ClientOptions) =>
  Effect.suspend(() => {
    // the deprecated client-wide key: the client's first POST only
    let legacyKey = options.idempotencyKey
    const keyFor = (request: HttpClientRequest.HttpClientRequest) =>
      Effect.map(FiberRef.get(currentIdempotencyKey), (own): string | undefined => {
        if (request.method !== "POST") return undefined
        if (Option.isSome(own)) return own.value
        if (legacyKey !== undefined) {
          const key = legacyKey
          legacyKey = undefined
          return key
        }
        return options.idempotencyKeys === "auto" ? globalThis.crypto.randomUUID() : undefined
      })
    return HttpApiClient.make(Api, {
      baseUrl: options.baseUrl,
      transformClient: HttpClient.mapRequestEffect((request) => {
        const authed = HttpClientRequest.bearerToken(request, options.apiKey)
        return Effect.map(keyFor(request), (key) =>
          key === undefined ? authed : HttpClientRequest.setHeader(authed, "idempotency-key", key)
        )
      })
    })
  })

export type Client = Effect.Effect.Success<ReturnType<typeof makeClient>>
export { verifyWebhook, WebhookVerificationError, type VerifyOptions } from "./webhooks.js"
export { ReplyRequestError, streamReply, type StreamEvent, type StreamReplyOptions } from "./replies.js"
export { type IdentityClaims, MAX_IDENTITY_TOKEN_LIFETIME_SECONDS, type SignIdentityOptions, signIdentityToken } from "./identity.js"
