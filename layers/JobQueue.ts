/**
 * JobQueue: durable background work with leases, by the Clock. Two
 * implementations side by side: `layerPostgres` (the `jobs` table through
 * `SqlClient`, on PostgreSQL and PGlite alike) and `layerMemory` (for tests of
 * programs). Both pass one behaviour suite (`test/queue/jobqueue.test.ts`).
 *
 * Public interface (stable):
 * - `enqueue({ queue, key?, payload, runAt? })` -> job id. Call it inside the
 *   transaction of the change that causes the work: the job exists exactly when
 *   that change committed. Inside a transaction it also registers an after-commit
 *   wake-up (see `withAfterCommit`); outside one it wakes local workers at once.
 * - `worker({ queue, concurrency, leaseMillis?, perKey?, pollMillis?, handle })`:
 *   an effect that never ends. It claims while slots are free, runs
 *   `handle(job)` in its own fiber and settles the job by the returned
 *   `Outcome` (`done`, `retryAt(instant)`, `failed(reason)`, or `finish(item)`,
 *   see below); a handler that fails or dies is an attempt like any other (see
 *   Failures below). While a
 *   handler runs, its lease is extended every third of `leaseMillis`; a handler
 *   that loses its lease is interrupted. On interruption (shutdown) the lease is
 *   released, so another process takes the job at once (first `handBack` gives
 *   back what its claim took for it, also for a job whose handler never
 *   started); a crashed process's
 *   leases lapse and its jobs are claimed again. Between claims the worker
 *   sleeps until the next due job, a local wake-up, a freed slot, an ended
 *   job's item, or `pollMillis` (other processes' jobs). It claims for every
 *   free slot in one claim: woken while jobs run, it first waits for the others
 *   to end, at most 3 ms of real time (a timer of its own, not the Clock), so
 *   that their slots share one claim. A pass that started jobs does not read
 *   `nextDueAt`: the end of one of them brings the next pass (so a job falling
 *   due later while all of them still run waits for that, or at most
 *   `pollMillis`). It is supervised: it restarts with backoff and logs.
 * - Keys: jobs with the same `key` run strictly one at a time in creation order
 *   (across processes too), unless the worker sets `perKey: n`: then at most n of
 *   a key are in flight, in no particular order. A job whose retry waits keeps
 *   later jobs of its key (serial mode) waiting behind it. Creation order is the
 *   order of `enqueue` calls (the id sequence), not of commits.
 * - `hurry(queue, key)`: every waiting job of the key is due now (its owner
 *   came back, e.g. a re-enabled webhook subscription); one running now that
 *   settles with a retry runs again at once.
 * - Primitives the worker is built on, also used by tests: `claim`, `extend`,
 *   `settle`, `release`, `nextDueAt`, `claimable`, `wake`; `awaitIdle(queue)` (test probe):
 *   waits until no job of the queue is in flight in this process and none is
 *   claimable now (needs a running worker for that queue).
 * - Module functions: `afterCommit(effect)` / `withAfterCommit(self)` (wake-ups
 *   run once the caller's transaction committed: the HTTP edge and every job
 *   handler are such boundaries; without one, a hook waits
 *   `afterCommitGraceMillis`), `supervise(name, work)` (the one restart-with-
 *   backoff helper), `layerWorker(options)`.
 * - Carried writes (`WorkerOptions.finish`): a handler whose job ends well
 *   returns `Outcome.finish(item)` instead of writing its result itself; the
 *   worker's next claim carries the items of every job that ended meanwhile:
 *   on PostgreSQL one statement writes them (`finish.write`), settles their
 *   jobs and claims their successors (`jobs_claim_after`, migration 0016), in
 *   the commit that records the work; or, with `claimCall`, one call of the
 *   queue owner's own database function does all of it (its statements are
 *   planned once per session). Where the store cannot carry a write
 *   (memory) the worker runs `finish.alone` and settles the jobs itself. The
 *   handler's job ends when its item is written, also on shutdown (the worker
 *   writes what it holds before it stops), so a job is never handed back with
 *   its work done but not recorded.
 * - Failures: a handler (or its claim's `prepare`) that fails or dies is a failed
 *   attempt: logged at error level in one line (job, queue, key, short cause),
 *   counted (`jobs_attempts_failed_total`), its short cause kept in `last_error`,
 *   and retried after `retryBackoffMillis`; at attempt `maxAttempts` (every
 *   settled attempt counts, the retries a handler asks for too) it is given up:
 *   `onGiveUp` records it where people see it, then the job is settled failed
 *   (`jobs_failed_total`) and the next job of its key runs. An `onGiveUp` that
 *   dies leaves the job to run again after the backoff, so a failure is never
 *   settled unrecorded. `onRetry` shows a retry the same way.
 * - The payload is stored as JSON text; handlers decode it with their Schema.
 * - Durability: on PostgreSQL the queue's bookkeeping (claim, extend, settle,
 *   release) and the writes its claims carry commit without waiting for the
 *   WAL flush; a crash of the database server may lose the last few, which
 *   only runs those jobs again (a carried write records work that may be done
 *   twice: a webhook delivery is at least once). `enqueue` commits with the
 *   caller's transaction, as durably as it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { recordJobAttemptFailed, recordJobFailed } from "./Metrics.js"

export interface EnqueueInput {
  readonly queue: string
  /** Jobs of one key are serialised (or capped, see `WorkerOptions.perKey`). */
  readonly key?: string | null | undefined
  /** Any JSON value; the handler decodes it with its Schema. */
  readonly payload: unknown
  /** Not before this instant (default: now). */
  readonly runAt?: Date | undefined
}

export interface Job {
  readonly id: string
  readonly queue: string
  readonly key: string | null
  readonly payload: unknown
  /** Attempts settled before this one (retries so far). */
  readonly attempts: number
  /** Fencing token of this claim: only its holder may extend, settle or release. */
  readonly claim: number
  readonly createdAt: Date
  /**
   * The `alongside` column of the claim call's row for this job (see `WorkerOptions.claimCall`), or none;
   * undefined when the claim was not such a call.
   */
  readonly alongside?: Option.Option<unknown> | undefined
}

