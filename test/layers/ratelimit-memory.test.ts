/**
 * The memory rate-limit store holds only buckets that say something: many callers come once, time passes on the
 * Clock, and the store shrinks back; a hard cap bounds it meanwhile. The limits themselves answer as before.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { makeMemoryStore } from "../../layers/RateLimitStore.js"

/** `RateLimiter` over a fresh memory store, and the store's size. */
const limiterWith = (options: Parameters<typeof makeMemoryStore>[0] = {}) => {
  const memory = makeMemoryStore(options)
  const layer = RateLimiter.layer.pipe(Layer.provide(Layer.succeed(RateLimiter.RateLimiterStore, memory.store)))
  return { size: memory.size, run: <A, E>(effect: Effect.Effect<A, E, RateLimiter.RateLimiter>) => Effect.provide(effect, layer), store: memory.store }
}

const bucket = (key: string) => ({ key, tokens: 1, limit: 5, refillRate: Duration.millis(500), allowOverflow: false })

describe("the memory rate-limit store", () => {
  it.effect("10,000 token buckets used once are all forgotten once they have refilled", () =>
    Effect.gen(function* () {
      const { store, size } = limiterWith()
      for (let i = 0; i < 10_000; i++) expect(yield* store.tokenBucket(bucket(`ip:10.0.${i >> 8}.${i & 255}`))).toBe(4)
      expect(size()).toBe(10_000)
      // one token back after 500 ms: not yet full, nothing may go
      yield* TestClock.adjust("11 seconds")
      expect(yield* store.tokenBucket(bucket("ip:192.0.2.1"))).toBe(4)
      expect(size()).toBe(1)
    }))

  it.effect("a bucket still refilling is kept, and answers exactly as before the sweep", () =>
    Effect.gen(function* () {
      const { store, size } = limiterWith({ sweepEveryMillis: 1_000 })
      const slow = { key: "key:slow", tokens: 1, limit: 3, refillRate: Duration.seconds(10), allowOverflow: false }
      for (const expected of [2, 1, 0, -1]) expect(yield* store.tokenBucket(slow)).toBe(expected)
      yield* store.tokenBucket(bucket("key:fast"))
      yield* TestClock.adjust("10 seconds")
      // the sweep (due) drops the refilled fast bucket, keeps the slow one with its one token back
      expect(yield* store.tokenBucket(slow)).toBe(0)
      expect(size()).toBe(1)
      expect(yield* store.tokenBucket(slow)).toBe(-1)
      yield* TestClock.adjust("30 seconds")
      expect(yield* store.tokenBucket(bucket("key:other"))).toBe(4)
      expect(size()).toBe(1) // the slow bucket, full again, went too
      expect(yield* store.tokenBucket(slow)).toBe(2)
    }))

  it.effect("fixed windows (the form submit limit) are forgotten when they end, and limit as before meanwhile", () =>
    Effect.gen(function* () {
      const { run, size } = limiterWith()
      const submit = (ip: string) =>
        Effect.flatMap(RateLimiter.RateLimiter, (limiter) =>
          limiter.consume({ algorithm: "fixed-window", onExceeded: "fail", window: "60 seconds", limit: 2, key: `form-submit:frm_1:${ip}` })
        )
      yield* run(
        Effect.gen(function* () {
          for (let i = 0; i < 500; i++) yield* submit(`203.0.113.${i % 250}:${i}`)
          expect(size()).toBe(500)
          yield* submit("198.51.100.7")
          yield* submit("198.51.100.7")
          const third = yield* Effect.flip(submit("198.51.100.7"))
          expect(third.reason).toBe("Exceeded")
          // the first window (two submissions of 30 s each) is still open after 59 s: still refused
          yield* TestClock.adjust("59 seconds")
          expect((yield* Effect.flip(submit("198.51.100.7"))).reason).toBe("Exceeded")
          expect(size()).toBe(1)
          yield* TestClock.adjust("2 seconds")
          yield* submit("198.51.100.7")
        })
      )
    }))

  it.effect("past the cap the oldest key goes first, and the store never holds more", () =>
    Effect.gen(function* () {
      const { store, size } = limiterWith({ maxKeys: 3 })
      for (const key of ["a", "b", "c"]) yield* store.tokenBucket(bucket(key))
      yield* store.tokenBucket(bucket("a")) // a is used again, but it came first
      yield* store.tokenBucket(bucket("d"))
      expect(size()).toBe(3)
      // b and c kept their spent tokens; a was dropped and starts full
      expect(yield* store.tokenBucket(bucket("b"))).toBe(3)
      expect(yield* store.tokenBucket(bucket("c"))).toBe(3)
      expect(yield* store.tokenBucket(bucket("a"))).toBe(4) // and b goes for it
      expect(size()).toBe(3)
      for (let i = 0; i < 1_000; i++) yield* store.tokenBucket(bucket(`flood-${i}`))
      expect(size()).toBe(3)
      expect(yield* store.tokenBucket(bucket("flood-999"))).toBe(3)
    }))
})
