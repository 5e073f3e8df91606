/**
 * A worker's slots (`layers/jobqueue/Slots.ts`) on their own, over the memory store (which carries no writes):
 * a slot is freed once, by the claim that wrote its job's item or by the job's end, never by both; once the
 * worker stops, what waits and what ends later is written alone.
 */
import * as Statement from "@effect/sql/Statement"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as JobQueue from "../../layers/JobQueue.js"
import { layerMemory } from "../../layers/jobqueue/Memory.js"
import { makeSlots } from "../../layers/jobqueue/Slots.js"

const queue = "slots-test"

/** A finish whose lone writes land in `written`. */
const finishInto = (written: Array<string>): JobQueue.FinishOptions<string, never> => ({
  write: () => Statement.unsafeFragment("0"),
  alone: (items) => Effect.sync(() => void written.push(...items))
})

/** Two jobs claimed from the memory store. */
const twoJobs = Effect.gen(function* () {
  const store = yield* JobQueue.JobQueue
  yield* store.enqueue({ queue, payload: 1 })
  yield* store.enqueue({ queue, payload: 2 })
  const jobs = yield* store.claim({ queue, limit: 2, leaseMillis: 60_000 })
  expect(jobs).toHaveLength(2)
  return { store, jobs }
})

describe("worker slots", () => {
  it.scoped("a slot freed by the claim that wrote its job's item is not freed again when the job ends", () =>
    Effect.gen(function* () {
      const { jobs, store } = yield* twoJobs
      const written: Array<string> = []
      const slots = yield* makeSlots(store, { queue, concurrency: 2, leaseMillis: 60_000, finish: finishInto(written) })
      slots.take()
      slots.take()
      expect(slots.forPass().free).toBe(0)

      // the first job ends well: its item waits, still holding its slot, until a pass takes it
      const carrying = yield* Effect.fork(slots.carry(jobs[0]!, "first"))
      yield* Effect.yieldNow()
      expect(slots.waiting()).toBe(true)
      const pass = slots.forPass()
      expect(pass.items.map((c) => c.item)).toEqual(["first"])
      expect(pass.free).toBe(1)

      // the pass writes it (alone: the memory store carries nothing) and counts its slot free
      yield* slots.writeAlone(pass.items)
      slots.freed(pass.items)
      expect(yield* Fiber.join(carrying)).toBe(true)
      expect(written).toEqual(["first"])
      expect(slots.release(jobs[0]!.id)).toBe(false)
      expect(slots.forPass().free).toBe(1)

      // the second job ends without an item: its end frees its slot
      expect(slots.release(jobs[1]!.id)).toBe(true)
      expect(slots.forPass().free).toBe(2)
    }).pipe(Effect.provide(layerMemory))
  )

  it.effect("once the worker stops, the items waiting are written, and a job ending later writes its own", () =>
    Effect.gen(function* () {
      const { jobs, store } = yield* twoJobs
      const written: Array<string> = []
      const scope = yield* Scope.make()
      const slots = yield* makeSlots(store, { queue, concurrency: 2, leaseMillis: 60_000, finish: finishInto(written) }).pipe(
        Scope.extend(scope)
      )
      slots.take()
      slots.take()
      const waiting = yield* Effect.fork(slots.carry(jobs[0]!, "waiting"))
      yield* Effect.yieldNow()

      yield* Scope.close(scope, Exit.void)
      expect(yield* Fiber.join(waiting)).toBe(true)
      expect(yield* slots.carry(jobs[1]!, "later")).toBe(true)
      expect(written).toEqual(["waiting", "later"])
      // both jobs were settled done by the lone writes: past their leases, nothing is left to claim
      yield* TestClock.adjust(61_000)
      expect(yield* store.claimable({ queue })).toBe(0)
    }).pipe(Effect.provide(layerMemory))
  )
})