/** How a job ended; `F`: the item of a carried write (`WorkerOptions.finish`), none by default. */
export type Outcome<F = never> =
  | { readonly _tag: "Done" }
  | { readonly _tag: "Retry"; readonly at: Date; readonly reason: string | null }
  | { readonly _tag: "Failed"; readonly reason: string }
  /** Done once `item` is written by the worker's next claim (see `WorkerOptions.finish`). */
  | { readonly _tag: "Finish"; readonly item: F }

export const Outcome = {
  done: { _tag: "Done" } as Outcome,
  retryAt: (at: Date, reason: string | null = null): Outcome => ({ _tag: "Retry", at, reason }),
  failed: (reason: string): Outcome => ({ _tag: "Failed", reason }),
  finish: <F>(item: F): Outcome<F> => ({ _tag: "Finish", item })
}

/** The final write of jobs that ended well, carried by the worker's next claim. */
export interface FinishOptions<F, R> {
  /**
   * The write of these items as one SQL expression (a function call doing it), evaluated before the claim that
   * carries it, in its statement and transaction, so it commits like the queue's bookkeeping (see Durability
   * above): what it records must be safe to do again.
   */
  readonly write: (items: ReadonlyArray<F>) => Statement.Fragment
  /** The same write on its own, where the store cannot carry it (memory). */
  readonly alone: (items: ReadonlyArray<F>) => Effect.Effect<void, unknown, R>
}

/** Jobs that ended well, and the write that records them, for the claim that settles them. */
export interface Carried {
  readonly jobs: ReadonlyArray<Job>
  /** Built only by a claim that is not a call (a claim call writes the items itself). */
  readonly write: () => Statement.Fragment
}

/** A claim as the queue's owner's own database function makes it (see `WorkerOptions.claimCall`). */
export interface ClaimCall<F> {
  readonly queue: string
  /** The claim's instant, and the end of the leases it takes. */
  readonly at: Date
  readonly until: Date
  /** Null: strict order per key. */
  readonly perKey: number | null
  readonly limit: number
  /** Whether it may commit without waiting for the WAL flush (false inside a caller's transaction). */
  readonly async: boolean
  /** Jobs that ended well: settled (each fenced by its claim) once `items` are written. */
  readonly ended: ReadonlyArray<Job>
  /** The items of those jobs, to write first. */
  readonly items: ReadonlyArray<F>
}

export interface ClaimOptions {
  readonly queue: string
  readonly limit: number
  readonly leaseMillis: number
  /** Absent: strict order per key. A number: at most that many in flight per key, unordered. */
  readonly perKey?: number | undefined
  /**
   * Where the store carries writes (`Primitives.carries`): written, and their jobs settled as done, in the
   * claim's statement before it claims.
   */
  readonly carried?: Carried | undefined
  /**
   * Where the store speaks SQL: the claim as this call (see `WorkerOptions.claimCall`), in place of `jobs_claim` /
   * `jobs_claim_after`; it writes the carried items itself (the worker closes over them). Other stores ignore it.
   */
  readonly call?: ((call: Omit<ClaimCall<never>, "items">) => Statement.Fragment) | undefined
}

export interface WorkerOptions<R, P = undefined, F = never> {
  readonly queue: string
  readonly concurrency: number
  /** Default 60 s; extended while the handler runs. */
  readonly leaseMillis?: number | undefined
  readonly perKey?: number | undefined
  /** Final writes carried by the next claim (see `Outcome.finish`). */
  readonly finish?: FinishOptions<F, R> | undefined
  /**
   * Where the store speaks SQL (PostgreSQL): the whole claim as one call of a database function of the queue's
   * owner, in place of `jobs_claim` / `jobs_claim_after` with `finish.write`. It writes `items`, settles `ended`
   * and claims as `jobs_claim_after` does, and returns the claimed jobs' rows: `id, queue, key, payload, attempts,
   * claims, created_at` of `jobs`, and `alongside`: JSON or null, what else it did for the job in the same call
   * (a lease of the job's own, say), which reaches it as `Job.alongside` (typically what `prepare` would otherwise
   * read). A PL/pgSQL function's statements are planned once per session; a claim sent as statement text is
   * parsed and planned at every claim. `finish.write` still serves the claim that writes what waits when the
   * worker stops. Other stores ignore it.
   */
  readonly claimCall?: ((call: ClaimCall<F>) => Statement.Fragment) | undefined
  /** Longest sleep between claims when nothing local wakes the worker (default 1 s). */
  readonly pollMillis?: number | undefined
  /**
   * Runs once per claim with the jobs it took, before their handlers start: what
   * they all need, in one statement rather than one each (a row and a lease per
   * job, say). Every handler of the claim gets its result; when it fails, every
   * handler of the claim fails with it (and is retried with backoff).
   */
  readonly prepare?: ((jobs: ReadonlyArray<Job>) => Effect.Effect<P, unknown, R>) | undefined
  /**
   * Attempts of a job whose handler fails or dies, the first included (default `defaultMaxAttempts`): such an
   * attempt before the last is retried after `retryBackoffMillis`, the last is given up (`onGiveUp`, then the job
   * is failed). Every settled attempt counts (`Job.attempts`), the retries the handler asked for itself too: a
   * queue whose handler retries on its own needs a bound above its own.
   */
  readonly maxAttempts?: number | undefined
  /**
   * A failed attempt that will be retried at `at` (`reason`: its short cause): shows it where people look (a
   * record's error and next attempt). A hook that dies is logged; the retry stands.
   */
  readonly onRetry?: ((job: Job, reason: string, at: Date) => Effect.Effect<void, never, R>) | undefined
  /**
   * The last attempt failed: records the failure where people see it (a record's status, an event), before the
   * job is settled failed. A hook that dies leaves the job to run again after the backoff.
   */
  readonly onGiveUp?: ((job: Job, reason: string) => Effect.Effect<void, never, R>) | undefined
  /** `prepared`: the result of `prepare` for this job's claim (undefined without one). */
  readonly handle: (job: Job, prepared: P) => Effect.Effect<Outcome<F>, unknown, R>
  /**
   * Runs when a claimed job is handed back on shutdown, just before its lease is released (another worker may
   * claim it at once): gives back what its claim took for it (its `alongside`, what `prepare` holds for it), also
   * when its handler never started or only ran part way. `prepared`: undefined when `prepare` did not end.
   */
  readonly handBack?: ((job: Job, prepared: P | undefined) => Effect.Effect<void, never, R>) | undefined
}

