/**
 * Per-key token buckets: `RATE_LIMIT_BURST` tokens, refilled at `RATE_LIMIT_RPS`.
 * The store is memory or Redis (layers/RateLimitStore.ts). If Redis is down the
 * request passes: an outage of the limiter must not become an outage of the API.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { RateLimited } from "../../schema/Errors.js"
import { AppConfig } from "../Config.js"
import { withHeaders } from "../Performance.js"
import { type Answer, decorated, type EdgeRequest } from "./EdgeRequest.js"

export interface RateLimitState {
  readonly limit: number
  readonly remaining: number
  readonly resetAfterMillis: number
}

export interface RateLimitDecision {
  readonly state: RateLimitState
  readonly rejected?: RateLimited
}

export class RequestRateLimiter extends Effect.Service<RequestRateLimiter>()("Http/RequestRateLimiter", {
  effect: Effect.gen(function* () {
    // The store (memory or Redis) keeps the buckets and does the arithmetic; `RateLimiter.consume` around it
    // only turns the count into a result and a failure, which cost every request several more fiber steps.
    const store = yield* RateLimiter.RateLimiterStore
    const { rateLimit } = yield* AppConfig
    const limit = rateLimit.burst
    const refillMillis = 1000 / rateLimit.rps
    const refillRate = Duration.millis(refillMillis)

    const decide = (remaining: number): RateLimitDecision => {
      if (remaining >= 0) {
        return { state: { limit, remaining, resetAfterMillis: refillMillis * (limit - remaining) } }
      }
      const waitMillis = refillMillis * -remaining
      return {
        state: { limit, remaining: 0, resetAfterMillis: waitMillis },
        rejected: new RateLimited({
          message: "Too many requests; slow down and retry after the time in `Retry-After`.",
          retry_after_seconds: Math.max(1, Math.ceil(waitMillis / 1000))
        })
      }
    }
    const storeDown = (error: unknown) =>
      Effect.logWarning("rate limit store unavailable; request allowed", error).pipe(
        Effect.as<RateLimitDecision>({ state: { limit, remaining: limit, resetAfterMillis: 0 } })
      )

    /** Takes one token for `key`. `rejected` is set when the bucket was empty (no token is taken then). */
    const take = (key: string): Effect.Effect<RateLimitDecision> =>
      Effect.matchEffect(store.tokenBucket({ key, tokens: 1, limit, refillRate, allowOverflow: false }), {
        onFailure: storeDown,
        onSuccess: (remaining) => Effect.succeed(decide(remaining))
      })
    return { take } as const
  })
}) {}

/** `X-RateLimit-*`: the bucket's size, what is left of it, and when it is full again (Unix seconds). */
const withRateLimit = (response: HttpServerResponse.HttpServerResponse, state: RateLimitState, nowMillis: number) =>
  withHeaders(response, {
    "x-ratelimit-limit": String(state.limit),
    "x-ratelimit-remaining": String(state.remaining),
    "x-ratelimit-reset": String(Math.ceil((nowMillis + state.resetAfterMillis) / 1000))
  })

/**
 * The edge's rate-limit step: a token per request, from the caller's key (the client's address without a
 * valid one), and the bucket's state on every answer, a refusal too. Operational routes take none, nor does a
 * preflight: it changes nothing and its answer is cached; refused, the page could not even send the request it
 * asks about, nor read why.
 */
export const makeRateLimit = Effect.gen(function* () {
  const limiter = yield* RequestRateLimiter
  return (incoming: EdgeRequest, next: Answer): Answer => {
    const { caller, clock, request } = incoming
    if (incoming.operational || request.method === "OPTIONS") return next
    const key = Option.isSome(caller)
      ? `key:${caller.value.keyId}`
      : `ip:${Option.getOrElse(request.remoteAddress, () => "unknown")}`
    return Effect.flatMap(limiter.take(key), ({ rejected, state }) =>
      decorated(rejected === undefined ? next : Effect.fail(rejected), (response) =>
        withRateLimit(response, state, Number(clock.unsafeCurrentTimeNanos() / 1_000_000n))
      )
    )
  }
})
