/**
 * The SDK for integrators: a typed client generated from the same `Api` the
 * server implements, so requests, responses and errors are checked at compile
 * time. Failures arrive as the catalog's tagged errors (`ResourceMissing`, ...).
 *
 *   const client = yield* makeClient({ baseUrl: "http://127.0.0.1:3000", apiKey: "sk_test_..." })
 *   const { data } = yield* client.agents.create({ payload: { type: "support", name: "Help" } })
 */
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"

export { Api } from "../../schema/Api.js"
export * as Errors from "../../schema/Errors.js"

export interface ClientOptions {
  readonly baseUrl: string
  readonly apiKey: string
  /** Sent as `Idempotency-Key` on every POST of this client, when set. */
  readonly idempotencyKey?: string
}

export const makeClient = (options: ClientOptions) =>
  HttpApiClient.make(Api, {
    baseUrl: options.baseUrl,
    transformClient: HttpClient.mapRequest((request) => {
      const authed = HttpClientRequest.bearerToken(request, options.apiKey)
      return options.idempotencyKey !== undefined && request.method === "POST"
        ? HttpClientRequest.setHeader(authed, "idempotency-key", options.idempotencyKey)
        : authed
    })
  })

export type Client = Effect.Effect.Success<ReturnType<typeof makeClient>>
export { verifyWebhook, WebhookVerificationError, type VerifyOptions } from "./webhooks.js"
export { ReplyRequestError, streamReply, type StreamEvent, type StreamReplyOptions } from "./replies.js"
export { type IdentityClaims, type SignIdentityOptions, signIdentityToken } from "./identity.js"