/** What each implementation provides; the worker and the probes are built on it. */
export interface Primitives {
  readonly enqueue: (input: EnqueueInput) => Effect.Effect<string>
  readonly claim: (options: ClaimOptions) => Effect.Effect<ReadonlyArray<Job>>
  /**
   * False when the claim is stale (the job was claimed again, or settled). A lapsed
   * lease nobody claimed since is still ours: a Clock that jumped (TestClock, a
   * paused VM) must not cost a running handler its job.
   */
  readonly extend: (job: Job, leaseMillis: number) => Effect.Effect<boolean>
  /** A `Finish` outcome is the worker's to carry: settled here it is done. */
  readonly settle: (job: Job, outcome: Outcome<unknown>) => Effect.Effect<void>
  readonly release: (job: Job) => Effect.Effect<void>
  /** Whether `claim` carries writes (`ClaimOptions.carried`); where not, the worker writes and settles them itself. */
  readonly carries: boolean
  /** When the earliest pending job may next be claimable (its run time or the end of its lease). */
  readonly nextDueAt: (queue: string) => Effect.Effect<Option.Option<number>>
  /** Makes every waiting job of `key` due now (e.g. its owner was re-enabled); returns how many. */
  readonly hurry: (queue: string, key: string) => Effect.Effect<number>
  /** Jobs claimable right now (same rules as `claim`). */
  readonly claimable: (options: Omit<ClaimOptions, "limit" | "leaseMillis">) => Effect.Effect<number>
}

export interface JobQueueShape extends Primitives {
  readonly worker: <R, P = undefined, F = never>(options: WorkerOptions<R, P, F>) => Effect.Effect<never, never, R>
  /** Wakes this process's workers of `queue`. */
  readonly wake: (queue: string) => Effect.Effect<void>
  readonly awaitIdle: (queue: string) => Effect.Effect<void>
}

export class JobQueue extends Context.Tag("Layers/JobQueue")<JobQueue, JobQueueShape>() {}

// After-commit hooks

/**
 * The hooks registered inside the nearest `withAfterCommit` (undefined: no boundary around this fiber). A
 * mutable list, not an immutable value: a registration appends without setting the FiberRef (each set copies
 * the fiber's FiberRefs and compares the old value with the new one), and a fiber forked inside the boundary
 * registers into the same list.
 */
const pendingHooks = FiberRef.unsafeMake<Array<Effect.Effect<void>> | undefined>(undefined)

/** Without a boundary, a hook registered inside a transaction runs this long later (the commit should be done by then). */
export const afterCommitGraceMillis = 1_000

/**
 * Runs `effect` once the current transaction has committed: at once when no
 * transaction is open; else registered on the fiber and run by the nearest
 * `withAfterCommit` around it; with no boundary, `afterCommitGraceMillis` later
 * on a fiber of its own (by the Clock).
 */
export const afterCommit = (effect: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.gen(function* () {
    const transaction = yield* Effect.serviceOption(SqlClient.TransactionConnection)
    if (Option.isNone(transaction)) return yield* effect
    const hooks = yield* FiberRef.get(pendingHooks)
    if (hooks !== undefined) return void hooks.push(effect)
    yield* Effect.forkDaemon(Effect.zipRight(Effect.sleep(afterCommitGraceMillis), effect))
  })

/**
 * The boundary of a unit of work (an HTTP request, a job handler): after `self`
 * (and so its transactions) is done, runs the hooks it registered, also when it
 * failed (a rolled-back hook only wakes a worker for nothing).
 */
export const withAfterCommit = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const hooks: Array<Effect.Effect<void>> = []
    return Effect.ensuring(
      self,
      Effect.suspend(() => (hooks.length === 0 ? Effect.void : Effect.all(hooks, { discard: true })))
    ).pipe(Effect.locally(pendingHooks, hooks))
  })

/**
 * `withAfterCommit` for a fiber that is itself the unit of work (the HTTP edge: the platform runs each request
 * in a fiber of its own), without fiber steps of its own: `fiberRef` set to `hooks` on that fiber (the edge
 * sets it with its other request values in one step; nothing restores it) is the boundary, and
 * `after(outcome)` runs `outcome`, then what was registered. An interrupted fiber runs none of them; what its
 * committed transactions enqueued then waits for the workers' next poll.
 */
