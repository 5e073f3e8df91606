/**
 * Where token buckets live: process memory (one instance) or Redis (shared by
 * every instance behind one `REDIS_URL`). Both are `@effect/experimental` stores.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { RedisOptions } from "ioredis"
import { isIP } from "node:net"

export const layerMemory: Layer.Layer<RateLimiter.RateLimiterStore> = RateLimiter.layerStoreMemory

/**
 * What ioredis is handed for a `REDIS_URL`. `rediss://` connects with TLS (certificate checked against the host
 * name; Node allows no IP address as a TLS server name, so a literal address is checked without one); `redis://`
 * is plain TCP.
 */
export const redisOptionsOf = (url: string): RedisOptions => {
  const { protocol, hostname, port, password, username, pathname } = new URL(url)
  const host = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname
  const tls = protocol.toLowerCase() === "rediss:"
  return {
    host,
    port: Number(port || 6379),
    ...(password ? { password: decodeURIComponent(password) } : {}),
    ...(username ? { username: decodeURIComponent(username) } : {}),
    db: Number(pathname.replace("/", "") || "0"),
    ...(tls ? { tls: isIP(host) === 0 ? { servername: host } : {} } : {})
  }
}

export const layerRedis = (url: string): Layer.Layer<RateLimiter.RateLimiterStore> =>
  // ioredis is loaded only by a service given a REDIS_URL
  Layer.unwrapEffect(
    Effect.map(Effect.promise(() => import("@effect/experimental/RateLimiter/Redis")), (RateLimiterRedis) =>
      RateLimiterRedis.layerStore({ ...redisOptionsOf(url), prefix: "ap:ratelimit:" })
    )
  )
