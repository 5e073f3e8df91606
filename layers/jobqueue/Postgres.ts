/**
 * The JobQueue store on the `jobs` table (migration 0005) through `SqlClient`,
 * on PostgreSQL and PGlite alike (`layerPostgres`).
 *
 * - A claim is one statement (`jobs_claim`, migration 0014) under the queue's
 *   advisory lock; it counts the attempt it begins in the row's `attempts`
 *   (migration 0023), so the row's count includes the running attempt and
 *   `Job.attempts` is one less. With carried writes (`WorkerOptions.finish`) one statement
 *   writes the items (`finish.write`), settles their jobs and claims their
 *   successors (`jobs_claim_after`, migration 0016), in the commit that records
 *   the work; or, with `claimCall`, one call of the queue owner's own database
 *   function does all of it (its statements are planned once per session).
 * - Durability: the queue's bookkeeping (claim, extend, settle, release) and
 *   the writes its claims carry commit without waiting for the WAL flush; a
 *   crash of the database server may lose the last few, which only runs those
 *   jobs again (a carried write records work that may be done twice: a webhook
 *   delivery is at least once). `enqueue` commits with the caller's
 *   transaction, as durably as it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type EnqueueInput, type Job, JobQueue, type Primitives } from "../JobQueue.js"
import { fromPrimitives } from "./Worker.js"

const nowMillis = Clock.currentTimeMillis

const JobRow = Schema.Struct({
  id: Schema.String,
  queue: Schema.String,
  key: Schema.NullOr(Schema.String),
  group_key: Schema.NullOr(Schema.String),
  payload: Schema.parseJson(),
  attempts: Schema.Number,
  claims: Schema.Number,
  created_at: Schema.DateFromSelf,
  alongside: Schema.optional(Schema.Unknown)
})

const DueRow = Schema.Struct({ at: Schema.NullOr(Schema.DateFromSelf) })
const CountRow = Schema.Struct({ n: Schema.NumberFromString })

const toJob = (row: typeof JobRow.Type): Job => ({
  id: row.id,
  queue: row.queue,
  key: row.key,
  group: row.group_key,
  payload: row.payload,
  // the row counts the attempt this claim began
  attempts: row.attempts - 1,
  claim: row.claims,
  createdAt: row.created_at,
  ...(row.alongside === undefined ? {} : { alongside: Option.fromNullable(row.alongside) })
})

const makePostgres = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  /**
   * The queue's own bookkeeping (claims, leases, settles) commits without waiting
   * for the WAL flush (`synchronous_commit = off` for that transaction only):
   * other sessions see it at once, as always; only a crash of the database
   * server itself can lose the last few of them, and a lost claim, lease or
   * settle only means the job runs again, which at-least-once already allows.
   * `enqueue` is not among them: it commits with the caller's transaction.
   * An expression (`asyncCommit`) or a one-row relation (`asyncCommitRow`) in
   * the statement itself, so it costs no round trip; called inside a caller's
   * transaction it changes nothing (the setting would be that transaction's).
   */
  const asyncCommit = Effect.map(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
    Option.isSome(transaction) ? sql`true` : sql`set_config('synchronous_commit', 'off', true)`
  )
  const asyncCommitRow = Effect.map(asyncCommit, (expression) => sql`(select ${expression}) as async_commit`)
  const orDie = <A>(effect: Effect.Effect<A, SqlError | unknown>) => Effect.orDie(effect)
  const decodeJobs = Schema.decodeUnknown(Schema.Array(JobRow))
  const insertJobs = (statement: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    SqlSchema.findAll({ Request: Schema.Void, Result: Schema.Struct({ id: Schema.String }), execute: () => statement })(undefined)
  const jobRow = (input: EnqueueInput, at: Date) => ({
    queue: input.queue,
    key: input.key ?? null,
    group_key: input.group ?? null,
    payload: JSON.stringify(input.payload ?? null),
    status: "pending",
    run_at: input.runAt ?? at,
    created_at: at
  })
  // rows a statement inserts at most (seven parameters each, within PostgreSQL's 65,535)
  const rowsPerInsert = 5_000

  const primitives: Primitives = {
    enqueue: (input) => Effect.map(primitives.enqueueAll([input]), ([id]) => id!),

    // the ids follow the rows' order: the sequence numbers them as the statement inserts them
    enqueueAll: (inputs) =>
      Effect.gen(function* () {
        const at = new Date(yield* nowMillis)
        const ids: Array<string> = []
        for (let from = 0; from < inputs.length; from += rowsPerInsert) {
          const rows = inputs.slice(from, from + rowsPerInsert).map((input) => jobRow(input, at))
          const inserted = yield* insertJobs(sql`insert into jobs ${sql.insert(rows)} returning id::text as id`)
          ids.push(...inserted.map((r) => r.id).sort((a, b) => Number(a) - Number(b)))
        }
        return ids
      }).pipe(orDie),

    // One statement (`jobs_claim`, migrations 0014 and 0034): under the queue's advisory lock, which serialises claims of
    // one queue across processes so per-key order and caps hold exactly; SKIP LOCKED passes over rows being
    // settled right now. Inside a caller's transaction the lock lasts until that one ends, and its commit mode
    // is left alone.
    // With writes carried (`jobs_claim_after`, migration 0016): the write is the call's first argument, so it runs
    // first; the ended jobs are settled, then the claim runs.
    claim: (options) =>
      Effect.gen(function* () {
        const at = new Date(yield* nowMillis)
        const transaction = yield* Effect.serviceOption(SqlClient.TransactionConnection)
        const until = new Date(at.getTime() + options.leaseMillis)
        const perKey = options.perKey ?? null
        const perGroup = options.perGroup ?? null
        const carried = options.carried
        if (options.call !== undefined) {
          const call = options.call({
            queue: options.queue,
            at,
            until,
            perKey,
            perGroup,
            limit: options.limit,
            async: Option.isNone(transaction),
            ended: carried?.jobs ?? []
          })
          const rows = yield* sql`select id, queue, key, group_key, payload, attempts, claims, created_at, alongside from ${call}`
          return (yield* decodeJobs(rows)).map(toJob).sort((a, b) => Number(a.id) - Number(b.id))
        }
        const claim = carried === undefined
          ? sql`
              select * from jobs_claim(${options.queue}, ${at}, ${until}, ${perKey}::integer, ${perGroup}::integer,
                ${options.limit}::integer, ${Option.isNone(transaction)})`
          : sql`
              select * from jobs_claim_after((${carried.write()})::integer,
                ${carried.jobs.map((job) => job.id)}::bigint[], ${carried.jobs.map((job) => job.claim)}::integer[],
                ${options.queue}, ${at}, ${until}, ${perKey}::integer, ${perGroup}::integer, ${options.limit}::integer,
                ${Option.isNone(transaction)})`
        const rows = yield* sql`select c.id, c.queue, c.key, c.group_key, c.payload, c.attempts, c.claims, c.created_at from (${claim}) c`
        return (yield* decodeJobs(rows)).map(toJob).sort((a, b) => Number(a.id) - Number(b.id))
      }).pipe(orDie),

    extend: (job, leaseMillis) =>
      Effect.gen(function* () {
        const at = yield* nowMillis
        const rows = yield* sql`
          update jobs set locked_until = ${new Date(at + leaseMillis)} from ${yield* asyncCommitRow}
          where id = ${job.id} and claims = ${job.claim} and status = 'pending' and locked_until is not null
          returning id`
        return rows.length === 1
      }).pipe(orDie),

    settle: (job, outcome, options) =>
      Effect.gen(function* () {
        const at = new Date(yield* nowMillis)
        const attempts = options?.uncounted === true ? sql`greatest(attempts - 1, 0)` : sql`attempts`
        switch (outcome._tag) {
          case "Done":
          case "Finish":
            yield* sql`delete from jobs using ${yield* asyncCommitRow} where id = ${job.id} and claims = ${job.claim}`
            return
          case "Retry":
            yield* sql`
              update jobs set run_at = case when hurried then ${at}::timestamptz else ${outcome.at}::timestamptz end,
                hurried = false, attempts = ${attempts}, locked_until = null, last_error = ${outcome.reason}
              from ${yield* asyncCommitRow}
              where id = ${job.id} and claims = ${job.claim} and status = 'pending'`
            return
          case "Failed":
            yield* sql`
              update jobs set status = 'failed', attempts = ${attempts}, locked_until = null,
                last_error = ${outcome.reason}, finished_at = ${at}
              from ${yield* asyncCommitRow}
              where id = ${job.id} and claims = ${job.claim} and status = 'pending'`
            return
        }
      }).pipe(orDie),

    carries: true,

    release: (job) =>
      Effect.flatMap(asyncCommitRow, (commit) =>
        sql`
          update jobs set locked_until = null, attempts = greatest(attempts - 1, 0) from ${commit}
          where id = ${job.id} and claims = ${job.claim} and status = 'pending'`
      ).pipe(Effect.asVoid, orDie),

    // the statements inside are the queue's or its owner's, each of which makes its own failures defects; only
    // BEGIN and COMMIT are left
    transaction: (self) => Effect.catchIf(sql.withTransaction(self), (e) => e instanceof SqlError, Effect.die),

    hurry: (queue, key) =>
      Effect.gen(function* () {
        const at = new Date(yield* nowMillis)
        const rows = yield* sql`
          update jobs set run_at = least(run_at, ${at}), hurried = (locked_until is not null and locked_until > ${at})
          where queue = ${queue} and key = ${key} and status = 'pending'
            and (run_at > ${at} or (locked_until is not null and locked_until > ${at}))
          returning id`
        return rows.length
      }).pipe(orDie),

    nextDueAt: (queue) =>
      Effect.gen(function* () {
        // two index walks (the earliest unleased job on jobs_due, the leased ones on jobs_leased), not the backlog
        const rows = yield* sql`
          select least(
            (select run_at from jobs
             where queue = ${queue} and status = 'pending' and locked_until is null order by run_at limit 1),
            (select min(greatest(run_at, locked_until)) from jobs
             where queue = ${queue} and status = 'pending' and locked_until is not null)
          ) as at`
        const [row] = yield* Schema.decodeUnknown(Schema.Array(DueRow))(rows)
        return Option.map(Option.fromNullable(row?.at ?? null), (d) => d.getTime())
      }).pipe(orDie),

    claimable: (options) =>
      Effect.gen(function* () {
        const at = new Date(yield* nowMillis)
        const rows = yield* sql`
          select count(*) as n from jobs_claimable(${options.queue}, ${at}, ${options.perKey ?? null}::integer,
            ${options.perGroup ?? null}::integer, null::integer) c`
        const [row] = yield* Schema.decodeUnknown(Schema.Array(CountRow))(rows)
        return row?.n ?? 0
      }).pipe(orDie)
  }
  return yield* fromPrimitives(primitives)
})

/** On the `jobs` table (migration 0005), through whichever `SqlClient` is provided. */
export const layerPostgres: Layer.Layer<JobQueue, never, SqlClient.SqlClient> = Layer.effect(JobQueue, makePostgres)
