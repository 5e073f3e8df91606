/**
 * Per-key token buckets: `RATE_LIMIT_BURST` tokens, refilled at `RATE_LIMIT_RPS`.
 * The store is memory or Redis (layers/RateLimitStore.ts). If Redis is down the
 * request passes: an outage of the limiter must not become an outage of the API.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { RateLimited } from "../../schema/Errors.js"
import { AppConfig } from "../Config.js"

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
    const limiter = yield* RateLimiter.RateLimiter
    const { rateLimit } = yield* AppConfig
    const window = Duration.millis((rateLimit.burst / rateLimit.rps) * 1000)

    /** Takes one token for `key`. `rejected` is set when the bucket was empty. */
    const take = (key: string): Effect.Effect<RateLimitDecision> =>
      limiter.consume({ algorithm: "token-bucket", onExceeded: "fail", window, limit: rateLimit.burst, key }).pipe(
        Effect.map(
          (r): RateLimitDecision => ({
            state: {
              limit: r.limit,
              remaining: Math.max(0, r.remaining),
              resetAfterMillis: Duration.toMillis(r.resetAfter)
            }
          })
        ),
        Effect.catchAll((error) => {
          if (error.reason === "StoreError") {
            return Effect.logWarning("rate limit store unavailable; request allowed", error).pipe(
              Effect.as<RateLimitDecision>({
                state: { limit: rateLimit.burst, remaining: rateLimit.burst, resetAfterMillis: 0 }
              })
            )
          }
          const waitMillis = Duration.toMillis(error.retryAfter)
          return Effect.succeed<RateLimitDecision>({
            state: { limit: rateLimit.burst, remaining: 0, resetAfterMillis: waitMillis },
            rejected: new RateLimited({
              message: "Too many requests; slow down and retry after the time in `Retry-After`.",
              retry_after_seconds: Math.max(1, Math.ceil(waitMillis / 1000))
            })
          })
        })
      )
    return { take } as const
  })
}) {}
