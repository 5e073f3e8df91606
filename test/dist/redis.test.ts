/**
 * The Redis rate-limit store through the bundle: a service started with
 * REDIS_URL (the store and ioredis are a lazy chunk, loaded only then) keeps
 * its token buckets in Redis, and an API key over its burst gets 429. Runs
 * where REDIS_URL is set (CI's PostgreSQL pass); skipped, saying so, elsewhere.
 */
import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  call,
  cleanupAll,
  bootstrapWorkspace,
  databaseName,
  redisUrl,
  type Service,
  setupTimeout,
  startService,
  type Workspace
} from "./support.js"

const burst = 3
let service: Service
let ws: Workspace

beforeAll(async () => {
  if (redisUrl === undefined) return
  service = await startService({ RATE_LIMIT_RPS: "1", RATE_LIMIT_BURST: String(burst) }, { redis: redisUrl })
  ws = await bootstrapWorkspace(service)
}, setupTimeout)

afterAll(async () => {
  await cleanupAll()
})

describe.skipIf(redisUrl === undefined)(
  `rate limits in Redis through the bundle (${databaseName}${redisUrl === undefined ? "; skipped: REDIS_URL is not set" : ""})`,
  () => {
    it("a key over its burst gets 429 rate_limited, and its bucket is in Redis", async () => {
      const replies = []
      for (let i = 0; i < burst + 2; i++) replies.push(await call(service, "GET", "/v1/agents", { key: ws.secret }))
      const statuses = replies.map((r) => r.status)
      expect(statuses.slice(0, burst)).toEqual(Array(burst).fill(200))
      const limited = replies.find((r) => r.status === 429)
      expect(limited, JSON.stringify(statuses)).toBeDefined()
      expect(limited!.body.error.code).toBe("rate_limited")
      expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      expect(replies[0]!.headers.get("x-ratelimit-limit")).toBe(String(burst))
      // not the memory store: the bucket is a key of the service's prefix in Redis
      const redis = new Redis(redisUrl!, { lazyConnect: true, maxRetriesPerRequest: 1 })
      try {
        await redis.connect()
        const keys = await redis.keys("ap:ratelimit:*")
        expect(keys.length).toBeGreaterThan(0)
      } finally {
        redis.disconnect()
      }
      expect(service.output()).not.toContain("rate limit store unavailable")
    })
  }
)
