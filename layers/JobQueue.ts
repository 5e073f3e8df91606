/**
 * JobQueue: durable background work with leases, by the Clock. This file is
 * the service (its tag, interface and options) and what its users call around
 * it. Stores: `jobqueue/Postgres.ts` (`layerPostgres`: the `jobs` table, on
 * PostgreSQL and PGlite alike) and `jobqueue/Memory.ts` (`layerMemory`, for
 * tests of programs); both build the service with `jobqueue/Worker.ts` (the
 * worker and probes over a store's `Primitives`) and pass one behaviour suite
 * (`test/queue/jobqueue.test.ts`).
 *
 * - `enqueue({ queue, key?, payload, runAt? })` -> job id. Call it inside the
 *   transaction of the change that causes the work: the job exists exactly when
 *   that change committed. Inside a transaction it also registers an after-commit
 *   wake-up (see `withAfterCommit`); outside one it wakes local workers at once.
 *   `enqueueAll(inputs)`: the same for many jobs at once (a batch of sources),
 *   one statement rather than one a job.
 * - `worker({ queue, concurrency, leaseMillis?, perKey?, perGroup?, pollMillis?, handle })`:
 *   an effect that never ends: it claims while slots are free, runs `handle(job)`
 *   and settles the job by the returned `Outcome` (`done`, `retryAt(instant)`,
 *   `failed(reason)`, or `finish(item)`: a write carried by its next claim).
 *   Leases, wake-ups, failures and shutdown: `jobqueue/Worker.ts`.
 * - Attempts: each claim begins one and counts it (`Job.attempts`), so an
 *   attempt that kills its process, and so never settles, counts like one that
 *   fails; a claim handed back on shutdown gives its count back. A job claimed
 *   past its queue's `maxAttempts` is not run: it is given up (`onGiveUp`, then
 *   settled failed), so no job loops on the processes it kills.
 * - Keys: jobs with the same `key` run strictly one at a time in creation order
 *   (across processes too), unless the worker sets `perKey: n`: then at most n of
 *   a key are in flight, in no particular order. A job whose retry waits keeps
 *   later jobs of its key (serial mode) waiting behind it. Creation order is the
 *   order of `enqueue` calls (the id sequence), not of commits.
 * - Groups: a job may name its `group` (the workspace that owns it). A worker that
 *   sets `perGroup: n` claims no job whose group already has n jobs of the queue in
 *   flight (leased now, across processes), so the jobs of other groups are claimed
 *   instead: one group's slow jobs hold at most n slots. Jobs without a group are
 *   not capped. Key rules hold as well (a job must pass both).
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
 *   `afterCommitGraceMillis`), `layerWorker(options)`; restarts with backoff
 *   are `Supervise.ts`'s.
 * - The payload is stored as JSON text; handlers decode it with their Schema.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Statement from "@effect/sql/Statement"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
export interface EnqueueInput {
  readonly queue: string
  /** Jobs of one key are serialised (or capped, see `WorkerOptions.perKey`). */
  readonly key?: string | null | undefined
  /** Who the job is for (a workspace): capped per group by `WorkerOptions.perGroup`; none: not capped. */
  readonly group?: string | null | undefined
  /** Any JSON value; the handler decodes it with its Schema. */
  readonly payload: unknown
  /** Not before this instant (default: now). */
  readonly runAt?: Date | undefined
}

export interface Job {
  readonly id: string
  readonly queue: string
  readonly key: string | null
  readonly group: string | null
  readonly payload: unknown
  /**
   * Attempts begun before this one: each claim begins one (those that failed, asked for a retry, or stopped their
   * worker before they ended, its process killed, say); a claim handed back on shutdown is none.
   */
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
   * in `jobqueue/Postgres.ts`): what it records must be safe to do again.
   */
  readonly write: (items: ReadonlyArray<F>) => Statement.Fragment
  /** The same write on its own, where the store cannot carry it (memory). */
  readonly alone: (items: ReadonlyArray<F>) => Effect.Effect<void, unknown, R>
}

/**
 * `finish` for a worker whose handlers record their work themselves: a job that ended well
 * (`Outcome.finish(null)`) is settled by the worker's next claim, in that claim's statement, instead of a
 * statement of its own. The claim carries nothing else.
 */
