/**
 * What the Redis rate-limit store hands ioredis for a `REDIS_URL`: `rediss://` carries TLS (checked against the
 * host name), `redis://` does not. A TLS Redis cannot run here, so the options are what is tested; the plain one
 * is also used against the Redis at `REDIS_URL` where there is one.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomBytes } from "node:crypto"
import * as RateLimitStore from "../../layers/RateLimitStore.js"

describe("ioredis options from REDIS_URL", () => {
  it("rediss:// connects with TLS, the server name being the host", () => {
    expect(RateLimitStore.redisOptionsOf("rediss://app:p%40ss@cache.example.com:6380/2")).toEqual({
      host: "cache.example.com",
      port: 6380,
      username: "app",
      password: "p@ss",
      db: 2,
      tls: { servername: "cache.example.com" }
    })
    // the scheme is case-insensitive; the default port stays 6379
    expect(RateLimitStore.redisOptionsOf("REDISS://cache.example.com").tls).toEqual({ servername: "cache.example.com" })
    expect(RateLimitStore.redisOptionsOf("REDISS://cache.example.com").port).toBe(6379)
  })

  it("rediss:// to an IP address is TLS without a server name (Node refuses an address as one)", () => {
    expect(RateLimitStore.redisOptionsOf("rediss://10.1.2.3:6380").tls).toEqual({})
    const v6 = RateLimitStore.redisOptionsOf("rediss://[fd00::5]:6380")
    expect([v6.host, v6.tls]).toEqual(["fd00::5", {}])
  })

  it("redis:// is plain TCP", () => {
    const plain = RateLimitStore.redisOptionsOf("redis://:secret@127.0.0.1:6379/1")
    expect(plain).toEqual({ host: "127.0.0.1", port: 6379, password: "secret", db: 1 })
    expect("tls" in plain).toBe(false)
  })
})

const redisUrl = process.env.REDIS_URL
describe.skipIf(redisUrl === undefined || !redisUrl.startsWith("redis://"))("a plain redis:// store", () => {
  it.live("counts with the options built from the URL", () =>
    Effect.gen(function* () {
      const key = `test-${randomBytes(6).toString("hex")}`
      const consume = Effect.flatMap(RateLimiter.RateLimiter, (l) =>
        l.consume({ algorithm: "fixed-window", onExceeded: "fail", window: "10 seconds", limit: 1, key })
      )
      const store = RateLimiter.layer.pipe(Layer.provide(RateLimitStore.layerRedis(redisUrl!)))
      const [first, second] = yield* Effect.provide(Effect.all([consume, Effect.flip(consume)]), store)
      expect(first.remaining).toBe(0)
      expect(second.reason).toBe("Exceeded")
    })
  )
})
