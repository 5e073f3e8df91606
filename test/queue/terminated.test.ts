/**
 * The job queue on a real PostgreSQL whose connections are terminated under it (`pg_terminate_backend`), on a
 * throwaway `t_<hex>` database of the server in DATABASE_URL; skipped without it (PGlite has no connections to
 * lose). Its own clock is the real one: the connections, their termination and the pool's new ones are real.
 *
 * Jobs whose handlers run until the test lets each go; in each round, another session (of its own
 * application_name) holds the queue's advisory lock, one job is let go, so the worker's next claim (carrying
 * that job's write for every other job) waits on the lock, and then every connection of the service's pool is
 * terminated under it. The claim fails, the worker claims again after its backoff; the jobs running meanwhile
 * are not interrupted, and every job's handler ends exactly once.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as JobQueue from "../../layers/JobQueue.js"
import { layerPostgres } from "../../layers/jobqueue/Postgres.js"
import { fromPrimitives } from "../../layers/jobqueue/Worker.js"
import { migrations } from "../../src/db/migrations/index.js"
import { runMigrations } from "../../src/db/Migrator.js"
import { testDatabaseLayer } from "../support/database.js"
import { eventually } from "../support/eventually.js"

const databaseUrl = process.env["DATABASE_URL"]
if (databaseUrl === undefined) {
  console.log("test/queue/terminated.test.ts skipped: terminating connections needs PostgreSQL (set DATABASE_URL)")
}

/** The service's pool's application_name (`layerPg`): the sessions terminated, and no other. */
const serviceApplication = "assistant-platform"

const queueOnPostgres = Layer.unwrapEffect(Effect.as(Effect.orDie(runMigrations(migrations)), layerPostgres)).pipe(
  Layer.provideMerge(Layer.orDie(testDatabaseLayer))
)

const Count = Schema.Array(Schema.Struct({ n: Schema.NumberFromString }))

const rounds = 5
const concurrency = 4
const jobCount = 12

describe.skipIf(databaseUrl === undefined)("JobQueue on PostgreSQL whose connections are terminated", () => {
  it.live(`${rounds} rounds of terminated connections mid-run: no running job interrupted, every job ends once`, () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const store = yield* JobQueue.JobQueue
      const queue = "terminated"
      // another session on the same database, of its own application_name: two connections, one to hold the lock
      const [{ name }] = (yield* Effect.orDie(sql<{ name: string }>`select current_database() as name`)) as [{ name: string }]
      const url = new URL(databaseUrl!)
      url.pathname = `/${name}`
      const other = Context.get(
        yield* Layer.build(PgClient.layer({ url: Redacted.make(url.toString()), maxConnections: 2, applicationName: "queue-terminator" })),
        PgClient.PgClient
      )
      const count = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        Effect.map(Effect.flatMap(Effect.orDie(statement), Schema.decodeUnknown(Count)), ([row]) => row?.n ?? 0)

      let claimsFailed = 0
      const jobs = yield* fromPrimitives({
        ...store,
        claim: (options) => Effect.tapDefect(store.claim(options), () => Effect.sync(() => void claimsFailed++))
      })

      const letGo = new Map<string, Deferred.Deferred<void>>()
      const started: Array<string> = []
      const ended = new Map<string, number>()
      let interrupted = 0
      let allGo = false
      const worker = yield* Effect.fork(
        jobs.worker({
          queue,
          concurrency,
          leaseMillis: 10_000,
          finish: JobQueue.settleByNextClaim,
          handle: (job) =>
            Effect.gen(function* () {
              const go = yield* Deferred.make<void>()
              letGo.set(job.id, go)
              started.push(job.id)
              if (!allGo) yield* Deferred.await(go)
              ended.set(job.id, (ended.get(job.id) ?? 0) + 1)
              // ended jobs' writes carried by the next claim, or settled each on its own
              return (job.payload as { n: number }).n % 2 === 0 ? JobQueue.Outcome.finish(null) : JobQueue.Outcome.done
            }).pipe(Effect.onInterrupt(() => Effect.sync(() => void interrupted++)))
        })
      )
      yield* jobs.enqueueAll(Array.from({ length: jobCount }, (_, n) => ({ queue, payload: { n } })))
      yield* eventually(Effect.sync(() => started.length), (n) => n === concurrency, { label: "the first jobs running" })

      for (let round = 0; round < rounds; round++) {
        const locked = yield* Deferred.make<void>()
        const unlock = yield* Deferred.make<void>()
        const holder = yield* Effect.fork(
          other.withTransaction(
            Effect.zipRight(
              other`select pg_advisory_xact_lock(hashtext(${`jobs:${queue}`}))`,
              Effect.zipRight(Deferred.succeed(locked, undefined), Deferred.await(unlock))
            )
          )
        )
        yield* Deferred.await(locked)
        // the oldest running job ends: the claim for its slot waits on the lock
        const running = started.filter((id) => !ended.has(id))
        const failedBefore = claimsFailed
        const startedBefore = started.length
        yield* Deferred.succeed(letGo.get(running[0]!)!, undefined)
        yield* eventually(
          count(other`
            select count(*) as n from pg_stat_activity
            where datname = current_database() and application_name = ${serviceApplication} and wait_event_type = 'Lock'`),
          (n) => n === 1,
          { label: `round ${round}: a claim waiting on the lock` }
        )
        const terminated = yield* count(other`
          select count(*) as n from (
            select pg_terminate_backend(pid) from pg_stat_activity
            where datname = current_database() and pid <> pg_backend_pid() and application_name = ${serviceApplication}
          ) t`)
        expect(terminated).toBeGreaterThanOrEqual(1)
        yield* Deferred.succeed(unlock, undefined)
        yield* Fiber.join(holder).pipe(Effect.orDie)
        yield* eventually(Effect.sync(() => claimsFailed), (n) => n > failedBefore, { label: `round ${round}: the claim failed` })
        // claimed again after the backoff: a job takes the freed slot
        yield* eventually(Effect.sync(() => started.length), (n) => n === startedBefore + 1, {
          label: `round ${round}: the slot filled again`
        })
        expect(interrupted).toBe(0)
      }

      allGo = true
      for (const go of letGo.values()) yield* Deferred.succeed(go, undefined)
      yield* eventually(
        count(sql`select count(*) as n from jobs where queue = ${queue}`),
        (n) => n === 0,
        { label: "every job settled", tries: 1_000 }
      )
      expect(claimsFailed).toBeGreaterThanOrEqual(rounds)
      expect(interrupted).toBe(0)
      expect(ended.size).toBe(jobCount)
      expect([...ended.values()].every((n) => n === 1)).toBe(true)
      yield* Fiber.interrupt(worker)
    }).pipe(Effect.provide(queueOnPostgres), Effect.scoped), { timeout: 120_000 })
})
