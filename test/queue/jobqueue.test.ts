/**
 * One behaviour suite for both JobQueue implementations: the `jobs` table (on
 * PGlite, or PostgreSQL when DATABASE_URL is set) and the memory twin. Time is
 * the TestClock; each test uses its own queue name.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as JobQueue from "../../layers/JobQueue.js"
import { layerMemory } from "../../layers/jobqueue/Memory.js"
import { layerPostgres } from "../../layers/jobqueue/Postgres.js"
import { fromPrimitives } from "../../layers/jobqueue/Worker.js"
import { migrations } from "../../src/db/migrations/index.js"
import { runMigrations } from "../../src/db/Migrator.js"
import { testDatabaseLayer } from "../support/database.js"
import { eventually } from "../support/eventually.js"

const epoch = Date.parse("2026-11-02T10:00:00Z")

/** A second, independent instance over the same store (another process), and whether enqueue joins transactions. */
class Other extends Context.Tag("Test/OtherQueue")<
  Other,
  {
    readonly queue: JobQueue.JobQueueShape
    readonly withTransaction: Option.Option<<A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, unknown, R>>
  }
>() {}

const Clock0 = Layer.effectDiscard(TestClock.setTime(epoch))

const postgres = Layer.unwrapScoped(
  Effect.gen(function* () {
    yield* Effect.orDie(runMigrations(migrations))
    const sql = yield* SqlClient.SqlClient
    const other = yield* Layer.build(layerPostgres).pipe(
      Effect.map((context) => Context.get(context, JobQueue.JobQueue))
    )
    return Layer.merge(
      layerPostgres,
      Layer.succeed(Other, { queue: other, withTransaction: Option.some(sql.withTransaction) })
    )
  })
).pipe(Layer.provideMerge(Layer.orDie(testDatabaseLayer)), Layer.provide(Clock0))

const memory = Layer.unwrapEffect(
  Effect.map(JobQueue.JobQueue, (queue) => Layer.succeed(Other, { queue, withTransaction: Option.none() }))
).pipe(Layer.provideMerge(layerMemory), Layer.provide(Clock0))

let queues = 0
const fresh = (name: string) => `${name}-${++queues}`

/** Where the store speaks SQL: a table the carried writes of the `finish` tests write to, and their write. */
const finishedItems = Effect.gen(function* () {
  const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
  if (Option.isNone(sql)) return
  yield* Effect.orDie(sql.value`create table if not exists finished_items (queue text, n integer)`)
  yield* Effect.orDie(sql.value`
    create or replace function finished_items_add(p_queue text, p_ns integer[]) returns integer language sql
    as $$ insert into finished_items select p_queue, unnest(p_ns); select cardinality(p_ns) $$`)
})

/**
 * Where the store speaks SQL: a claim call (`WorkerOptions.claimCall`) that claims as `jobs_claim_after` does and
 * returns beside each job but the one with `n` 2 its `n` tenfold.
 */
const tenfoldClaim = Effect.gen(function* () {
  const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
  if (Option.isNone(sql)) return
  yield* Effect.orDie(sql.value`
    create or replace function tenfold_claim(
      p_ended bigint[], p_ended_claims integer[],
      p_queue text, p_at timestamptz, p_until timestamptz, p_per_key integer, p_per_group integer, p_limit integer,
      p_async boolean
    )
    returns table (
      id bigint, queue text, key text, group_key text, payload text, attempts integer, claims integer,
      created_at timestamptz, alongside json
    )
    language sql volatile
    as $$
      select c.id, c.queue, c.key, c.group_key, c.payload, c.attempts, c.claims, c.created_at,
        case when c.payload::jsonb ->> 'n' <> '2'
          then json_build_object('job_id', c.id, 'tenfold', (c.payload::jsonb ->> 'n')::integer * 10) end
      from jobs_claim_after(0, p_ended, p_ended_claims, p_queue, p_at, p_until, p_per_key, p_per_group, p_limit,
        p_async) c
    $$`)
})

/** The memory store never asks for a carried write's SQL. */
const carriesNothing = (): never => {
  throw new Error("the memory store carries no write")
}

const startWorker = <R, P = undefined, F = never>(options: JobQueue.WorkerOptions<R, P, F>, on?: JobQueue.JobQueueShape) =>
  Effect.flatMap(JobQueue.JobQueue, (queue) => Effect.fork((on ?? queue).worker({ pollMillis: 3_600_000, ...options })))

