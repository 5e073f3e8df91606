/**
 * Where token buckets live: process memory (one instance) or Redis (shared by
 * every instance behind one `REDIS_URL`). Both are `@effect/experimental` stores.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export const layerMemory: Layer.Layer<RateLimiter.RateLimiterStore> = RateLimiter.layerStoreMemory

export const layerRedis = (url: string): Layer.Layer<RateLimiter.RateLimiterStore> => {
  const { hostname, port, password, username, pathname } = new URL(url)
  const db = Number(pathname.replace("/", "") || "0")
  // ioredis is loaded only by a service given a REDIS_URL
  return Layer.unwrapEffect(
    Effect.map(Effect.promise(() => import("@effect/experimental/RateLimiter/Redis")), (RateLimiterRedis) =>
      RateLimiterRedis.layerStore({
        host: hostname,
        port: Number(port || 6379),
        ...(password ? { password: decodeURIComponent(password) } : {}),
        ...(username ? { username: decodeURIComponent(username) } : {}),
        db,
        prefix: "ap:ratelimit:"
      })
    )
  )
}