export const afterCommitInFiber = () => {
  const hooks: Array<Effect.Effect<void>> = []
  return {
    fiberRef: pendingHooks,
    hooks,
    // most units register none: then the outcome passes straight through
    after: <A, E, R>(outcome: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      hooks.length === 0 ? outcome : Effect.ensuring(outcome, Effect.suspend(() => Effect.all(hooks, { discard: true })))
  } as const
}

// Supervision

/** Runs `work` forever: when it ends or fails it is logged and restarted with backoff. */
export const supervise = <E, R>(name: string, work: Effect.Effect<unknown, E, R>): Effect.Effect<never, never, R> =>
  work.pipe(
    Effect.matchCauseEffect({
      onFailure: (cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.interrupt : Effect.logError(`${name} failed; restarting`, cause),
      onSuccess: () => Effect.logWarning(`${name} stopped; restarting`)
    }),
    Effect.repeat(Schedule.exponential("1 second").pipe(Schedule.union(Schedule.spaced("1 minute")))),
    Effect.zipRight(Effect.never),
    Effect.annotateLogs("worker", name)
  )

// The worker and probes, over any implementation's primitives

const nowMillis = Clock.currentTimeMillis

const defaultLeaseMillis = 60_000

/** Attempts of a job whose handler keeps failing or dying, the first included (see `WorkerOptions.maxAttempts`). */
export const defaultMaxAttempts = 5

/**
 * The wait after a failed attempt, by the attempts settled before it: 5 s, 15 s, 45 s, 2 min 15 s, ..., at most 1 h.
 * Long enough that a database away for a minute does not use up a job's attempts.
 */
export const retryBackoffMillis = (attempts: number) => Math.min(5_000 * 3 ** attempts, 60 * 60_000)

const maxReasonLength = 200

const textOf = (value: unknown): string => {
  if (typeof value === "string") return value
  if (typeof value === "object" && value !== null) {
    const tag = "_tag" in value && typeof value._tag === "string" ? value._tag : value instanceof Error ? value.name : undefined
    const message = "message" in value && typeof value.message === "string" ? value.message : undefined
    if (tag !== undefined || message !== undefined) return [tag, message].filter((p) => p !== undefined && p !== "").join(": ")
  }
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/**
 * A failure in one short line, for `last_error` and the log: the first error's own text, or the defect's after
 * `died:` (`died: TypeError: x is not a function`); never a stack.
 */
export const shortCause = (cause: Cause.Cause<unknown>): string => {
  const text = Option.match(Cause.failureOption(cause), {
    onSome: textOf,
    onNone: () =>
      Option.match(Cause.dieOption(cause), {
        onSome: (defect) => `died: ${textOf(defect)}`,
        onNone: () => (Cause.isInterrupted(cause) ? "interrupted" : Cause.pretty(cause))
      })
  })
  const line = (text.split("\n")[0] ?? "").trim()
  return line.length > maxReasonLength ? `${line.slice(0, maxReasonLength - 1)}…` : line
}

/** Real time, not the Clock: the moment passes the same under a TestClock that nobody advances. */
const realSleep = (millis: number): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const handle = setTimeout(() => resume(Effect.void), millis)
    return Effect.sync(() => clearTimeout(handle))
  })

/** Most real time a claim pass waits for the jobs still running (milliseconds). */
const claimMomentMillis = 3

/** A job that ended well, its item waiting for the claim that writes it; `written` tells its job how that went. */
interface Carrying<F> {
  readonly job: Job
  readonly item: F
  readonly written: Deferred.Deferred<boolean>
}

const make = (primitives: Primitives) =>
  Effect.gen(function* () {
    const bells = new Map<string, Queue.Queue<void>>()
    const bell = (queue: string) =>
      Effect.suspend(() => {
        const existing = bells.get(queue)
        if (existing) return Effect.succeed(existing)
        // two fibers may create one at once: the first to register wins, so wake and worker share it
        return Effect.flatMap(Queue.sliding<void>(1), (created) =>
          Effect.sync(() => {
            const winner = bells.get(queue) ?? created
            bells.set(queue, winner)
            return winner
          })
        )
      })
    const wake = (queue: string) => Effect.flatMap(bell(queue), (b) => Effect.asVoid(Queue.offer(b, undefined)))

    // per queue: jobs in flight here, workers running here, and a tick bumped on every change (for awaitIdle)
    const inFlight = new Map<string, number>()
    const claiming = new Map<string, number>()
    const workers = new Map<string, number>()
    const perKeyOf = new Map<string, number | undefined>()
    let ticks = 0
    // the `awaitIdle` calls waiting for the next tick: a bump costs a count unless one waits
    const tickWaiters = new Set<() => void>()
    const bump = Effect.sync(() => {
      ticks++
      if (tickWaiters.size === 0) return
      const woken = [...tickWaiters]
      tickWaiters.clear()
      for (const resume of woken) resume()
    })
    const tickAfter = (seen: number) =>
      Effect.async<void>((resume) => {
        if (ticks > seen) return resume(Effect.void)
        const waiter = () => resume(Effect.void)
        tickWaiters.add(waiter)
        return Effect.sync(() => tickWaiters.delete(waiter))
      })
    const add = (map: Map<string, number>, queue: string, delta: number) =>
      Effect.sync(() => map.set(queue, (map.get(queue) ?? 0) + delta))

    const enqueue = (input: EnqueueInput) =>
      Effect.tap(primitives.enqueue(input), () => afterCommit(wake(input.queue)))

    /** Hands a claimed job back on shutdown: what its claim took for it first (`handBack`), then its lease. */
    const handBack = <R, P, F>(options: WorkerOptions<R, P, F>, job: Job, prepared: P | undefined) =>
      options.handBack === undefined
        ? primitives.release(job)
        : Effect.zipRight(options.handBack(job, prepared), primitives.release(job))

    /**
     * A handler (or its claim's `prepare`) that failed or died: one error line, counted, then retried after the
     * backoff, or, at the last attempt, given up (recorded by `onGiveUp` first) and settled failed.
     */
    const failedAttempt = <R, P, F>(options: WorkerOptions<R, P, F>, job: Job, cause: Cause.Cause<unknown>) =>
      Effect.gen(function* () {
        const reason = shortCause(cause)
        const attempt = job.attempts + 1
        const maxAttempts = options.maxAttempts ?? defaultMaxAttempts
        const last = attempt >= maxAttempts
        const retryAt = new Date((yield* nowMillis) + retryBackoffMillis(job.attempts))
        const fields = { job_id: job.id, queue: job.queue, key: job.key ?? "", attempt, max_attempts: maxAttempts }
        yield* recordJobAttemptFailed(job.queue)
        yield* Effect.logError(
          `job ${job.id} of ${job.queue} (key ${job.key ?? "none"}) failed, attempt ${attempt} of ${maxAttempts}: ${reason}; ` +
            (last ? "giving up" : `retrying at ${retryAt.toISOString()}`)
        ).pipe(Effect.annotateLogs(fields))
        // the whole cause (its stack) below the error level, for whoever debugs it
        yield* Effect.logDebug(`job ${job.id} of ${job.queue}: the failed attempt's cause`, cause)
        if (!last) {
          if (options.onRetry !== undefined) {
            const shown = yield* Effect.exit(options.onRetry(job, reason, retryAt))
            if (Exit.isFailure(shown)) {
              if (Cause.isInterruptedOnly(shown.cause)) return yield* Effect.interrupt
              yield* Effect.logWarning(`job ${job.id} of ${job.queue}: its retry could not be shown: ${shortCause(shown.cause)}`)
            }
          }
          return yield* primitives.settle(job, Outcome.retryAt(retryAt, reason))
        }
        if (options.onGiveUp !== undefined) {
          const recorded = yield* Effect.exit(options.onGiveUp(job, reason))
          if (Exit.isFailure(recorded)) {
            if (Cause.isInterruptedOnly(recorded.cause)) return yield* Effect.interrupt
            // not failed unseen: the job runs again after the backoff, and gives up again if it still fails
            yield* Effect.logError(
              `job ${job.id} of ${job.queue}: its failure could not be recorded (${shortCause(recorded.cause)}); ` +
                `running it again at ${retryAt.toISOString()}`
            ).pipe(Effect.annotateLogs(fields))
            return yield* primitives.settle(job, Outcome.retryAt(retryAt, reason))
          }
        }
        yield* primitives.settle(job, Outcome.failed(reason))
        yield* recordJobFailed(job.queue)
      })

    /**
     * A job's run: its handler, then its settle, or its item handed to `carry` (which answers once the item is
     * written); the worker's heartbeat interrupts it if its lease is lost. Entered uninterruptible (from the end of
     * its claim): the hand-back on interruption is in place before the run can be interrupted, also when that
     * happens before its handler starts.
     */
    const runOne = <R, P, F>(
      options: WorkerOptions<R, P, F>,
      job: Job,
      prepared: Exit.Exit<P, unknown>,
      carry: (job: Job, item: F) => Effect.Effect<boolean, never, R>,
      /** Whether the job was interrupted because another worker has it now: nothing of it is ours to hand back. */
      lost: () => boolean
    ) =>
      Effect.gen(function* () {
        const result = yield* Effect.exit(withAfterCommit(Effect.flatMap(prepared, (p) => options.handle(job, p))))
        if (result._tag === "Success") {
          const outcome = result.value
          if (outcome._tag === "Failed") yield* recordJobFailed(job.queue)
          if (outcome._tag !== "Finish") return yield* primitives.settle(job, outcome)
          if (options.finish === undefined) return yield* Effect.dieMessage("Outcome.finish needs WorkerOptions.finish")
          const item = outcome.item
          // its work is done: it waits for the record, interrupted or not (a worker restarting after the claim that
          // carried it failed, a shutdown), so it is never handed back with its work done and not recorded
          return yield* Effect.uninterruptible(
            Effect.gen(function* () {
              if (yield* carry(job, item)) return
              // not recorded: the job runs again when its lease would have lapsed
              const at = (yield* nowMillis) + (options.leaseMillis ?? defaultLeaseMillis)
              yield* primitives.settle(job, Outcome.retryAt(new Date(at), "its result could not be recorded"))
            })
          )
        }
        if (Cause.isInterruptedOnly(result.cause)) return yield* Effect.interrupt
        yield* failedAttempt(options, job, result.cause)
      }).pipe(
        Effect.interruptible,
        // on shutdown, hand the job back at once rather than after the lease
        Effect.onInterrupt(() =>
          lost() ? Effect.void : handBack(options, job, Exit.isSuccess(prepared) ? prepared.value : undefined)
        ),
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError(`job ${job.id} could not be settled`, cause)
        )
      )

    const loop = <R, P, F>(options: WorkerOptions<R, P, F>) =>
      Effect.scoped(
        Effect.gen(function* () {
          const leaseMillis = options.leaseMillis ?? defaultLeaseMillis
          const pollMillis = options.pollMillis ?? 1_000
          const running = yield* FiberSet.make<void, never>()
          const slotFreed = yield* Queue.sliding<void>(1)
          const rung = yield* bell(options.queue)
          yield* Effect.acquireRelease(
            Effect.zipRight(add(workers, options.queue, 1), Effect.sync(() => perKeyOf.set(options.queue, options.perKey))),
            () => add(workers, options.queue, -1)
          )
          // slots taken: jobs running, and ended jobs whose items wait in `carrying`
          let busy = 0
          // the items of jobs that ended well, for the next claim to write; `written`: jobs whose items a claim
          // wrote (that claim counted their slots as free, and their fibers end after it)
          const carrying: Array<Carrying<F>> = []
          const written = new Set<string>()
          // The "moment" before a claim pass: while jobs still run, wait for the last to end, at most
          // `claimMomentMillis`. Jobs that end close together then share one claim (one round trip, one commit)
          // instead of splitting into groups that take turns; a job that ends resolves `allEnded` when it was the last.
          let allEnded: Deferred.Deferred<void> | undefined
          const stillRunning = () => busy - carrying.length
          const jobEnded = () => {
            if (allEnded !== undefined && stillRunning() === 0) Deferred.unsafeDone(allEnded, Exit.void)
          }
          const moment = Effect.suspend(() => {
            if (stillRunning() === 0) return Effect.void
            const latch = Deferred.unsafeMake<void>(FiberId.none)
            allEnded = latch
            return Effect.ensuring(
              Effect.raceFirst(Deferred.await(latch), realSleep(claimMomentMillis)),
              Effect.sync(() => {
                allEnded = undefined
              })
            )
          })
          const itemArrived = yield* Queue.sliding<void>(1)
          // once the worker stops, a job that ends well writes its own item
          let closing = false
          // the jobs running here, for the heartbeat
          // `lost`: set by the heartbeat when another worker has the job (it is interrupted, not handed back)
          const held = new Map<string, { readonly job: Job; readonly fiber: Fiber.RuntimeFiber<void, never>; lost: boolean }>()
          const jobStarted = yield* Queue.sliding<void>(1)
          // One heartbeat for all of them (not a fiber and a timer per job): every third of the lease, each lease is
          // extended; a job whose lease was lost (another worker claimed it) is interrupted. With no job running it
          // waits for one, rather than beating through a Clock's jumps for nothing.
          yield* Effect.forkScoped(
            Effect.forever(
              Effect.gen(function* () {
                if (held.size === 0) yield* Queue.take(jobStarted)
                yield* Effect.sleep(Math.max(1, Math.floor(leaseMillis / 3)))
                for (const entry of [...held.values()]) {
                  // a failed write (database briefly away) is not a lost lease: try again next beat
                  const kept = yield* primitives.extend(entry.job, leaseMillis).pipe(
                    Effect.catchAllCause((cause) =>
                      Effect.as(Effect.logWarning(`job ${entry.job.id}: lease not extended`, cause), true)
                    )
                  )
                  if (!kept && held.get(entry.job.id) === entry) {
                    yield* Effect.logWarning(`job ${entry.job.id} lost its lease; another worker has it`)
                    entry.lost = true
                    yield* Fiber.interruptFork(entry.fiber)
                  }
                }
              })
            )
          )

          const answer = (items: ReadonlyArray<Carrying<F>>, ok: boolean) => {
            for (const c of items) Deferred.unsafeDone(c.written, Exit.succeed(ok))
          }
          const carriedBy = (items: ReadonlyArray<Carrying<F>>): Carried => ({
            jobs: items.map((c) => c.job),
            write: () => options.finish!.write(items.map((c) => c.item))
          })

          /** Writes items where the store cannot carry them, or once the worker stops: alone, then settles their jobs. */
          const writeAlone = (items: ReadonlyArray<Carrying<F>>) =>
            Effect.gen(function* () {
              const exit = yield* Effect.exit(
                options.finish!.alone(items.map((c) => c.item)).pipe(
                  Effect.zipRight(Effect.forEach(items, (c) => primitives.settle(c.job, Outcome.done), { discard: true }))
                )
              )
              if (Exit.isFailure(exit)) yield* Effect.logError(`jobs of ${options.queue}: results not recorded`, exit.cause)
              answer(items, Exit.isSuccess(exit))
            })

          // The worker stops: what waits is written now (a pass under way ends first: it is uninterruptible while it
          // carries items), and a job ending from here on writes its own (see `carry`). Registered after `running`,
          // so this runs before its jobs are interrupted.
          yield* Effect.addFinalizer(() =>
            Effect.suspend(() => {
              closing = true
              const items = carrying.splice(0)
              if (items.length === 0) return Effect.void
              if (!primitives.carries) return writeAlone(items)
              const claim = primitives.claim({ queue: options.queue, limit: 0, leaseMillis, carried: carriedBy(items) })
              return Effect.map(Effect.exit(claim), (exit) => answer(items, Exit.isSuccess(exit)))
            })
          )

          /** A job that ended well hands its item over; true once it is written. */
          const carry = (job: Job, item: F): Effect.Effect<boolean, never, R> =>
            Effect.flatMap(Deferred.make<boolean>(), (written) =>
              Effect.suspend(() => {
                const waiting = { job, item, written }
                if (closing) return Effect.zipRight(writeAlone([waiting]), Deferred.await(written))
                carrying.push(waiting)
                jobEnded()
                return Effect.zipRight(Queue.offer(itemArrived, undefined), Deferred.await(written))
              })
            )

          const start = (job: Job, prepared: Exit.Exit<P, unknown>) => {
            busy++
            return Effect.zipRight(
              add(inFlight, options.queue, 1),
              FiberSet.run(
                running,
                // started from the uninterruptible end of a claim, it stays so until `runOne` has its hand-back in place
                Effect.withFiberRuntime<void, never, R>((fiber) => {
                  const entry = { job, fiber, lost: false }
                  held.set(job.id, entry)
                  const lost = () => entry.lost
                  return Effect.zipRight(Queue.offer(jobStarted, undefined), runOne(options, job, prepared, carry, lost).pipe(
                    Effect.ensuring(
                      Effect.suspend(() => {
                        if (held.get(job.id) === entry) held.delete(job.id)
                        // a job whose item a claim wrote: that claim already counted its slot as free
                        if (written.delete(job.id)) return Effect.all([add(inFlight, options.queue, -1), bump], { discard: true })
                        busy--
                        jobEnded()
                        return Effect.all([add(inFlight, options.queue, -1), Queue.offer(slotFreed, undefined), bump], {
                          discard: true
                        })
                      })
                    )
                  ))
                })
              )
            )
          }
          while (true) {
            // the items ended jobs left: this pass writes them, and fills their slots
            const items = carrying.splice(0)
            const free = options.concurrency - busy + items.length
            const claimedAt = yield* nowMillis
            // from the claim until its jobs count as in flight, the queue is not idle: a job claimed but not yet
            // started is neither claimable nor in flight, and `awaitIdle` must not take that moment for idleness.
            // Interruption (shutdown) reaches the claim and `prepare`, never the moment between a claim and its
            // jobs' start: a claimed job is either running (and releases its lease when interrupted) or released
            // here. A claim that carries items runs to its end: their jobs wait for it.
            const claimAndStart = Effect.uninterruptibleMask((restore) =>
              Effect.gen(function* () {
                const carried = items.length > 0 && primitives.carries ? carriedBy(items) : undefined
                const slotsOf = (ok: boolean) => {
                  if (!ok) return
                  busy -= items.length
                  for (const c of items) written.add(c.job.id)
                }
                if (items.length > 0 && carried === undefined) {
                  yield* writeAlone(items)
                  slotsOf(true)
                }
                if (free === 0 && carried === undefined) return []
                const claim = primitives.claim({
                  queue: options.queue,
                  limit: free,
                  leaseMillis,
                  perKey: options.perKey,
                  carried,
                  call:
                    options.claimCall &&
                    ((call) => options.claimCall!({ ...call, items: carried === undefined ? [] : items.map((c) => c.item) }))
                })
                const exit = yield* Effect.exit(carried === undefined ? restore(claim) : claim)
                if (carried !== undefined) {
                  slotsOf(Exit.isSuccess(exit))
                  answer(items, Exit.isSuccess(exit))
                }
                const claimed = yield* exit
                if (claimed.length === 0) return claimed
                const prepared: Exit.Exit<P, unknown> =
                  options.prepare === undefined
                    ? Exit.succeed(undefined as P)
                    : yield* Effect.exit(restore(options.prepare(claimed)))
                if (Exit.isFailure(prepared) && Cause.isInterruptedOnly(prepared.cause)) {
                  yield* Effect.forEach(claimed, (job) => handBack(options, job, undefined), { discard: true })
                  return yield* Effect.interrupt
                }
                for (const job of claimed) yield* start(job, prepared)
                return claimed
              })
            )
            const jobs = yield* Effect.zipRight(
              add(claiming, options.queue, 1),
              Effect.ensuring(claimAndStart, add(claiming, options.queue, -1))
            )
            yield* bump
            if (free > 0 && jobs.length === free) continue
            // slots all busy, or jobs started: each one that ends wakes us for another pass, which looks at the due
            // times when it claims nothing; until then a wake-up, a freed slot, an ended job's item or the poll
            // (no query per pass)
            const wait =
              free === 0 || jobs.length > 0
                ? pollMillis
                : yield* Effect.gen(function* () {
                    const due = yield* primitives.nextDueAt(options.queue)
                    // read the clock right before sleeping: a clock that moved meanwhile must not push the wake-up later
                    const at = yield* nowMillis
                    return Option.match(due, {
                      onNone: () => pollMillis,
                      // due by the claim but not claimed (slots, caps or an earlier job of its key): a change wakes us
                      onSome: (d) => (d <= claimedAt ? pollMillis : Math.min(Math.max(0, d - at), pollMillis))
                    })
                  })
            // items that arrived during this pass are the next pass's at once
            if (carrying.length === 0) {
              yield* Effect.raceAll([Effect.sleep(wait), Queue.take(rung), Queue.take(slotFreed), Queue.take(itemArrived)])
            }
            // a moment for the jobs still running, so that one claim serves them all
            yield* moment
            // what ended so far is all seen by the next pass: its wake-ups are spent
            yield* Queue.takeAll(slotFreed)
            yield* Queue.takeAll(itemArrived)
          }
        })
      )

    const worker = <R, P = undefined, F = never>(options: WorkerOptions<R, P, F>): Effect.Effect<never, never, R> =>
      supervise(`queue:${options.queue}`, loop(options))

    const isIdle = (queue: string) =>
      Effect.gen(function* () {
        if ((inFlight.get(queue) ?? 0) > 0 || (claiming.get(queue) ?? 0) > 0) return false
        return (yield* primitives.claimable({ queue, perKey: perKeyOf.get(queue) })) === 0
      })

    const awaitIdle = (queue: string) =>
      Effect.gen(function* () {
        // a worker forked just now may not have started yet
        for (let i = 0; i < 1_000 && (workers.get(queue) ?? 0) === 0; i++) yield* Effect.yieldNow()
        if ((workers.get(queue) ?? 0) === 0) return yield* Effect.dieMessage(`awaitIdle: no worker runs queue ${queue}`)
        // bounded: each round waits for the worker to move (a claim pass or a settled job)
        for (let round = 0; round < 10_000; round++) {
          const seen = ticks
          if (yield* isIdle(queue)) return
          yield* wake(queue)
          yield* tickAfter(seen)
        }
        return yield* Effect.dieMessage(`awaitIdle: queue ${queue} never became idle`)
      })

    const hurry = (queue: string, key: string) =>
      Effect.tap(primitives.hurry(queue, key), (n) => (n > 0 ? afterCommit(wake(queue)) : Effect.void))

    return JobQueue.of({ ...primitives, enqueue, hurry, worker, wake, awaitIdle })
  })