export const settleByNextClaim: FinishOptions<null, never> = {
  write: () => Statement.unsafeFragment("0"),
  alone: () => Effect.void
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
  /** Null: no cap per group. */
  readonly perGroup: number | null
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
  /** Absent: no cap per group. A number: no job claimed whose group has that many in flight (jobs without one: no cap). */
  readonly perGroup?: number | undefined
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
  /** At most this many jobs of one group (`EnqueueInput.group`) in flight, across processes (see Groups above). */
  readonly perGroup?: number | undefined
  /** Final writes carried by the next claim (see `Outcome.finish`). */
  readonly finish?: FinishOptions<F, R> | undefined
  /**
   * Where the store speaks SQL (PostgreSQL): the whole claim as one call of a database function of the queue's
   * owner, in place of `jobs_claim` / `jobs_claim_after` with `finish.write`. It writes `items`, settles `ended`
   * and claims as `jobs_claim_after` does, and returns the claimed jobs' rows: `id, queue, key, group_key, payload,
   * attempts, claims, created_at` of `jobs`, and `alongside`: JSON or null, what else it did for the job in the same call
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
   * Attempts of a job, the first included (default `defaultMaxAttempts`). A failed or dead attempt before the last
   * is retried after `retryBackoffMillis`; at the last it is given up (`onGiveUp`, then the job is failed), and so
   * is a retry the handler asks for at the last. Every claim counts (`Job.attempts`): the retries the handler
   * asked for itself (a queue whose handler retries on its own needs a bound above its own), and attempts that
   * stopped their worker before they ended (its process killed): the claim past the last attempt runs no handler
   * and gives the job up (`onGiveUp` with `how` "stopped").
   */
  readonly maxAttempts?: number | undefined
  /**
   * A failed attempt that will be retried at `at` (`reason`: its short cause): shows it where people look (a
   * record's error and next attempt). A hook that dies is logged; the retry stands.
   */
  readonly onRetry?: ((job: Job, reason: string, at: Date) => Effect.Effect<void, never, R>) | undefined
  /**
   * The job is given up: records the failure where people see it (a record's status, an event), in one
   * transaction with the job's failed settle (where the store has transactions). `how`: "failed" when its last
   * attempt failed, died or asked for another (`reason`: its short cause); "stopped" when its attempts were used
   * up by attempts that stopped their worker before they ended (its process killed, its lease lost), found by the
   * claim after the last (`reason`: `stoppedReason`), its handler not run. A hook that fails or dies rolls back
   * and leaves the job to try again after the backoff, without counting that claim: the last attempt runs again
   * ("failed"), or the give-up is tried again ("stopped").
   */
  readonly onGiveUp?: ((job: Job, reason: string, how: GiveUpHow) => Effect.Effect<void, never, R>) | undefined
  /** `prepared`: the result of `prepare` for this job's claim (undefined without one). */
  readonly handle: (job: Job, prepared: P) => Effect.Effect<Outcome<F>, unknown, R>
  /**
   * Runs when a claimed job is handed back on shutdown, just before its lease is released (another worker may
   * claim it at once), and when a job claimed past its last attempt is given up without running: gives back what
   * its claim took for it (its `alongside`, what `prepare` holds for it), also when its handler never started or
   * only ran part way. `prepared`: undefined when `prepare` did not end.
   */
  readonly handBack?: ((job: Job, prepared: P | undefined) => Effect.Effect<void, never, R>) | undefined
}

/** How a job came to be given up (see `WorkerOptions.onGiveUp`). */
export type GiveUpHow = "failed" | "stopped"

/** The `last_error` of a job whose attempts stopped their worker before they ended (`onGiveUp` with "stopped"). */
export const stoppedReason = "its last attempt stopped its worker before it ended"

export interface SettleOptions {
  /**
   * This claim was no attempt: the job's count of attempts goes back to what it was before the claim (a job
   * claimed past its last attempt and given up unrun, or a give-up that could not be recorded).
   */
  readonly uncounted?: boolean | undefined
}

/** What each implementation provides; the worker and the probes are built on it. */
export interface Primitives {
  readonly enqueue: (input: EnqueueInput) => Effect.Effect<string>
  /** Jobs enqueued together, in one statement where the store speaks SQL: their ids, in the inputs' order. */
  readonly enqueueAll: (inputs: ReadonlyArray<EnqueueInput>) => Effect.Effect<ReadonlyArray<string>>
  readonly claim: (options: ClaimOptions) => Effect.Effect<ReadonlyArray<Job>>
  /**
   * False when the claim is stale (the job was claimed again, or settled). A lapsed
   * lease nobody claimed since is still ours: a Clock that jumped (TestClock, a
   * paused VM) must not cost a running handler its job. A job settled for a retry
   * or released keeps its claim count, and is no longer leased: a heartbeat that
   * read it as held just before must not lease it again (it would wait out a lease
   * nobody holds).
   */
  readonly extend: (job: Job, leaseMillis: number) => Effect.Effect<boolean>
  /** A `Finish` outcome is the worker's to carry: settled here it is done. The claim counted the attempt. */
  readonly settle: (job: Job, outcome: Outcome<unknown>, options?: SettleOptions) => Effect.Effect<void>
  /** Hands the claim back unrun (shutdown): its lease, and its count of an attempt. */
  readonly release: (job: Job) => Effect.Effect<void>
  /**
   * `self` in one transaction where the store has them (a give-up and its owner's record commit together); as it
   * is elsewhere.
   */
  readonly transaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
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

// Retries of failed attempts

/** Attempts of a job, the first included (see `WorkerOptions.maxAttempts`). */
export const defaultMaxAttempts = 5

/**
 * The wait after a failed attempt, by the attempts begun before it: 5 s, 15 s, 45 s, 2 min 15 s, ..., at most 1 h.
 * Long enough that a database away for a minute does not use up a job's attempts.
 */
export const retryBackoffMillis = (attempts: number) => Math.min(5_000 * 3 ** attempts, 60 * 60_000)

/** Forks `worker` for the life of the layer. */
export const layerWorker = <R, P = undefined, F = never>(
  options: WorkerOptions<R, P, F>
): Layer.Layer<never, never, JobQueue | R> =>
  Layer.scopedDiscard(Effect.flatMap(JobQueue, (queue) => Effect.forkScoped(queue.worker(options))))
