/**
 * Where token buckets live: process memory (one instance) or Redis (shared by
 * every instance behind one `REDIS_URL`). Both are `@effect/experimental`
 * stores: Redis its own, memory ours (below), which forgets idle buckets.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { RedisOptions } from "ioredis"
import { isIP } from "node:net"

type StoreShape = RateLimiter.RateLimiterStore["Type"]

/** A token bucket: `tokens` left as of `refilledAt`, with the size and refill it was last used with. */
interface Bucket {
  tokens: number
  refilledAt: number
  limit: number
  refillMillis: number
}

/** A fixed window's count, back to zero at `expiresAt`. */
interface Window {
  count: number
  expiresAt: number
}

export interface MemoryStoreOptions {
  /**
   * Most keys held (of each algorithm). Past it the oldest key is dropped, which only hands that caller a fresh
   * bucket early: memory stays bounded even if a flood of addresses comes faster than buckets refill.
   */
  readonly maxKeys?: number
  /** How often (by the Clock) a call first drops every idle key. */
  readonly sweepEveryMillis?: number
}

/**
 * A memory store that holds only buckets that say something. A token bucket that has refilled completely, and a
 * fixed window past its end, answer exactly as no entry would (a fresh one starts full, or at zero), so they are
 * dropped: by a sweep at most every `sweepEveryMillis`, run by the call that finds it due, and oldest first past
 * `maxKeys`. Without it every key and client address ever seen stayed in memory for the life of the process.
 * (Oldest by first use, not least recently used: keeping a Map in LRU order costs a delete and a set on every
 * request, for a cap that only a flood reaches.)
 */
export const makeMemoryStore = (options: MemoryStoreOptions = {}) => {
  const maxKeys = options.maxKeys ?? 100_000
  const sweepEveryMillis = options.sweepEveryMillis ?? 10_000
  const buckets = new Map<string, Bucket>()
  const windows = new Map<string, Window>()
  let sweptAt = Number.NEGATIVE_INFINITY

  const refill = (bucket: Bucket, now: number) => {
    if (!(bucket.refillMillis > 0)) {
      bucket.tokens = bucket.limit
      bucket.refilledAt = now
      return
    }
    const earned = Math.floor((now - bucket.refilledAt) / bucket.refillMillis)
    if (earned > 0) {
      bucket.tokens = Math.min(bucket.limit, bucket.tokens + earned)
      bucket.refilledAt += earned * bucket.refillMillis
    }
  }
  const bucketIdle = (bucket: Bucket, now: number) => {
    refill(bucket, now)
    return bucket.tokens >= bucket.limit
  }

  const sweep = (now: number) => {
    if (now - sweptAt < sweepEveryMillis && now >= sweptAt) return
    sweptAt = now
    for (const [key, bucket] of buckets) if (bucketIdle(bucket, now)) buckets.delete(key)
    for (const [key, window] of windows) if (window.expiresAt <= now) windows.delete(key)
  }

  /**
   * Makes room for one more key: the oldest goes. A Map iterates in insertion order and its iterators survive
   * deletions, so one kept iterator walks the keys oldest first without rescanning the holes deletions leave.
   */
  const oldestFirst = new Map<Map<string, unknown>, Iterator<string>>()
  const admit = (entries: Map<string, unknown>) => {
    while (entries.size >= maxKeys) {
      let next = oldestFirst.get(entries)?.next()
      if (next === undefined || next.done === true) {
        const fresh = entries.keys()
        oldestFirst.set(entries, fresh)
        next = fresh.next()
      }
      if (next.done === true) return
      entries.delete(next.value)
    }
  }

  const tokenBucket: StoreShape["tokenBucket"] = (request) =>
    Clock.clockWith((clock) =>
      Effect.sync(() => {
        const now = clock.unsafeCurrentTimeMillis()
        sweep(now)
        const refillMillis = Duration.toMillis(request.refillRate)
        let bucket = buckets.get(request.key)
        if (bucket === undefined) {
          admit(buckets)
          bucket = { tokens: request.limit, refilledAt: now, limit: request.limit, refillMillis }
          buckets.set(request.key, bucket)
        } else {
          bucket.limit = request.limit
          bucket.refillMillis = refillMillis
          refill(bucket, now)
        }
        const left = bucket.tokens - request.tokens
        if (request.allowOverflow || left >= 0) bucket.tokens = left
        return left
      })
    )

  const fixedWindow: StoreShape["fixedWindow"] = (request) =>
    Clock.clockWith((clock) =>
      Effect.sync(() => {
        const now = clock.unsafeCurrentTimeMillis()
        sweep(now)
        let window = windows.get(request.key)
        if (window === undefined || window.expiresAt <= now) {
          if (window === undefined) admit(windows)
          window = { count: 0, expiresAt: now }
          windows.set(request.key, window)
        }
        // over the limit: the count is reported, nothing is taken and the window keeps its end
        if (request.limit !== undefined && window.count + request.tokens > request.limit) {
          return [window.count + request.tokens, window.expiresAt - now] as const
        }
        window.count += request.tokens
        window.expiresAt += Duration.toMillis(request.refillRate) * request.tokens
        return [window.count, window.expiresAt - now] as const
      })
    )

  return {
    store: RateLimiter.RateLimiterStore.of({ tokenBucket, fixedWindow }),
    /** Keys held now, both algorithms together (for tests and metrics). */
    size: () => buckets.size + windows.size
  }
}

export const layerMemory: Layer.Layer<RateLimiter.RateLimiterStore> = Layer.sync(
  RateLimiter.RateLimiterStore,
  () => makeMemoryStore().store
)

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