/**
 * A JobQueue over any store's primitives (the worker, wake-ups and probes are
 * built on them): for a store of one's own, or to observe the worker in tests.
 */
export const fromPrimitives = (primitives: Primitives): Effect.Effect<JobQueueShape> => make(primitives)

// PostgreSQL / PGlite

const JobRow = Schema.Struct({
  id: Schema.String,
  queue: Schema.String,
  key: Schema.NullOr(Schema.String),
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
  payload: row.payload,
  attempts: row.attempts,
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

  const primitives: Primitives = {
    enqueue: (input) =>
      Effect.gen(function* () {
        const at = new Date(yield* nowMillis)
        const rows = yield* sql<{ id: string }>`
          insert into jobs ${sql.insert({
            queue: input.queue,
            key: input.key ?? null,
            payload: JSON.stringify(input.payload ?? null),
            status: "pending",
            run_at: input.runAt ?? at,
            created_at: at
          })} returning id`
        return String(rows[0]!.id)
      }).pipe(orDie),

    // One statement (`jobs_claim`, migration 0014): under the queue's advisory lock, which serialises claims of
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
        const carried = options.carried
        if (options.call !== undefined) {
          const call = options.call({
            queue: options.queue,
            at,
            until,
            perKey,
            limit: options.limit,
            async: Option.isNone(transaction),
            ended: carried?.jobs ?? []
          })
          const rows = yield* sql`select id, queue, key, payload, attempts, claims, created_at, alongside from ${call}`
          return (yield* decodeJobs(rows)).map(toJob).sort((a, b) => Number(a.id) - Number(b.id))
        }
        const claim = carried === undefined
          ? sql`
              select * from jobs_claim(${options.queue}, ${at}, ${until}, ${perKey}::integer, ${options.limit}::integer,
                ${Option.isNone(transaction)})`
          : sql`
              select * from jobs_claim_after((${carried.write()})::integer,
                ${carried.jobs.map((job) => job.id)}::bigint[], ${carried.jobs.map((job) => job.claim)}::integer[],
                ${options.queue}, ${at}, ${until}, ${perKey}::integer, ${options.limit}::integer, ${Option.isNone(transaction)})`
        const rows = yield* sql`select c.id, c.queue, c.key, c.payload, c.attempts, c.claims, c.created_at from (${claim}) c`
        return (yield* decodeJobs(rows)).map(toJob).sort((a, b) => Number(a.id) - Number(b.id))
      }).pipe(orDie),

    extend: (job, leaseMillis) =>
      Effect.gen(function* () {
        const at = yield* nowMillis
        const rows = yield* sql`
          update jobs set locked_until = ${new Date(at + leaseMillis)} from ${yield* asyncCommitRow}
          where id = ${job.id} and claims = ${job.claim} and status = 'pending'
          returning id`
        return rows.length === 1
      }).pipe(orDie),

    settle: (job, outcome) =>
      Effect.gen(function* () {
        const at = new Date(yield* nowMillis)
        switch (outcome._tag) {
          case "Done":
          case "Finish":
            yield* sql`delete from jobs using ${yield* asyncCommitRow} where id = ${job.id} and claims = ${job.claim}`
            return
          case "Retry":
            yield* sql`
              update jobs set run_at = case when hurried then ${at}::timestamptz else ${outcome.at}::timestamptz end,
                hurried = false, attempts = attempts + 1, locked_until = null, last_error = ${outcome.reason}
              from ${yield* asyncCommitRow}
              where id = ${job.id} and claims = ${job.claim} and status = 'pending'`
            return
          case "Failed":
            yield* sql`
              update jobs set status = 'failed', attempts = attempts + 1, locked_until = null,
                last_error = ${outcome.reason}, finished_at = ${at}
              from ${yield* asyncCommitRow}
              where id = ${job.id} and claims = ${job.claim} and status = 'pending'`
            return
        }
      }).pipe(orDie),

    carries: true,

    release: (job) =>
      Effect.flatMap(asyncCommitRow, (commit) =>
        sql`update jobs set locked_until = null from ${commit} where id = ${job.id} and claims = ${job.claim} and status = 'pending'`
      ).pipe(Effect.asVoid, orDie),

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
          select count(*) as n from jobs_claimable(${options.queue}, ${at}, ${options.perKey ?? null}::integer, null) c`
        const [row] = yield* Schema.decodeUnknown(Schema.Array(CountRow))(rows)
        return row?.n ?? 0
      }).pipe(orDie)
  }
  return yield* make(primitives)
})

/** On the `jobs` table (migration 0005), through whichever `SqlClient` is provided. */
export const layerPostgres: Layer.Layer<JobQueue, never, SqlClient.SqlClient> = Layer.effect(JobQueue, makePostgres)

// Memory

interface MemoryJob {
  readonly id: number
  readonly queue: string
  readonly key: string | null
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

  const claimableAt = (queue: string, at: number, perKey: number | undefined): Array<MemoryJob> => {
    const pending = [...jobs.values()].filter((j) => j.queue === queue && j.status === "pending")
    const free = (j: MemoryJob) => j.runAt <= at && (j.lockedUntil === null || j.lockedUntil <= at)
    if (perKey === undefined) {
      return pending.filter(
        (j) => free(j) && (j.key === null || !pending.some((e) => e.key === j.key && e.id < j.id))
      )
    }
    const busy = new Map<string, number>()
    for (const j of pending) {
      if (j.key !== null && j.lockedUntil !== null && j.lockedUntil > at) busy.set(j.key, (busy.get(j.key) ?? 0) + 1)
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
    claim: (options) =>
      Effect.map(nowMillis, (at) =>
        claimableAt(options.queue, at, options.perKey)
          .sort((a, b) => a.runAt - b.runAt || a.id - b.id)
          .slice(0, options.limit)
          .map((j) => {
            j.lockedUntil = at + options.leaseMillis
            j.claims++
            return toPublic(j)
          })
          .sort((a, b) => Number(a.id) - Number(b.id))
      ),
    extend: (job, leaseMillis) =>
      Effect.map(nowMillis, (at) => {
        const j = held(job)
        if (j === undefined) return false
        j.lockedUntil = at + leaseMillis
        return true
      }),
    settle: (job, outcome) =>
      Effect.map(nowMillis, (at) => {
        const j = held(job)
        if (j === undefined) return
        if (outcome._tag === "Done" || outcome._tag === "Finish") {
          jobs.delete(j.id)
          return
        }
        j.attempts++
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
        if (j !== undefined) j.lockedUntil = null
      }),
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
    claimable: (options) => Effect.map(nowMillis, (at) => claimableAt(options.queue, at, options.perKey).length)
  }
  return yield* make(primitives)
})

/** In process memory: the same behaviour, no database, nothing durable. */
export const layerMemory: Layer.Layer<JobQueue> = Layer.effect(JobQueue, makeMemory)

/** Forks `worker` for the life of the layer. */
export const layerWorker = <R, P = undefined, F = never>(
  options: WorkerOptions<R, P, F>
): Layer.Layer<never, never, JobQueue | R> =>
  Layer.scopedDiscard(Effect.flatMap(JobQueue, (queue) => Effect.forkScoped(queue.worker(options))))
