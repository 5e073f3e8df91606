import * as RateLimiter from "@effect/experimental/RateLimiter"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { randomBytes } from "node:crypto"
import * as RateLimitStore from "../../layers/RateLimitStore.js"
import { Harness, testServer } from "../support/harness.js"

layer(testServer({ rateLimit: { rps: 2, burst: 5 } }))("rate limits", (it) => {
  it.effect("a key's bucket empties into 429 rate_limited with Retry-After, and refills by the Clock", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const remaining: Array<string | null> = []
      for (let i = 0; i < 5; i++) {
        const r = yield* h.call("GET", "/v1/agents", { key: ws.secretTest })
        expect(r.status).toBe(200)
        expect(r.headers.get("x-ratelimit-limit")).toBe("5")
        remaining.push(r.headers.get("x-ratelimit-remaining"))
      }
      expect(remaining).toEqual(["4", "3", "2", "1", "0"])
      const limited = yield* h.call("GET", "/v1/agents", { key: ws.secretTest })
      expect(limited.status).toBe(429)
      expect(limited.body.error).toMatchObject({ type: "rate_limit_error", code: "rate_limited" })
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      expect(limited.headers.get("x-ratelimit-remaining")).toBe("0")
      expect(Number(limited.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Math.floor(Date.parse("2026-11-02T10:00:00Z") / 1000) - 1)

      // another key has its own bucket
      expect((yield* h.call("GET", "/v1/agents", { key: ws.secretLive })).status).toBe(200)

      // two requests per second come back
      yield* TestClock.adjust("1 second")
      expect((yield* h.call("GET", "/v1/agents", { key: ws.secretTest })).status).toBe(200)
      expect((yield* h.call("GET", "/v1/agents", { key: ws.secretTest })).status).toBe(200)
      expect((yield* h.call("GET", "/v1/agents", { key: ws.secretTest })).status).toBe(429)
    })
  )

  it.effect("probes are never limited", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      for (let i = 0; i < 8; i++) expect((yield* h.call("GET", "/healthz")).status).toBe(200)
    })
  )
})

// The Redis store shares buckets between instances; it runs where Redis is available.
const redisUrl = process.env.REDIS_URL
describe.skipIf(redisUrl === undefined)("rate limits in Redis", () => {
  it.live("two limiters on one Redis share a bucket", () =>
    Effect.gen(function* () {
      const key = `test-${randomBytes(6).toString("hex")}`
      const consume = Effect.flatMap(RateLimiter.RateLimiter, (l) =>
        l.consume({ algorithm: "token-bucket", onExceeded: "fail", window: "10 seconds", limit: 3, key })
      )
      const instance = () => RateLimiter.layer.pipe(Layer.provide(RateLimitStore.layerRedis(redisUrl!)))
      yield* Effect.provide(consume, instance())
      yield* Effect.provide(consume, instance())
      yield* Effect.provide(consume, instance())
      const fourth = yield* Effect.provide(Effect.flip(consume), instance())
      expect(fourth.reason).toBe("Exceeded")
    })
  )
})
