/**
 * A queue through its database's outages, on both stores (the `jobs` table on PGlite, or PostgreSQL when
 * DATABASE_URL is set, and the memory twin): a store over the real one whose claims, lease extensions or settles
 * fail on demand as a dropped connection does (a SqlError of SQLSTATE 57P01). The worker tries them again with
 * a backoff by the Clock (100 ms doubling, up to 5 s) that starts again after a success; the jobs running go on,
 * and every job ends once. Also `supervise`'s restart backoff, which starts again after a run that lasted.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as JobQueue from "../../layers/JobQueue.js"
import { layerMemory } from "../../layers/jobqueue/Memory.js"
import { layerPostgres } from "../../layers/jobqueue/Postgres.js"
import { statementRetryMillis } from "../../layers/jobqueue/Outage.js"
import { fromPrimitives } from "../../layers/jobqueue/Worker.js"
import { migrations } from "../../src/db/migrations/index.js"
import { runMigrations } from "../../src/db/Migrator.js"
import { testDatabaseLayer } from "../support/database.js"
import { eventually } from "../support/eventually.js"
import { supervise } from "../../layers/Supervise.js"

const epoch = Date.parse("2026-11-02T10:00:00Z")
const Clock0 = Layer.effectDiscard(TestClock.setTime(epoch))

const postgres = Layer.unwrapEffect(Effect.as(Effect.orDie(runMigrations(migrations)), layerPostgres)).pipe(
  Layer.provideMerge(Layer.orDie(testDatabaseLayer)),
  Layer.provide(Clock0)
)
const memory = layerMemory.pipe(Layer.provide(Clock0))

let queues = 0
const fresh = (name: string) => `${name}-${++queues}`

/** What the driver reports when the server ends the connection under a statement (`pg_terminate_backend`). */
const connectionLost = () =>
  Effect.die(
    new SqlError({
      cause: Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      message: "Failed to execute statement"
    })
  )

/** Once a fiber sleeps until `at` (Clock millis), the clock goes there: a wait of exactly that length was taken. */
const toSleepAt = (at: number) =>
  Effect.zipRight(
    eventually(TestClock.sleeps(), (sleeps) => Chunk.some(sleeps, (t) => t === at), { label: `a sleep until +${at - epoch}` }),
    TestClock.setTime(at)
  )

/** `self` with the lines it logs (and its fibers log) kept in `lines` as "LEVEL message". */
const keepingLogs = <A, E, R>(lines: Array<string>, self: Effect.Effect<A, E, R>) =>
  Effect.provide(
    self,
    Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ logLevel, message }) => {
        lines.push(`${logLevel.label} ${(Array.isArray(message) ? message : [message]).map(String).join(" ")}`)
      })
    )
  )

/** Jobs that wait for `gate`; how often each handler ended, and handlers interrupted. */
const gatedJobs = Effect.gen(function* () {
  const gate = yield* Deferred.make<void>()
  const started: Array<string> = []
  const ended = new Map<string, number>()
  let interrupted = 0
  const handle = (job: JobQueue.Job) =>
    Effect.gen(function* () {
      started.push(job.id)
      yield* Deferred.await(gate)
      ended.set(job.id, (ended.get(job.id) ?? 0) + 1)
      return JobQueue.Outcome.done
    }).pipe(Effect.onInterrupt(() => Effect.sync(() => void interrupted++)))
  return { gate, started, ended, interrupted: () => interrupted, handle }
})

