/**
 * The JobQueue store in process memory (`layerMemory`), for tests of programs:
 * the behaviour of `Postgres.ts` (one suite for both), no database, nothing
 * durable. It carries no writes: the worker writes and settles them itself.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type Job, JobQueue, type Primitives } from "../JobQueue.js"
import { fromPrimitives } from "./Worker.js"

const nowMillis = Clock.currentTimeMillis

interface MemoryJob {
  readonly id: number
  readonly queue: string
  readonly key: string | null
  readonly group: string | null
  readonly payload: string
  status: "pending" | "failed"
  runAt: number
  lockedUntil: number | null
  claims: number
  hurried: boolean
  attempts: number
  lastError: string | null
  readonly createdAt: number
}

const makeMemory = Effect.gen(function* () {
  const jobs = new Map<number, MemoryJob>()
  let sequence = 0

  const leasedAt = (j: MemoryJob, at: number) => j.lockedUntil !== null && j.lockedUntil > at

  /** `byKey` less the jobs whose group has no room: per group, its earliest up to the cap less those leased now. */
  const withinGroups = (pending: Array<MemoryJob>, byKey: Array<MemoryJob>, at: number, perGroup: number | undefined) => {
    if (perGroup === undefined) return byKey
    const busy = new Map<string, number>()
    for (const j of pending) if (j.group !== null && leasedAt(j, at)) busy.set(j.group, (busy.get(j.group) ?? 0) + 1)
    const taken = new Map<string, number>()
    return [...byKey]
      .sort((a, b) => a.runAt - b.runAt || a.id - b.id)
      .filter((j) => {
        if (j.group === null) return true
        const rank = (taken.get(j.group) ?? 0) + 1
        taken.set(j.group, rank)
        return rank <= perGroup - (busy.get(j.group) ?? 0)
      })
  }

  const claimableAt = (queue: string, at: number, perKey: number | undefined, perGroup: number | undefined) => {
    const pending = [...jobs.values()].filter((j) => j.queue === queue && j.status === "pending")
    return withinGroups(pending, claimableByKey(pending, at, perKey), at, perGroup)
  }

  const claimableByKey = (pending: Array<MemoryJob>, at: number, perKey: number | undefined): Array<MemoryJob> => {
    const free = (j: MemoryJob) => j.runAt <= at && (j.lockedUntil === null || j.lockedUntil <= at)
    if (perKey === undefined) {
      return pending.filter(
        (j) => free(j) && (j.key === null || !pending.some((e) => e.key === j.key && e.id < j.id))
      )
    }
    const busy = new Map<string, number>()
    for (const j of pending) {
      if (j.key !== null && leasedAt(j, at)) busy.set(j.key, (busy.get(j.key) ?? 0) + 1)
    }
    const taken = new Map<string, number>()
    return pending
      .filter(free)
      .sort((a, b) => a.runAt - b.runAt || a.id - b.id)
      .filter((j) => {
        if (j.key === null) return true
        const rank = (taken.get(j.key) ?? 0) + 1
        taken.set(j.key, rank)
        return rank <= perKey - (busy.get(j.key) ?? 0)
      })
  }

  const toPublic = (j: MemoryJob): Job => ({
    id: String(j.id),
    queue: j.queue,
    key: j.key,
    group: j.group,
    payload: JSON.parse(j.payload),
    attempts: j.attempts,
    claim: j.claims,
    createdAt: new Date(j.createdAt)
  })

  const held = (job: Job) => {
    const j = jobs.get(Number(job.id))
    return j !== undefined && j.claims === job.claim && j.status === "pending" ? j : undefined
  }

  const primitives: Primitives = {
    enqueue: (input) =>
      Effect.map(nowMillis, (at) => {
        const id = ++sequence
        jobs.set(id, {
          id,
          queue: input.queue,
          key: input.key ?? null,
          group: input.group ?? null,
          payload: JSON.stringify(input.payload ?? null),
          status: "pending",
          runAt: input.runAt?.getTime() ?? at,
          lockedUntil: null,
          claims: 0,
          hurried: false,
          attempts: 0,
          lastError: null,
          createdAt: at
        })
        return String(id)
      }),
    enqueueAll: (inputs) => Effect.forEach(inputs, (input) => primitives.enqueue(input)),
    claim: (options) =>
      Effect.map(nowMillis, (at) =>
        claimableAt(options.queue, at, options.perKey, options.perGroup)
          .sort((a, b) => a.runAt - b.runAt || a.id - b.id)
          .slice(0, options.limit)
          .map((j) => {
            j.lockedUntil = at + options.leaseMillis
            j.claims++
            // the claim counts the attempt it begins; the job is told those before it
            const before = toPublic(j)
            j.attempts++
            return before
          })
          .sort((a, b) => Number(a.id) - Number(b.id))
      ),
    extend: (job, leaseMillis) =>
      Effect.map(nowMillis, (at) => {
        const j = held(job)
        if (j === undefined || j.lockedUntil === null) return false
        j.lockedUntil = at + leaseMillis
        return true
      }),
    settle: (job, outcome, options) =>
      Effect.map(nowMillis, (at) => {
        const j = held(job)
        if (j === undefined) return
        if (outcome._tag === "Done" || outcome._tag === "Finish") {
          jobs.delete(j.id)
          return
        }
        if (options?.uncounted === true) j.attempts = Math.max(j.attempts - 1, 0)
        j.lockedUntil = null
        j.lastError = outcome.reason
        if (outcome._tag === "Retry") j.runAt = j.hurried ? Math.min(outcome.at.getTime(), at) : outcome.at.getTime()
        else j.status = "failed"
        j.hurried = false
      }),
    carries: false,
    release: (job) =>
      Effect.sync(() => {
        const j = held(job)
        if (j === undefined) return
        j.lockedUntil = null
        j.attempts = Math.max(j.attempts - 1, 0)
      }),
    // nothing to roll back: the worker settles after its owner's record, and not when that failed
    transaction: (self) => self,
    hurry: (queue, key) =>
      Effect.map(nowMillis, (at) => {
        let n = 0
        for (const j of jobs.values()) {
          if (j.queue !== queue || j.key !== key || j.status !== "pending") continue
          const leased = j.lockedUntil !== null && j.lockedUntil > at
          if (j.runAt <= at && !leased) continue
          j.runAt = Math.min(j.runAt, at)
          j.hurried = leased
          n++
        }
        return n
      }),
    nextDueAt: (queue) =>
      Effect.sync(() => {
        const times = [...jobs.values()]
          .filter((j) => j.queue === queue && j.status === "pending")
          .map((j) => Math.max(j.runAt, j.lockedUntil ?? j.runAt))
        return times.length === 0 ? Option.none() : Option.some(Math.min(...times))
      }),
    claimable: (options) => Effect.map(nowMillis, (at) => claimableAt(options.queue, at, options.perKey, options.perGroup).length)
  }
  return yield* fromPrimitives(primitives)
})

/** In process memory: the same behaviour, no database, nothing durable. */
export const layerMemory: Layer.Layer<JobQueue> = Layer.effect(JobQueue, makeMemory)