const suite = (name: string, implementation: Layer.Layer<JobQueue.JobQueue | Other>) =>
  layer(implementation, { timeout: 60_000 })(name, (it) => {
    it.effect("runs an enqueued job once and forgets it when done", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const queue = fresh("once")
        const seen: Array<unknown> = []
        const worker = yield* startWorker({
          queue,
          concurrency: 2,
          handle: (job) => Effect.sync(() => (seen.push(job.payload), JobQueue.Outcome.done))
        })
        yield* jobs.enqueue({ queue, payload: { sourceId: "src_1" } })
        yield* jobs.awaitIdle(queue)
        expect(seen).toEqual([{ sourceId: "src_1" }])
        expect(Option.isNone(yield* jobs.nextDueAt(queue))).toBe(true)
        yield* Fiber.interrupt(worker)
      }))

    it.effect("jobs of one key run one at a time in creation order, across two workers of two instances", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const other = (yield* Other).queue
        const queue = fresh("serial")
        const running = new Map<string, number>()
        const order = new Map<string, Array<number>>()
        let overlap = 0
        const handle = (job: JobQueue.Job) =>
          Effect.gen(function* () {
            const key = job.key!
            running.set(key, (running.get(key) ?? 0) + 1)
            if (running.get(key)! > 1) overlap++
            for (let i = 0; i < 5; i++) yield* Effect.yieldNow()
            order.set(key, [...(order.get(key) ?? []), (job.payload as { n: number }).n])
            running.set(key, running.get(key)! - 1)
            return JobQueue.Outcome.done
          })
        const a = yield* startWorker({ queue, concurrency: 4, handle })
        const b = yield* startWorker({ queue, concurrency: 4, handle }, other)
        for (let n = 0; n < 12; n++) {
          yield* jobs.enqueue({ queue, key: n % 3 === 0 ? "agt_b" : "agt_a", payload: { n } })
        }
        yield* eventually(
          Effect.sync(() => [...order.values()].reduce((sum, xs) => sum + xs.length, 0)),
          (done) => done === 12
        )
        yield* jobs.awaitIdle(queue)
        expect(overlap).toBe(0)
        expect(order.get("agt_b")).toEqual([0, 3, 6, 9])
        expect(order.get("agt_a")).toEqual([1, 2, 4, 5, 7, 8, 10, 11])
        yield* Fiber.interrupt(a)
        yield* Fiber.interrupt(b)
      }))

    it.effect("jobs enqueued together get ids in their order, run in it per key, and one due later waits for its instant", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const queue = fresh("together")
        const order: Array<number> = []
        const worker = yield* startWorker({
          queue,
          concurrency: 2,
          handle: (job) => Effect.sync(() => (order.push((job.payload as { n: number }).n), JobQueue.Outcome.done))
        })
        const later = new Date((yield* Clock.currentTimeMillis) + 60_000)
        const ids = yield* jobs.enqueueAll([
          ...[0, 1, 2, 3].map((n) => ({ queue, key: "agt_a", payload: { n } })),
          { queue, key: "agt_b", payload: { n: 4 }, runAt: later }
        ])
        expect(ids).toHaveLength(5)
        expect([...ids].sort((a, b) => Number(a) - Number(b))).toEqual(ids)
        yield* jobs.awaitIdle(queue)
        expect(order).toEqual([0, 1, 2, 3])
        yield* TestClock.adjust("60 seconds")
        yield* jobs.awaitIdle(queue)
        expect(order).toEqual([0, 1, 2, 3, 4])
        expect(yield* jobs.enqueueAll([])).toEqual([])
        yield* Fiber.interrupt(worker)
      }))

    it.effect("a per-key cap keeps at most that many of a key in flight", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const queue = fresh("capped")
        const gate = yield* Deferred.make<void>()
        let running = 0
        let most = 0
        let finished = 0
        const worker = yield* startWorker({
          queue,
          concurrency: 10,
          perKey: 3,
          handle: () =>
            Effect.gen(function* () {
              running++
              most = Math.max(most, running)
              yield* Deferred.await(gate)
              running--
              finished++
              return JobQueue.Outcome.done
            })
        })
        for (let n = 0; n < 7; n++) yield* jobs.enqueue({ queue, key: "sub_1", payload: { n } })
        yield* jobs.enqueue({ queue, key: "sub_2", payload: { n: 7 } })
        yield* eventually(Effect.sync(() => running), (n) => n === 4)
        expect(most).toBe(4) // 3 of sub_1, 1 of sub_2
        yield* Deferred.succeed(gate, undefined)
        yield* eventually(Effect.sync(() => finished), (n) => n === 8)
        yield* jobs.awaitIdle(queue)
        expect(most).toBeLessThanOrEqual(4)
        yield* Fiber.interrupt(worker)
      }))

    it.effect("a per-group cap keeps a group with many claimable jobs at most that many in flight, across instances, while another group's job is claimed", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const other = (yield* Other).queue
        const queue = fresh("groups")
        // each running job waits for its own gate
        const gates = new Map<string, Deferred.Deferred<void>>()
        const running = new Map<string, number>()
        const started: Array<{ group: string | null; n: number }> = []
        let most = 0
        let finished = 0
        const handle = (job: JobQueue.Job) =>
          Effect.gen(function* () {
            const group = job.group ?? "none"
            const gate = yield* Deferred.make<void>()
            gates.set(job.id, gate)
            started.push({ group: job.group, n: (job.payload as { n: number }).n })
            running.set(group, (running.get(group) ?? 0) + 1)
            if (group === "wsp_busy") most = Math.max(most, running.get(group)!)
            yield* Deferred.await(gate)
            running.set(group, running.get(group)! - 1)
            finished++
            return JobQueue.Outcome.done
          })
        const caps = { perKey: 8, perGroup: 2 }
        const a = yield* startWorker({ queue, concurrency: 4, ...caps, handle })
        const b = yield* startWorker({ queue, concurrency: 4, ...caps, handle }, other)
        // the busy workspace: two keys of five jobs each, all due before the quiet workspace's one
        for (let n = 0; n < 10; n++) {
          yield* jobs.enqueue({ queue, key: n % 2 === 0 ? "whs_busy_1" : "whs_busy_2", group: "wsp_busy", payload: { n } })
        }
        yield* jobs.enqueue({ queue, key: "whs_quiet", group: "wsp_quiet", payload: { n: 10 } })
        yield* eventually(Effect.sync(() => started.length), (n) => n === 3)
        expect(started.filter((s) => s.group === "wsp_quiet").map((s) => s.n)).toEqual([10])
        expect(running.get("wsp_busy")).toBe(2)
        // eight of the busy workspace wait with five slots free: none may be claimed, by either instance
        expect(yield* jobs.claimable({ queue, ...caps })).toBe(0)
        expect(yield* jobs.claimable({ queue, perKey: 8 })).toBe(8)
        yield* jobs.wake(queue)
        yield* other.wake(queue)
        yield* jobs.enqueue({ queue, key: "whs_quiet", group: "wsp_quiet", payload: { n: 11 } })
        yield* eventually(Effect.sync(() => started.length), (n) => n === 4)
        expect(started[3]!.n).toBe(11)

        // a settled job frees its group's slot: the next of that group is claimed in its place
        const first = started.findIndex((s) => s.group === "wsp_busy")
        const firstId = [...gates.keys()][first]!
        yield* Deferred.succeed(gates.get(firstId)!, undefined)
        yield* eventually(Effect.sync(() => started.filter((s) => s.group === "wsp_busy").length), (n) => n === 3)
        expect(running.get("wsp_busy")).toBe(2)

        // let everything run: the busy workspace never had more than two at once
        const openAll = Effect.suspend(() => Effect.forEach([...gates.values()], (gate) => Deferred.succeed(gate, undefined)))
        yield* eventually(Effect.zipRight(openAll, Effect.sync(() => finished)), (n) => n === 12)
        yield* jobs.awaitIdle(queue)
        expect(most).toBe(2)
        expect(started.filter((s) => s.group === "wsp_busy").map((s) => s.n).sort((x, y) => x - y)).toEqual(
          [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        )
        yield* Fiber.interrupt(a)
        yield* Fiber.interrupt(b)
      }))

    it.effect("a per-group cap leaves jobs without a group uncapped, and holds for a group's jobs without a key", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const queue = fresh("ungrouped")
        const gate = yield* Deferred.make<void>()
        const running = new Map<string, number>()
        let finished = 0
        const worker = yield* startWorker({
          queue,
          concurrency: 10,
          perGroup: 1,
          handle: (job) =>
            Effect.gen(function* () {
              const group = job.group ?? "none"
              running.set(group, (running.get(group) ?? 0) + 1)
              yield* Deferred.await(gate)
              finished++
              return JobQueue.Outcome.done
            })
        })
        for (let n = 0; n < 3; n++) yield* jobs.enqueue({ queue, group: "wsp_a", payload: { n } })
        for (let n = 3; n < 6; n++) yield* jobs.enqueue({ queue, payload: { n } })
        for (let n = 6; n < 8; n++) yield* jobs.enqueue({ queue, group: "wsp_b", payload: { n } })
        yield* eventually(Effect.sync(() => [...running.values()].reduce((x, y) => x + y, 0)), (n) => n === 5)
        expect(Object.fromEntries(running)).toEqual({ wsp_a: 1, none: 3, wsp_b: 1 })
        expect(yield* jobs.claimable({ queue, perGroup: 1 })).toBe(0)
        yield* Deferred.succeed(gate, undefined)
        yield* eventually(Effect.sync(() => finished), (n) => n === 8)
        yield* jobs.awaitIdle(queue)
        expect(Object.fromEntries(running)).toEqual({ wsp_a: 3, none: 3, wsp_b: 2 })
        yield* Fiber.interrupt(worker)
      }))

    it.effect("a retry waits for its instant by the Clock, and holds later jobs of its key behind it", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const queue = fresh("retry")
        const attempts: Array<string> = []
        const worker = yield* startWorker({
          queue,
          concurrency: 4,
          handle: (job) =>
            Effect.gen(function* () {
              attempts.push(`${(job.payload as { n: number }).n}@${job.attempts}`)
              if (job.attempts === 0 && (job.payload as { n: number }).n === 1) {
                const at = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
                return JobQueue.Outcome.retryAt(new Date(at + 5 * 60_000), "receiver down")
              }
              return JobQueue.Outcome.done
            })
        })
        yield* jobs.enqueue({ queue, key: "agt_1", payload: { n: 1 } })
        yield* jobs.enqueue({ queue, key: "agt_1", payload: { n: 2 } })
        yield* jobs.awaitIdle(queue)
        expect(attempts).toEqual(["1@0"])
        yield* TestClock.adjust("4 minutes")
        yield* jobs.awaitIdle(queue)
        expect(attempts).toEqual(["1@0"])
        yield* TestClock.adjust("1 minute")
        yield* jobs.awaitIdle(queue)
        expect(attempts).toEqual(["1@0", "1@1", "2@0"])
        yield* Fiber.interrupt(worker)
      }))

    it.effect("hurry makes a key's waiting jobs due now, also one that settles a retry while being hurried", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const queue = fresh("hurry")
        const gate = yield* Deferred.make<void>()
        const runs: Array<number> = []
        const worker = yield* startWorker({
          queue,
          concurrency: 2,
          handle: (job) =>
            Effect.gen(function* () {
              runs.push(job.attempts)
              if (job.attempts === 1) yield* Deferred.await(gate)
              if (job.attempts >= 2) return JobQueue.Outcome.done
              const at = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
              return JobQueue.Outcome.retryAt(new Date(at + 24 * 3_600_000), "owner away")
            })
        })
        yield* jobs.enqueue({ queue, key: "sub_1", payload: null })
        yield* jobs.awaitIdle(queue)
        expect(runs).toEqual([0])
        expect(yield* jobs.hurry(queue, "sub_1")).toBe(1)
        // the second run waits on the gate; hurried meanwhile, its day-long retry runs at once
        yield* eventually(Effect.sync(() => runs.length), (n) => n === 2)
        expect(yield* jobs.hurry(queue, "sub_1")).toBe(1)
        yield* Deferred.succeed(gate, undefined)
        yield* eventually(Effect.sync(() => runs.length), (n) => n === 3)
        yield* jobs.awaitIdle(queue)
        expect(runs).toEqual([0, 1, 2])
        expect(yield* jobs.hurry(queue, "sub_1")).toBe(0)
        yield* Fiber.interrupt(worker)
      }))

    it.effect("a handler that fails is retried with backoff; a failed outcome is never run again", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const queue = fresh("failing")
        const calls: Array<number> = []
        const worker = yield* startWorker({
          queue,
          concurrency: 1,
          handle: (job) =>
            Effect.suspend(() => {
              calls.push(job.attempts)
              return job.attempts === 0 ? Effect.fail("boom") : Effect.succeed(JobQueue.Outcome.failed("gave up"))
            })
        })
        yield* jobs.enqueue({ queue, payload: null })
        yield* jobs.awaitIdle(queue)
        expect(calls).toEqual([0])
        yield* TestClock.adjust("4 seconds")
        yield* jobs.awaitIdle(queue)
        expect(calls).toEqual([0])
        yield* TestClock.adjust("1 second")
        yield* jobs.awaitIdle(queue)
        expect(calls).toEqual([0, 1])
        yield* TestClock.adjust("1 day")
        yield* jobs.awaitIdle(queue)
        expect(calls).toEqual([0, 1])
        expect(Option.isNone(yield* jobs.nextDueAt(queue))).toBe(true)
        yield* Fiber.interrupt(worker)
      }))

    it.effect("a handler that dies is retried with backoff up to maxAttempts, then given up, and its key's next job runs", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const queue = fresh("dying")
        const start = yield* Clock.currentTimeMillis
        const runs: Array<string> = []
        const retries: Array<[string, number]> = []
        const givenUp: Array<[string, string, boolean]> = []
        const worker = yield* startWorker({
          queue,
          concurrency: 2,
          maxAttempts: 3,
          handle: (job) =>
            Effect.suspend(() => {
              const n = (job.payload as { n: number }).n
              runs.push(`${n}@${job.attempts}`)
              // a bug of the handler itself: not a typed failure
              return n === 1 ? Effect.die(new TypeError("pipeline.step is not a function")) : Effect.succeed(JobQueue.Outcome.done)
            }),
          onRetry: (_job, reason, at) => Effect.sync(() => void retries.push([reason, at.getTime() - start])),
          // before the job is settled: the next job of its key has not run yet
          onGiveUp: (job, reason) => Effect.sync(() => void givenUp.push([job.id, reason, runs.includes("2@0")]))
        })
        const first = yield* jobs.enqueue({ queue, key: "agt_1", payload: { n: 1 } })
        yield* jobs.enqueue({ queue, key: "agt_1", payload: { n: 2 } })
        yield* jobs.awaitIdle(queue)
        const reason = "died: TypeError: pipeline.step is not a function"
        expect(runs).toEqual(["1@0"])
        expect(retries).toEqual([[reason, 5_000]])
        yield* TestClock.adjust("5 seconds")
        yield* jobs.awaitIdle(queue)
        expect(runs).toEqual(["1@0", "1@1"])
        expect(retries).toEqual([[reason, 5_000], [reason, 5_000 + 15_000]])
        expect(givenUp).toEqual([])
        yield* TestClock.adjust("15 seconds")
        yield* jobs.awaitIdle(queue)
        expect(runs).toEqual(["1@0", "1@1", "1@2", "2@0"])
        expect(givenUp).toEqual([[first, reason, false]])
        expect(retries).toHaveLength(2)
        expect(Option.isNone(yield* jobs.nextDueAt(queue))).toBe(true)
        // where the store speaks SQL: the job is failed, its attempts counted, its short cause kept
        const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
        if (Option.isSome(sql)) {
          const rows = yield* Effect.orDie(sql.value<{ status: string; attempts: number; last_error: string }>`
            select status, attempts, last_error from jobs where id = ${first}`)
          expect(rows).toEqual([{ status: "failed", attempts: 3, last_error: reason }])
        }
        // /metrics: three failed attempts and one failed job of this queue
        const pairs = yield* Metric.snapshot
        const count = (name: string) =>
          pairs
            .filter((p) => p.metricKey.name === name && p.metricKey.tags.some((t) => t.key === "queue" && t.value === queue))
            .map((p) => (p.metricState as unknown as { count: number }).count)
        expect(count("jobs_attempts_failed_total")).toEqual([3])
        expect(count("jobs_failed_total")).toEqual([1])
        yield* Fiber.interrupt(worker)
      }))

    it.effect("a failure onGiveUp could not record runs its last attempt again after the backoff; a typed failure counts the same", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const queue = fresh("unrecorded")
        const runs: Array<number> = []
        let recordings = 0
        const recorded: Array<string> = []
        const worker = yield* startWorker({
          queue,
          concurrency: 1,
          maxAttempts: 1,
          handle: (job) => Effect.suspend(() => (runs.push(job.attempts), Effect.fail({ _tag: "Unreachable", message: "mail server away" }))),
          onGiveUp: (_job, reason) =>
            recordings++ === 0 ? Effect.die("database away") : Effect.sync(() => void recorded.push(reason))
        })
        yield* jobs.enqueue({ queue, key: "k", payload: null })
        yield* jobs.awaitIdle(queue)
        expect(runs).toEqual([0])
        expect(recorded).toEqual([])
        yield* TestClock.adjust("5 seconds")
        yield* jobs.awaitIdle(queue)
        // the claim whose give-up was not recorded is not counted: the same last attempt again
        expect(runs).toEqual([0, 0])
        expect(recorded).toEqual(["Unreachable: mail server away"])
        yield* TestClock.adjust("1 day")
        yield* jobs.awaitIdle(queue)
        expect(runs).toEqual([0, 0])
        expect(Option.isNone(yield* jobs.nextDueAt(queue))).toBe(true)
        yield* Fiber.interrupt(worker)
      }))

    it.effect("a job whose attempts stop their worker is given up by the claim after the last, unrun, and its key's next job runs", () =>
      Effect.gen(function* () {
        const store = yield* JobQueue.JobQueue
        const queue = fresh("poison")
        const maxAttempts = 3
        const runs: Array<number> = []
        const next: Array<number> = []
        const givenUp: Array<[string, string, JobQueue.GiveUpHow]> = []
        const poison = yield* store.enqueue({ queue, key: "agt_1", payload: { n: 1 } })
        yield* store.enqueue({ queue, key: "agt_1", payload: { n: 2 } })
        // each round a process of its own, whose worker takes the job; killed, it neither settles nor hands it back
        for (let round = 0; round <= maxAttempts; round++) {
          const process = yield* fromPrimitives({ ...store, release: () => Effect.void })
          const started = yield* Deferred.make<void>()
          const worker = yield* Effect.fork(process.worker({
            queue,
            concurrency: 1,
            leaseMillis: 30_000,
            pollMillis: 3_600_000,
            maxAttempts,
            handle: (job) =>
              (job.payload as { n: number }).n === 1
                ? Effect.zipRight(Effect.sync(() => runs.push(job.attempts)), Effect.zipRight(Deferred.succeed(started, undefined), Effect.never))
                : Effect.sync(() => (next.push(job.attempts), JobQueue.Outcome.done)),
            onGiveUp: (job, reason, how) => Effect.sync(() => void givenUp.push([job.id, reason, how]))
          }))
          if (round < maxAttempts) {
            yield* Deferred.await(started)
            yield* Fiber.interrupt(worker)
            expect(yield* store.claimable({ queue })).toBe(0)
            yield* TestClock.adjust("30 seconds")
            continue
          }
          yield* process.awaitIdle(queue)
          yield* Fiber.interrupt(worker)
        }
        expect(runs).toEqual([0, 1, 2])
        expect(givenUp).toEqual([[poison, JobQueue.stoppedReason, "stopped"]])
        expect(next).toEqual([0])
        yield* TestClock.adjust("1 day")
        expect(yield* store.claimable({ queue })).toBe(0)
        expect(Option.isNone(yield* store.nextDueAt(queue))).toBe(true)
        // where the store speaks SQL: failed, with the attempts it had and the reason a person reads
        const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
        if (Option.isSome(sql)) {
          const rows = yield* Effect.orDie(sql.value<{ status: string; attempts: number; last_error: string }>`
            select status, attempts, last_error from jobs where id = ${poison}`)
          expect(rows).toEqual([{ status: "failed", attempts: maxAttempts, last_error: JobQueue.stoppedReason }])
        }
        const pairs = yield* Metric.snapshot
        const failed = pairs
          .filter((p) => p.metricKey.name === "jobs_failed_total" && p.metricKey.tags.some((t) => t.key === "queue" && t.value === queue))
          .map((p) => (p.metricState as unknown as { count: number }).count)
        expect(failed).toEqual([1])
      }))

    it.effect("a retry asked for at the last attempt gives the job up with its reason", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const queue = fresh("retry-last")
        const runs: Array<number> = []
        const givenUp: Array<[string, JobQueue.GiveUpHow]> = []
        const worker = yield* startWorker({
          queue,
          concurrency: 1,
          maxAttempts: 2,
          handle: (job) =>
            Effect.gen(function* () {
              runs.push(job.attempts)
              const at = yield* Clock.currentTimeMillis
              return JobQueue.Outcome.retryAt(new Date(at + 60_000), "still in use")
            }),
          onGiveUp: (_job, reason, how) => Effect.sync(() => void givenUp.push([reason, how]))
        })
        yield* jobs.enqueue({ queue, payload: null })
        yield* jobs.awaitIdle(queue)
        yield* TestClock.adjust("1 minute")
        yield* jobs.awaitIdle(queue)
        yield* TestClock.adjust("1 day")
        yield* jobs.awaitIdle(queue)
        expect(runs).toEqual([0, 1])
        expect(givenUp).toEqual([["still in use", "failed"]])
        expect(Option.isNone(yield* jobs.nextDueAt(queue))).toBe(true)
        yield* Fiber.interrupt(worker)
      }))

    it.effect("a crashed holder's lease lapses and the job is claimed again; its stale claim cannot settle it", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const other = (yield* Other).queue
        const queue = fresh("lapse")
        yield* jobs.enqueue({ queue, payload: { n: 1 } })
        const [crashed] = yield* jobs.claim({ queue, limit: 5, leaseMillis: 30_000 })
        expect(crashed?.payload).toEqual({ n: 1 })
        expect(yield* other.claim({ queue, limit: 5, leaseMillis: 30_000 })).toEqual([])
        yield* TestClock.adjust("29 seconds")
        expect(yield* other.claim({ queue, limit: 5, leaseMillis: 30_000 })).toEqual([])
        yield* TestClock.adjust("1 second")
        const [taken] = yield* other.claim({ queue, limit: 5, leaseMillis: 30_000 })
        expect(taken?.id).toBe(crashed!.id)
        expect(taken!.claim).toBeGreaterThan(crashed!.claim)
        // the crashed process comes back and reports: its claim is stale, the job stays with `taken`
        yield* jobs.settle(crashed!, JobQueue.Outcome.done)
        expect(yield* jobs.extend(crashed!, 30_000)).toBe(false)
        expect(yield* other.extend(taken!, 30_000)).toBe(true)
        yield* other.settle(taken!, JobQueue.Outcome.done)
        expect(Option.isNone(yield* jobs.nextDueAt(queue))).toBe(true)
      }))

    it.effect("a heartbeat late for a job its holder settled or released leases it no more", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const queue = fresh("late-beat")
        yield* jobs.enqueue({ queue, payload: { n: 1 } })
        const [retried] = yield* jobs.claim({ queue, limit: 1, leaseMillis: 60_000 })
        const at = new Date((yield* Clock.currentTimeMillis) + 5_000)
        yield* jobs.settle(retried!, JobQueue.Outcome.retryAt(at, "try later"))
        expect(yield* jobs.extend(retried!, 60_000)).toBe(false)
        // due at its retry's instant, not when the late lease would have lapsed
        yield* TestClock.adjust("5 seconds")
        const [again] = yield* jobs.claim({ queue, limit: 1, leaseMillis: 60_000 })
        expect(again?.id).toBe(retried!.id)
        yield* jobs.release(again!)
        expect(yield* jobs.extend(again!, 60_000)).toBe(false)
        expect((yield* jobs.claim({ queue, limit: 1, leaseMillis: 60_000 }))[0]?.id).toBe(retried!.id)
      }))

    it.effect("a worker takes over a lapsed job by itself", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const queue = fresh("takeover")
        yield* jobs.enqueue({ queue, payload: { n: 1 } })
        yield* jobs.claim({ queue, limit: 1, leaseMillis: 60_000 })
        const seen: Array<number> = []
        const worker = yield* startWorker({
          queue,
          concurrency: 1,
          handle: (job) => Effect.sync(() => (seen.push(job.claim), JobQueue.Outcome.done))
        })
        yield* jobs.awaitIdle(queue)
        expect(seen).toEqual([])
        yield* TestClock.adjust("60 seconds")
        yield* jobs.awaitIdle(queue)
        expect(seen).toEqual([2])
        yield* Fiber.interrupt(worker)
      }))

    it.effect("the lease is extended while a handler runs for minutes, and released when the worker is interrupted", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const other = (yield* Other).queue
        const queue = fresh("lease")
        const started = yield* Deferred.make<void>()
        const worker = yield* startWorker({
          queue,
          concurrency: 1,
          leaseMillis: 30_000,
          handle: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
        })
        yield* jobs.enqueue({ queue, key: "agt_1", payload: { n: 1 } })
        yield* Deferred.await(started)
        for (let i = 0; i < 10; i++) {
          yield* TestClock.adjust("10 seconds")
          // the heartbeat runs on its own fiber: let it write before looking
          yield* eventually(other.claimable({ queue }), (n) => n === 0)
        }
        expect(yield* other.claim({ queue, limit: 1, leaseMillis: 30_000 })).toEqual([])
        // shutdown: the lease is handed back at once, not after it lapses
        yield* Fiber.interrupt(worker)
        const [taken] = yield* other.claim({ queue, limit: 1, leaseMillis: 30_000 })
        expect(taken?.payload).toEqual({ n: 1 })
        yield* other.settle(taken!, JobQueue.Outcome.done)
      }))

    it.effect("a job handed back on shutdown first gives back what its claim took, whether its handler ran or not", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const { queue: other } = yield* Other
        const stalled = fresh("hand-back-prepare")
        const running = fresh("hand-back-running")
        for (let n = 1; n <= 2; n++) yield* jobs.enqueue({ queue: stalled, payload: { n } })
        yield* jobs.enqueue({ queue: running, payload: { n: 3 } })
        // per job handed back: its payload, what `prepare` gave it, and how many of its queue's jobs were claimable
        // then (those handed back before it: its own lease is still held)
        const handedBack: Array<{ n: unknown; prepared: string | undefined; claimable: number }> = []
        const handBack = (queue: string) => (job: JobQueue.Job, prepared: string | undefined) =>
          Effect.map(other.claimable({ queue }), (claimable) =>
            void handedBack.push({ n: (job.payload as { n: number }).n, prepared, claimable })
          )
        const inPrepare = yield* Deferred.make<void>()
        const inHandler = yield* Deferred.make<void>()
        // a claim whose `prepare` never ends: its handlers never start
        const first = yield* startWorker({
          queue: stalled,
          concurrency: 2,
          prepare: () => Effect.zipRight(Deferred.succeed(inPrepare, undefined), Effect.never),
          handBack: handBack(stalled),
          handle: () => Effect.succeed(JobQueue.Outcome.done)
        })
        // a handler that runs until the shutdown
        const second = yield* startWorker({
          queue: running,
          concurrency: 1,
          prepare: () => Effect.succeed("prepared"),
          handBack: handBack(running),
          handle: () => Effect.zipRight(Deferred.succeed(inHandler, undefined), Effect.never)
        })
        yield* Deferred.await(inPrepare)
        yield* Deferred.await(inHandler)
        yield* Fiber.interrupt(first)
        yield* Fiber.interrupt(second)
        expect([...handedBack].sort((a, b) => Number(a.n) - Number(b.n))).toEqual([
          { n: 1, prepared: undefined, claimable: 0 },
          { n: 2, prepared: undefined, claimable: 1 },
          { n: 3, prepared: "prepared", claimable: 0 }
        ])
        // then their leases: another worker takes them at once
        expect(yield* other.claimable({ queue: stalled })).toBe(2)
        expect(yield* other.claimable({ queue: running })).toBe(1)
      }))

    it.effect("prepare runs once per claim and each handler gets its result; what a claim call returns beside a job reaches it", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
        yield* tenfoldClaim
        const queue = fresh("prepare")
        for (let n = 1; n <= 3; n++) yield* jobs.enqueue({ queue, payload: { n } })
        const prepared: Array<number> = []
        const seen: Array<{ n: number; size: number; alongside: unknown }> = []
        const worker = yield* startWorker({
          queue,
          concurrency: 5,
          // the SQL store claims by this call; the memory store has none to run
          claimCall: Option.isSome(sql)
            ? (call) => sql.value`tenfold_claim(${call.ended.map((job) => job.id)}::bigint[],
                ${call.ended.map((job) => job.claim)}::integer[], ${call.queue}, ${call.at}, ${call.until},
                ${call.perKey}::integer, ${call.perGroup}::integer, ${call.limit}::integer, ${call.async})`
            : undefined,
          prepare: (claimed) => Effect.sync(() => (prepared.push(claimed.length), claimed.length)),
          handle: (job, size) =>
            Effect.sync(() => {
              const alongside = job.alongside === undefined ? undefined : Option.getOrNull(job.alongside)
              seen.push({ n: (job.payload as { n: number }).n, size, alongside })
              return JobQueue.Outcome.done
            })
        })
        yield* jobs.awaitIdle(queue)
        expect(prepared).toEqual([3])
        // a row per job but the second's: None for it (undefined everywhere in a store without SQL)
        const row = (n: number) =>
          Option.isNone(sql) ? undefined : n === 2 ? null : { job_id: expect.anything(), tenfold: n * 10 }
        expect([...seen].sort((a, b) => a.n - b.n)).toEqual([1, 2, 3].map((n) => ({ n, size: 3, alongside: row(n) })))
        yield* Fiber.interrupt(worker)
      }))

    it.effect("a job ending with finish is written by the next claim, which settles it and claims its successor", () =>
      Effect.gen(function* () {
        const store = yield* JobQueue.JobQueue
        const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
        const queue = fresh("finish")
        const n = (job: JobQueue.Job) => (job.payload as { n: number }).n
        // what each claim carried and took
        const log: Array<{ carried: Array<number>; claimed: Array<number> }> = []
        const jobs = yield* fromPrimitives({
          ...store,
          claim: (options) =>
            Effect.tap(store.claim(options), (claimed) =>
              Effect.sync(() => log.push({ carried: (options.carried?.jobs ?? []).map(n), claimed: claimed.map(n) }))
            )
        })
        const writtenAlone: Array<number> = []
        yield* finishedItems
        for (let i = 0; i < 3; i++) yield* jobs.enqueue({ queue, key: "serial", payload: { n: i } })
        const worker = yield* Effect.fork(
          jobs.worker({
            queue,
            concurrency: 4,
            pollMillis: 3_600_000,
            finish: {
              write: (ns: ReadonlyArray<number>) =>
                Option.isSome(sql) ? sql.value`finished_items_add(${queue}, ${ns}::integer[])` : carriesNothing(),
              alone: (ns) => Effect.sync(() => writtenAlone.push(...ns))
            },
            handle: (job) => Effect.succeed(JobQueue.Outcome.finish(n(job)))
          })
        )
        yield* jobs.awaitIdle(queue)
        expect(yield* jobs.nextDueAt(queue)).toEqual(Option.none())
        if (Option.isSome(sql)) {
          const rows = yield* Effect.orDie(sql.value`select n from finished_items where queue = ${queue} order by n`)
          expect(rows.map((row) => row["n"])).toEqual([0, 1, 2])
          // one statement per step: the write of a job, its settle, and the claim of the next of its key (which the
          // serial key makes claimable only once that settle is seen)
          expect(log.filter((pass) => pass.carried.length + pass.claimed.length > 0)).toEqual([
            { carried: [], claimed: [0] },
            { carried: [0], claimed: [1] },
            { carried: [1], claimed: [2] },
            { carried: [2], claimed: [] }
          ])
        } else {
          // the memory store carries no write: the worker writes each alone, then settles it
          expect(writtenAlone).toEqual([0, 1, 2])
        }
        yield* Fiber.interrupt(worker)
      }))

    it.effect("a carried write that fails leaves its job to run again when its lease would have lapsed", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
        yield* finishedItems
        const queue = fresh("finish-fails")
        const start = yield* Clock.currentTimeMillis
        let failures = 1
        let runs = 0
        const ranAt: Array<number> = []
        const writtenAlone: Array<number> = []
        yield* jobs.enqueue({ queue, payload: { n: 1 } })
        const worker = yield* startWorker({
          queue,
          concurrency: 2,
          leaseMillis: 30_000,
          finish: {
            // the first write fails (on SQL, the whole claim carrying it: the worker restarts)
            write: (ns: ReadonlyArray<number>) =>
              Option.isNone(sql)
                ? carriesNothing()
                : failures-- > 0
                  ? sql.value`(select 1 / 0)`
                  : sql.value`finished_items_add(${queue}, ${ns}::integer[])`,
            alone: (ns) =>
              failures-- > 0 ? Effect.fail("database away") : Effect.sync(() => void writtenAlone.push(...ns))
          },
          handle: (job) =>
            Effect.map(Clock.currentTimeMillis, (at) => (runs++, ranAt.push(at), JobQueue.Outcome.finish((job.payload as { n: number }).n)))
        })
        // not lost: waiting for the lease's length, then run again (the first restart of the worker is 1 s later)
        yield* eventually(jobs.nextDueAt(queue), (due) => Option.getOrUndefined(due) === start + 30_000)
        expect(runs).toBe(1)
        yield* TestClock.adjust("1 second")
        expect(yield* jobs.claimable({ queue })).toBe(0)
        // a second at a time: the failed claim, the worker's restart and its sleeps land when they do under load,
        // and a sleep that starts after a step waits for the next one
        yield* eventually(Effect.zipRight(TestClock.adjust("1 second"), Effect.sync(() => runs)), (n) => n === 2, { tries: 120 })
        expect(ranAt[1]).toBeGreaterThanOrEqual(start + 30_000)
        yield* jobs.awaitIdle(queue)
        const written = Option.isSome(sql)
          ? (yield* Effect.orDie(sql.value`select n from finished_items where queue = ${queue}`)).map((row) => row["n"])
          : writtenAlone
        expect(written).toEqual([1])
        expect(yield* jobs.nextDueAt(queue)).toEqual(Option.none())
        yield* Fiber.interrupt(worker)
      }))

    it.effect("when prepare fails, every handler of its claim fails with it and is retried", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const queue = fresh("prepare-fails")
        for (let n = 1; n <= 2; n++) yield* jobs.enqueue({ queue, payload: { n } })
        let failures = 1
        const handled: Array<number> = []
        const worker = yield* startWorker({
          queue,
          concurrency: 5,
          prepare: () => (failures-- > 0 ? Effect.fail("database away") : Effect.succeed(undefined)),
          handle: (job) => Effect.sync(() => (handled.push(job.attempts), JobQueue.Outcome.done))
        })
        yield* jobs.awaitIdle(queue)
        expect(handled).toEqual([])
        yield* TestClock.adjust("5 seconds")
        yield* jobs.awaitIdle(queue)
        expect(handled).toEqual([1, 1])
        yield* Fiber.interrupt(worker)
      }))

    it.effect("bookkeeping commits asynchronously on its own, and leaves a caller's transaction as it was", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const { withTransaction } = yield* Other
        const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
        if (Option.isNone(withTransaction) || Option.isNone(sql)) return
        const mode = Effect.flatMap(
          Effect.orDie(sql.value`select current_setting('synchronous_commit') as mode`),
          (rows) => Effect.map(Effect.orDie(Schema.decodeUnknown(Schema.Struct({ mode: Schema.String }))(rows[0])), (row) => row.mode)
        )
        const queue = fresh("durability")
        yield* jobs.enqueue({ queue, payload: { n: 1 } })
        yield* jobs.enqueue({ queue, payload: { n: 2 } })
        // inside the caller's transaction: its commit mode stays synchronous
        const inside = yield* Effect.orDie(
          withTransaction.value(
            Effect.gen(function* () {
              const [job] = yield* jobs.claim({ queue, limit: 1, leaseMillis: 30_000 })
              yield* jobs.extend(job!, 30_000)
              yield* jobs.settle(job!, JobQueue.Outcome.done)
              return yield* mode
            })
          )
        )
        expect(inside).toBe("on")
        // on its own: the setting is the statement's transaction's, not the session's
        const [job] = yield* jobs.claim({ queue, limit: 1, leaseMillis: 30_000 })
        yield* jobs.settle(job!, JobQueue.Outcome.done)
        expect(yield* mode).toBe("on")
        expect(Option.isNone(yield* jobs.nextDueAt(queue))).toBe(true)
      }))

    it.effect("enqueue inside a transaction wakes the worker after commit, and a rollback leaves no job", () =>
      Effect.gen(function* () {
        const jobs = yield* JobQueue.JobQueue
        const { withTransaction } = yield* Other
        const queue = fresh("commit")
        const seen: Array<unknown> = []
        const worker = yield* startWorker({
          queue,
          concurrency: 1,
          handle: (job) => Effect.sync(() => (seen.push(job.payload), JobQueue.Outcome.done))
        })
        yield* jobs.awaitIdle(queue)
        if (Option.isSome(withTransaction)) {
          const transaction = withTransaction.value
          yield* JobQueue.withAfterCommit(
            Effect.ignore(transaction(Effect.zipRight(jobs.enqueue({ queue, payload: "rolled back" }), Effect.fail("abort"))))
          )
          yield* JobQueue.withAfterCommit(Effect.orDie(transaction(jobs.enqueue({ queue, payload: "committed" }))))
        } else {
          yield* JobQueue.withAfterCommit(jobs.enqueue({ queue, payload: "committed" }))
        }
        // the poll is an hour and the Clock does not move: only the after-commit wake-up can run it
        yield* eventually(Effect.sync(() => seen.length), (n) => n === 1)
        yield* jobs.awaitIdle(queue)
        expect(seen).toEqual(["committed"])
        yield* Fiber.interrupt(worker)
      }))
  })