const suite = (name: string, implementation: Layer.Layer<JobQueue.JobQueue>) =>
  layer(implementation, { timeout: 60_000 })(name, (it) => {
    it.effect("a claim that fails is tried again after 100, 200, 400, 800 ms while the running jobs go on, logged once; a success starts the backoff again", () => {
      const logs: Array<string> = []
      return keepingLogs(logs, Effect.gen(function* () {
        const store = yield* JobQueue.JobQueue
        const queue = fresh("claims-fail")
        let failing = 0
        const claimsAt: Array<number> = []
        const jobs = yield* fromPrimitives({
          ...store,
          claim: (options) =>
            Effect.flatMap(Clock.currentTimeMillis, (at) => {
              claimsAt.push(at)
              return failing-- > 0 ? connectionLost() : store.claim(options)
            })
        })
        const { ended, gate, handle, interrupted, started } = yield* gatedJobs
        const worker = yield* Effect.fork(jobs.worker({ queue, concurrency: 4, leaseMillis: 30_000, pollMillis: 3_600_000, handle }))
        const a = yield* jobs.enqueue({ queue, payload: { n: 1 } })
        const b = yield* jobs.enqueue({ queue, payload: { n: 2 } })
        yield* eventually(Effect.sync(() => started.length), (n) => n === 2)

        // the database goes away: the claim for a third job fails four times
        failing = 4
        const t0 = yield* Clock.currentTimeMillis
        const from = claimsAt.length
        const c = yield* jobs.enqueue({ queue, payload: { n: 3 } })
        for (const at of [100, 300, 700, 1_500]) yield* toSleepAt(t0 + at)
        yield* eventually(Effect.sync(() => started.length), (n) => n === 3)
        expect(claimsAt.slice(from, from + 5)).toEqual([0, 100, 300, 700, 1_500].map((d) => t0 + d))
        // one line when it began, one when it ended: not one a retry
        expect(logs.filter((line) => line.includes(`claims of queue ${queue}`))).toEqual([
          `WARN claims of queue ${queue} failing (57P01 terminating connection due to administrator command); retrying with backoff, the jobs running here go on`,
          `INFO claims of queue ${queue} succeed again after 4 failed tries over 1500 ms`
        ])
        // the jobs that ran meanwhile were not touched
        expect(interrupted()).toBe(0)
        expect(ended.size).toBe(0)

        // it went well: the next outage's first retry is 100 ms after its failure again, not 1.6 s
        failing = 1
        const t1 = yield* Clock.currentTimeMillis
        const d = yield* jobs.enqueue({ queue, payload: { n: 4 } })
        yield* toSleepAt(t1 + 100)
        yield* eventually(Effect.sync(() => started.length), (n) => n === 4)

        yield* Deferred.succeed(gate, undefined)
        yield* jobs.awaitIdle(queue)
        expect(interrupted()).toBe(0)
        expect([...ended.entries()].sort()).toEqual([a, b, c, d].map((id) => [id, 1]).sort())
        expect(Option.isNone(yield* jobs.nextDueAt(queue))).toBe(true)
        yield* Fiber.interrupt(worker)
      }))
    })

    it.effect("a claim that fails for another reason is logged at error level once, then once a minute while it lasts, and tried again the same way", () => {
      const logs: Array<string> = []
      return keepingLogs(logs, Effect.gen(function* () {
        const store = yield* JobQueue.JobQueue
        const queue = fresh("claims-bug")
        let failing = 0
        const jobs = yield* fromPrimitives({
          ...store,
          claim: (options) => (failing-- > 0 ? Effect.dieMessage("claim bug") : store.claim(options))
        })
        const { gate, handle, interrupted, started } = yield* gatedJobs
        const worker = yield* Effect.fork(jobs.worker({ queue, concurrency: 2, leaseMillis: 600_000, pollMillis: 3_600_000, handle }))
        yield* jobs.enqueue({ queue, payload: { n: 1 } })
        yield* eventually(Effect.sync(() => started.length), (n) => n === 1)
        // 20 failures: 100 ms, 200 ms, ..., 3.2 s, then 5 s apart, for about 76 s
        failing = 20
        const t0 = yield* Clock.currentTimeMillis
        yield* jobs.enqueue({ queue, payload: { n: 2 } })
        let at = t0
        for (let failure = 1; failure <= 20; failure++) {
          at += statementRetryMillis(failure)
          yield* toSleepAt(at)
        }
        yield* eventually(Effect.sync(() => started.length), (n) => n === 2)
        const lines = logs.filter((line) => line.includes(`claims of queue ${queue}`))
        expect(lines.map((line) => line.split(" (")[0])).toEqual([
          `ERROR claims of queue ${queue} failing`,
          `WARN claims of queue ${queue} still failing`,
          `INFO claims of queue ${queue} succeed again after 20 failed tries over ${at - t0} ms`
        ])
        expect(lines[0]).toContain("(died: RuntimeException: claim bug)")
        expect(interrupted()).toBe(0)
        yield* Deferred.succeed(gate, undefined)
        yield* jobs.awaitIdle(queue)
        yield* Fiber.interrupt(worker)
      }))
    })

    it.effect("a lease extension that fails is tried again with backoff, never later than the next beat; its job keeps running and its lease", () =>
      Effect.gen(function* () {
        const store = yield* JobQueue.JobQueue
        const queue = fresh("leases-fail")
        let failing = 0
        const extendsAt: Array<number> = []
        const jobs = yield* fromPrimitives({
          ...store,
          extend: (job, leaseMillis) =>
            Effect.flatMap(Clock.currentTimeMillis, (at) => {
              extendsAt.push(at)
              return failing-- > 0 ? connectionLost() : store.extend(job, leaseMillis)
            })
        })
        const { ended, gate, handle, interrupted, started } = yield* gatedJobs
        const worker = yield* Effect.fork(jobs.worker({ queue, concurrency: 2, leaseMillis: 30_000, pollMillis: 3_600_000, handle }))
        const t0 = yield* Clock.currentTimeMillis
        const id = yield* jobs.enqueue({ queue, payload: { n: 1 } })
        yield* eventually(Effect.sync(() => started.length), (n) => n === 1)

        // beats every 10 s; the first one's extension fails three times
        failing = 3
        for (const at of [10_000, 10_100, 10_300, 10_700]) yield* toSleepAt(t0 + at)
        // extended at last: the next beat is a beat later, and the retry after a failure then is 100 ms again
        yield* toSleepAt(t0 + 20_700)
        failing = 1
        yield* toSleepAt(t0 + 30_700)
        yield* toSleepAt(t0 + 30_800)
        yield* eventually(Effect.sync(() => extendsAt.length), (n) => n === 7)
        expect(extendsAt).toEqual([10_000, 10_100, 10_300, 10_700, 20_700, 30_700, 30_800].map((d) => t0 + d))
        // held all along: past its first lease's end, no other claim could take it
        expect(yield* store.claimable({ queue })).toBe(0)
        expect(interrupted()).toBe(0)

        yield* Deferred.succeed(gate, undefined)
        yield* jobs.awaitIdle(queue)
        expect([...ended.entries()]).toEqual([[id, 1]])
        yield* Fiber.interrupt(worker)
      }))

    it.effect("a settle that fails is tried again until the database answers: the job is recorded once, not run again after its lease", () =>
      Effect.gen(function* () {
        const store = yield* JobQueue.JobQueue
        const queue = fresh("settles-fail")
        let failing = 3
        const settlesAt: Array<number> = []
        const jobs = yield* fromPrimitives({
          ...store,
          settle: (job, outcome, options) =>
            Effect.flatMap(Clock.currentTimeMillis, (at) => {
              settlesAt.push(at)
              return failing-- > 0 ? connectionLost() : store.settle(job, outcome, options)
            })
        })
        const runs: Array<string> = []
        const worker = yield* Effect.fork(
          jobs.worker({
            queue,
            concurrency: 2,
            leaseMillis: 30_000,
            pollMillis: 3_600_000,
            handle: (job) => Effect.sync(() => (runs.push(job.id), JobQueue.Outcome.done))
          })
        )
        const t0 = yield* Clock.currentTimeMillis
        const id = yield* jobs.enqueue({ queue, payload: { n: 1 } })
        for (const at of [100, 300, 700]) yield* toSleepAt(t0 + at)
        yield* eventually(Effect.sync(() => settlesAt.length), (n) => n === 4)
        expect(settlesAt).toEqual([0, 100, 300, 700].map((d) => t0 + d))
        yield* jobs.awaitIdle(queue)
        // long past its lease: nothing left to claim, and it ran once
        yield* TestClock.adjust("1 hour")
        yield* jobs.awaitIdle(queue)
        expect(runs).toEqual([id])
        expect(Option.isNone(yield* jobs.nextDueAt(queue))).toBe(true)
        yield* Fiber.interrupt(worker)
      }))

    it.effect("a claim whose answer was lost after it committed leaves what it took to the lease: each job runs once, a lease later", () =>
      Effect.gen(function* () {
        const store = yield* JobQueue.JobQueue
        const queue = fresh("claim-answer-lost")
        let losing = 0
        const jobs = yield* fromPrimitives({
          ...store,
          claim: (options) =>
            Effect.flatMap(store.claim(options), (claimed) =>
              claimed.length > 0 && losing-- > 0 ? connectionLost() : Effect.succeed(claimed)
            )
        })
        const runs: Array<[string, number]> = []
        const worker = yield* Effect.fork(
          jobs.worker({
            queue,
            concurrency: 2,
            leaseMillis: 30_000,
            pollMillis: 3_600_000,
            handle: (job) => Effect.sync(() => (runs.push([job.id, job.attempts]), JobQueue.Outcome.done))
          })
        )
        losing = 1
        const t0 = yield* Clock.currentTimeMillis
        const id = yield* jobs.enqueue({ queue, payload: { n: 1 } })
        // tried again 100 ms later: the job is leased by the claim whose answer was lost, so nothing yet
        yield* toSleepAt(t0 + 100)
        yield* toSleepAt(t0 + 30_000)
        yield* eventually(Effect.sync(() => runs.length), (n) => n === 1)
        yield* jobs.awaitIdle(queue)
        // the lost claim counted an attempt
        expect(runs).toEqual([[id, 1]])
        expect(Option.isNone(yield* jobs.nextDueAt(queue))).toBe(true)
        yield* Fiber.interrupt(worker)
      }))

    it.effect("a claim that loses its connection while carrying ended jobs' writes carries them again: written once, each job run once", () =>
      Effect.gen(function* () {
        const store = yield* JobQueue.JobQueue
        // only a store that carries writes in its claim (SQL)
        const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
        if (Option.isNone(sql) || !store.carries) return
        yield* Effect.orDie(sql.value`create table if not exists outage_items (queue text, n integer)`)
        yield* Effect.orDie(sql.value`
          create or replace function outage_items_add(p_queue text, p_ns integer[]) returns integer language sql
          as $$ insert into outage_items select p_queue, unnest(p_ns); select cardinality(p_ns) $$`)
        const queue = fresh("carried-lost")
        let failing = 0
        const carriedAt: Array<number> = []
        const jobs = yield* fromPrimitives({
          ...store,
          claim: (options) =>
            Effect.flatMap(Clock.currentTimeMillis, (at) => {
              if (options.carried === undefined) return store.claim(options)
              carriedAt.push(at)
              return failing-- > 0 ? connectionLost() : store.claim(options)
            })
        })
        const runs: Array<number> = []
        const worker = yield* Effect.fork(
          jobs.worker({
            queue,
            concurrency: 2,
            leaseMillis: 30_000,
            pollMillis: 3_600_000,
            finish: {
              write: (ns: ReadonlyArray<number>) => sql.value`outage_items_add(${queue}, ${ns}::integer[])`,
              alone: () => Effect.void
            },
            handle: (job) => Effect.sync(() => JobQueue.Outcome.finish((runs.push((job.payload as { n: number }).n), (job.payload as { n: number }).n)))
          })
        )
        failing = 2
        const t0 = yield* Clock.currentTimeMillis
        yield* jobs.enqueue({ queue, payload: { n: 7 } })
        for (const at of [100, 300]) yield* toSleepAt(t0 + at)
        yield* eventually(Effect.sync(() => carriedAt.length), (n) => n === 3)
        yield* jobs.awaitIdle(queue)
        expect(carriedAt).toEqual([0, 100, 300].map((d) => t0 + d))
        yield* TestClock.adjust("1 hour")
        yield* jobs.awaitIdle(queue)
        expect(runs).toEqual([7])
        const rows = yield* Effect.orDie(sql.value`select n from outage_items where queue = ${queue}`)
        expect(rows.map((row) => row["n"])).toEqual([7])
        expect(Option.isNone(yield* jobs.nextDueAt(queue))).toBe(true)
        yield* Fiber.interrupt(worker)
      }))
  })

describe("JobQueue through database outages", () => {
  suite("postgres", postgres)
  suite("memory", memory)
})

describe("supervise", () => {
  it.effect("restarts after 1 s, 2 s, 4 s, ...; after a run that lasted a minute, 1 s again", () =>
    Effect.gen(function* () {
      const t0 = yield* Clock.currentTimeMillis
      const startedAt: Array<number> = []
      const work = Effect.gen(function* () {
        startedAt.push((yield* Clock.currentTimeMillis) - t0)
        // the fourth run works for a minute before it fails
        if (startedAt.length === 4) yield* Effect.sleep("61 seconds")
        return yield* Effect.dieMessage("boom")
      })
      const fiber = yield* Effect.fork(supervise("test", work))
      for (const at of [1_000, 3_000, 7_000, 68_000, 69_000, 71_000]) yield* toSleepAt(t0 + at)
      yield* eventually(Effect.sync(() => startedAt.length), (n) => n === 6)
      expect(startedAt).toEqual([0, 1_000, 3_000, 7_000, 69_000, 71_000])
      yield* Fiber.interrupt(fiber)
    }))
})