describe("JobQueue", () => {
  suite("postgres", postgres)
  suite("memory", memory)
})

/**
 * The memory store with what the worker asks of it logged in order (`claim n`, `nextDueAt`), and a worker of
 * four slots on a fresh queue running `handle`.
 */
const observedWorker = (name: string, handle: (job: JobQueue.Job) => Effect.Effect<JobQueue.Outcome>) =>
  Effect.gen(function* () {
    const store = yield* JobQueue.JobQueue
    const log: Array<string> = []
    const jobs = yield* fromPrimitives({
      ...store,
      claim: (options) => Effect.tap(store.claim(options), (claimed) => Effect.sync(() => log.push(`claim ${claimed.length}`))),
      nextDueAt: (queue) => Effect.zipRight(Effect.sync(() => log.push("nextDueAt")), store.nextDueAt(queue))
    })
    const queue = fresh(name)
    const worker = yield* Effect.fork(jobs.worker({ queue, concurrency: 4, pollMillis: 3_600_000, handle }))
    return { jobs, queue, log, worker }
  })

layer(memory, { timeout: 60_000 })("JobQueue worker claim passes (memory store, observed)", (it) => {
  it.effect("jobs ending together share one claim, and a pass that started jobs does not read nextDueAt", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      let running = 0
      let finished = 0
      const { jobs, queue, log, worker } = yield* observedWorker("batch", (job) =>
        Effect.gen(function* () {
          running++
          yield* Deferred.await(gate)
          // the four of a wave end at different scheduler ticks, not at once
          for (let i = 0; i < (job.payload as { n: number }).n % 4; i++) yield* Effect.yieldNow()
          running--
          finished++
          return JobQueue.Outcome.done
        })
      )
      for (let n = 0; n < 8; n++) yield* jobs.enqueue({ queue, payload: { n } })
      yield* eventually(Effect.sync(() => running), (n) => n === 4)
      yield* Deferred.succeed(gate, undefined)
      yield* eventually(Effect.sync(() => finished), (n) => n === 8)
      yield* jobs.awaitIdle(queue)
      // the pass after the last wave finds nothing, then reads the due times
      yield* eventually(Effect.sync(() => log.includes("nextDueAt")), (read) => read)
      // each wave of four in one claim (without the moment: the first to end takes a claim of its own)
      expect(log.filter((entry) => entry.startsWith("claim ") && entry !== "claim 0")).toEqual(["claim 4", "claim 4"])
      // the due times are read only after a pass that claimed nothing
      log.forEach((entry, i) => {
        if (entry === "nextDueAt") expect(log[i - 1]).toBe("claim 0")
      })
      yield* Fiber.interrupt(worker)
    }))

  it.effect("the moment before a claim is bounded: jobs that ended are claimed for while another still runs", () =>
    Effect.gen(function* () {
      const wave = yield* Deferred.make<void>()
      const slow = yield* Deferred.make<void>()
      let started = 0
      let finished = 0
      const { jobs, queue, log, worker } = yield* observedWorker("bounded", (job) =>
        Effect.gen(function* () {
          started++
          // job 0 runs until the test lets it go; the others of the first wave end together
          yield* Deferred.await((job.payload as { n: number }).n === 0 ? slow : wave)
          finished++
          return JobQueue.Outcome.done
        })
      )
      for (let n = 0; n < 7; n++) yield* jobs.enqueue({ queue, payload: { n } })
      yield* eventually(Effect.sync(() => started), (n) => n === 4)
      yield* Deferred.succeed(wave, undefined)
      // the three that ended get successors while job 0 still runs: the worker did not wait for it
      yield* eventually(Effect.sync(() => started), (n) => n === 7)
      expect(finished).toBeLessThan(7)
      expect(log.filter((entry) => entry.startsWith("claim ") && entry !== "claim 0").slice(0, 2)).toEqual(["claim 4", "claim 3"])
      yield* Deferred.succeed(slow, undefined)
      yield* eventually(Effect.sync(() => finished), (n) => n === 7)
      yield* Fiber.interrupt(worker)
    }))
})
