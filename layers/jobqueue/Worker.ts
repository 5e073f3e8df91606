/**
 * The worker and probes of a JobQueue, built over any store's `Primitives`
 * (`fromPrimitives`: how `Postgres.ts` and `Memory.ts` make the service).
 *
 * - The worker claims while slots are free, runs `handle(job)` in its own
 *   fiber and settles the job by the returned `Outcome`; a handler that fails
 *   or dies is an attempt like any other (see Failures below). While a
 *   handler runs, its lease is extended every third of `leaseMillis`; a handler
 *   that loses its lease is interrupted. On interruption (shutdown) the lease is
 *   released with the attempt's count, so another process takes the job at once (first `handBack` gives
 *   back what its claim took for it, also for a job whose handler never
 *   started); a crashed process's leases lapse and its jobs are claimed again.
 * - Between claims it sleeps until the next due job, a local wake-up, a freed
 *   slot, an ended job's item, or `pollMillis` (other processes' jobs). It
 *   claims for every free slot in one claim: woken while jobs run, it first
 *   waits for the others to end, at most 3 ms of real time (a timer of its own,
 *   not the Clock), so that their slots share one claim. A pass that started
 *   jobs does not read `nextDueAt`: the end of one of them brings the next pass
 *   (so a job falling due later while all of them still run waits for that, or
 *   at most `pollMillis`). It is supervised: it restarts with backoff and logs.
 * - The database away (a dropped connection, PostgreSQL restarting): a claim or
 *   due-time read, a beat's lease extensions, and a job's settle (or give-up)
 *   that fail are tried again after a backoff by the Clock (100 ms doubling to
 *   5 s, from the first again after a success; `Outage.ts`), logged once when
 *   they begin failing and once when they succeed again. The jobs running go on:
 *   a failed claim ends no loop, so no scope interrupts them. A claim that lost
 *   its connection while carrying ended jobs' writes leaves them for the next
 *   claim (their jobs keep their slots and leases), and a settle is tried again
 *   (up to `settleRetryMillis`), so a job whose work is done is recorded once
 *   rather than run again after its lease. A claim whose answer was lost after
 *   it committed took jobs nobody runs: their lease lapses and they are claimed
 *   again (that claim counted an attempt); none ran, so none runs twice.
 * - Carried writes (`WorkerOptions.finish`): a handler whose job ends well
 *   returns `Outcome.finish(item)` instead of writing its result itself; the
 *   worker's next claim carries the items of every job that ended meanwhile
 *   (on PostgreSQL in the claim's own statement, see `Postgres.ts`). Where the
 *   store cannot carry a write (memory) the worker runs `finish.alone` and
 *   settles the jobs itself. The handler's job ends when its item is written,
 *   also on shutdown (the worker writes what it holds before it stops), so a
 *   job is never handed back with its work done but not recorded.
 * - Failed attempts, retries and give-ups: `Failures.ts`; the leases' heartbeat: `Heartbeat.ts`.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import {
  afterCommit,
  defaultMaxAttempts,
  type EnqueueInput,
  type Job,
  JobQueue,
  type JobQueueShape,
  Outcome,
  type Primitives,
  withAfterCommit,
  type WorkerOptions
} from "../JobQueue.js"
import { supervise } from "../Supervise.js"
import { recordJobFailed } from "./Metrics.js"
import { type Held, heartbeat } from "./Heartbeat.js"
import { isConnectionLost, makeBackoff, makeOutage, outageReason } from "./Outage.js"
import { makeFailures } from "./Failures.js"
import { makeSlots, type Slots } from "./Slots.js"

const nowMillis = Clock.currentTimeMillis

const defaultLeaseMillis = 60_000

/**
 * `JobQueue.<name>` span with the queue's name, only while tracing is on (a trace then tells one queue's claims and
 * settles from another's; scripts/bench/knowledge.ts sums the ingestion queue's): the claim is a hot path, and a
 * disabled tracer's no-op span still costs a context copy per call.
 */
const queueSpan =
  (name: "claim" | "settle", queue: string) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime((fiber) =>
      fiber.getFiberRef(FiberRef.currentTracerEnabled)
        ? Effect.withSpan(self, `JobQueue.${name}`, { attributes: { queue }, captureStackTrace: false })
        : self
    )

/** One worker of a queue, as its claim passes and its jobs' fibers see it. */
interface WorkerRun<R, P, F> {
  readonly options: WorkerOptions<R, P, F>
  readonly leaseMillis: number
  readonly slots: Slots<F, R>
  /** The jobs' fibers. */
  readonly running: FiberSet.FiberSet<void, never>
  /** The jobs running here, for the heartbeat. */
  readonly held: Map<string, Held>
  /** Rung when a job's slot frees (the sleeping worker's wake-up). */
  readonly slotFreed: Queue.Queue<void>
  /** Rung when a job starts (the idle heartbeat's wake-up). */
  readonly jobStarted: Queue.Queue<void>
}

/**
 * How long a claim pass that took `took` jobs of `free` slots sleeps before the next: with slots all busy or jobs
 * started, until one of them ends (or the poll); else until the next due job, read from the store. A job due by
 * the claim but not claimed (slots, caps or an earlier job of its key) waits for a change, not a spin.
 */
const nextWait = (primitives: Primitives, queue: string, free: number, took: number, claimedAt: number, pollMillis: number) =>
  free === 0 || took > 0
    ? Effect.succeed(pollMillis)
    : Effect.gen(function* () {
        const due = yield* primitives.nextDueAt(queue)
        // read the clock right before sleeping: a clock that moved meanwhile must not push the wake-up later
        const at = yield* nowMillis
        return Option.match(due, {
          onNone: () => pollMillis,
          onSome: (d) => (d <= claimedAt ? pollMillis : Math.min(Math.max(0, d - at), pollMillis))
        })
      })

/** Each queue's earliest `runAt` among the inputs (undefined: one of them is due now). */
const earliestByQueue = (inputs: ReadonlyArray<EnqueueInput>) => {
  const earliest = new Map<string, Date | undefined>()
  for (const { queue, runAt } of inputs) {
    const seen = earliest.get(queue)
    if (!earliest.has(queue) || (seen !== undefined && (runAt === undefined || runAt < seen))) earliest.set(queue, runAt)
  }
  return earliest
}

const make = (primitives: Primitives) =>
  Effect.sync(() => {
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
    // per queue: until when (Clock millis) a worker of this process sleeps between passes, while it sleeps
    const sleepingUntil = new Map<string, number>()
    /**
     * A job due at or after the sleeping worker's own wake-up needs no wake-up: that pass reads the due times
     * again. So enqueuing a job due later (a conversation's idle timeout) costs no claim pass.
     */
    const wakeFor = (queue: string, runAt: Date | undefined) =>
      Effect.suspend(() => {
        const until = sleepingUntil.get(queue)
        return runAt !== undefined && until !== undefined && runAt.getTime() >= until ? Effect.void : wake(queue)
      })

    // per queue: jobs in flight here, workers running here, and a tick bumped on every change (for awaitIdle)
    const inFlight = new Map<string, number>()
    const claiming = new Map<string, number>()
    // per queue: claims that took jobs, for `awaitIdle`
    const claimsTaking = new Map<string, number>()
    const workers = new Map<string, number>()
    const capsOf = new Map<string, { readonly perKey: number | undefined; readonly perGroup: number | undefined }>()
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
    const { settling, failedAttempt, giveUp, exhausted } = makeFailures(primitives)
    const add = (map: Map<string, number>, queue: string, delta: number) =>
      Effect.sync(() => map.set(queue, (map.get(queue) ?? 0) + delta))

    const enqueue = (input: EnqueueInput) =>
      Effect.tap(primitives.enqueue(input), () => afterCommit(wakeFor(input.queue, input.runAt)))

    /** One wake-up per queue, for its earliest job. */
    const enqueueAll = (inputs: ReadonlyArray<EnqueueInput>) =>
      Effect.tap(primitives.enqueueAll(inputs), () =>
        afterCommit(Effect.forEach(earliestByQueue(inputs), ([queue, runAt]) => wakeFor(queue, runAt), { discard: true }))
      )

    /** Hands a claimed job back on shutdown: what its claim took for it first (`handBack`), then its lease. */
    const handBack = <R, P, F>(options: WorkerOptions<R, P, F>, job: Job, prepared: P | undefined) =>
      options.handBack === undefined
        ? primitives.release(job)
        : Effect.zipRight(options.handBack(job, prepared), primitives.release(job))

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
        const maxAttempts = options.maxAttempts ?? defaultMaxAttempts
        if (job.attempts >= maxAttempts) return yield* exhausted(options, job, Exit.isSuccess(prepared) ? prepared.value : undefined)
        const result = yield* Effect.exit(withAfterCommit(Effect.flatMap(prepared, (p) => options.handle(job, p))))
        if (result._tag === "Success") {
          const outcome = result.value
          // a retry asked for at the last attempt would be claimed past it: it ends here, with its own reason
          if (outcome._tag === "Retry" && job.attempts + 1 >= maxAttempts) {
            return yield* giveUp(options, job, outcome.reason ?? "it asked for another attempt at its last", "failed")
          }
          if (outcome._tag === "Failed") yield* recordJobFailed(job.queue)
          if (outcome._tag !== "Finish") return yield* settling(job, queueSpan("settle", job.queue)(primitives.settle(job, outcome)))
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

    /**
     * A job's fiber in the worker's set: it holds a slot and is in the heartbeat's `held` from its start to its
     * end; a slot a claim did not already count free (`Slots.release`) wakes the worker.
     */
    const start = <R, P, F>(worker: WorkerRun<R, P, F>, job: Job, prepared: Exit.Exit<P, unknown>) => {
      const { held, jobStarted, options, running, slotFreed, slots } = worker
      slots.take()
      return Effect.zipRight(
        add(inFlight, options.queue, 1),
        FiberSet.run(
          running,
          // started from the uninterruptible end of a claim, it stays so until `runOne` has its hand-back in place
          Effect.withFiberRuntime<void, never, R>((fiber) => {
            const entry = { job, fiber, lost: false }
            held.set(job.id, entry)
            const ended = Effect.suspend(() => {
              if (held.get(job.id) === entry) held.delete(job.id)
              const wakes = slots.release(job.id) ? [Queue.offer(slotFreed, undefined)] : []
              return Effect.all([add(inFlight, options.queue, -1), ...wakes, bump], { discard: true })
            })
            return Effect.zipRight(
              Queue.offer(jobStarted, undefined),
              Effect.ensuring(runOne(options, job, prepared, slots.carry, () => entry.lost), ended)
            )
          })
        )
      )
    }

    /**
     * One claim pass: the items of jobs that ended are written (carried by the claim where the store can), and
     * the free slots are claimed and their jobs started. From the claim until its jobs count as in flight the
     * queue is not idle: a job claimed but not yet started is neither claimable nor in flight, and `awaitIdle`
     * must not take that moment for idleness. Interruption (shutdown) reaches the claim and `prepare`, never the
     * moment between a claim and its jobs' start: a claimed job is either running (and releases its lease when
     * interrupted) or released here. A claim that carries items runs to its end: their jobs wait for it.
     */
    const claimPass = <R, P, F>(worker: WorkerRun<R, P, F>) => {
      const { leaseMillis, options, slots } = worker
      return Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          // the items ended jobs left: this pass writes them, and fills their slots
          const { free, items } = slots.forPass()
          const carried = items.length > 0 && primitives.carries ? slots.carriedBy(items) : undefined
          if (items.length > 0 && carried === undefined) {
            yield* slots.writeAlone(items)
            slots.freed(items)
          }
          if (free === 0 && carried === undefined) return { free, claimed: [] }
          const claim = primitives.claim({
            queue: options.queue,
            limit: free,
            leaseMillis,
            perKey: options.perKey,
            perGroup: options.perGroup,
            carried,
            call:
              options.claimCall &&
              ((call) => options.claimCall!({ ...call, items: carried === undefined ? [] : items.map((c) => c.item) }))
          }).pipe(queueSpan("claim", options.queue))
          const exit = yield* Effect.exit(carried === undefined ? restore(claim) : claim)
          if (carried !== undefined) {
            if (Exit.isSuccess(exit)) slots.freed(items)
            // the database away, not the write: the next claim (after the backoff) carries them again, their jobs
            // keeping their slots and leases meanwhile, so work done is recorded once rather than done again
            if (Exit.isFailure(exit) && isConnectionLost(exit.cause)) slots.carryAgain(items)
            else slots.answer(items, Exit.isSuccess(exit))
          }
          const claimed = yield* exit
          if (claimed.length === 0) return { free, claimed }
          yield* add(claimsTaking, options.queue, 1)
          const prepared: Exit.Exit<P, unknown> =
            options.prepare === undefined ? Exit.succeed(undefined as P) : yield* Effect.exit(restore(options.prepare(claimed)))
          if (Exit.isFailure(prepared) && Cause.isInterruptedOnly(prepared.cause)) {
            yield* Effect.forEach(claimed, (job) => handBack(options, job, undefined), { discard: true })
            return yield* Effect.interrupt
          }
          for (const job of claimed) yield* start(worker, job, prepared)
          return { free, claimed }
        })
      ).pipe(
        // counted while it runs, for `awaitIdle`
        (pass) => Effect.zipRight(add(claiming, options.queue, 1), Effect.ensuring(pass, add(claiming, options.queue, -1)))
      )
    }

    const loop = <R, P, F>(options: WorkerOptions<R, P, F>) =>
      Effect.scoped(
        Effect.gen(function* () {
          const leaseMillis = options.leaseMillis ?? defaultLeaseMillis
          const pollMillis = options.pollMillis ?? 1_000
          const running = yield* FiberSet.make<void, never>()
          // made after `running`: its finalizer writes what waits before the jobs are interrupted
          const slots = yield* makeSlots<F, R>(primitives, {
            queue: options.queue,
            concurrency: options.concurrency,
            leaseMillis,
            finish: options.finish
          })
          const rung = yield* bell(options.queue)
          yield* Effect.acquireRelease(
            Effect.zipRight(add(workers, options.queue, 1), Effect.sync(() => capsOf.set(options.queue, { perKey: options.perKey, perGroup: options.perGroup }))),
            () => add(workers, options.queue, -1)
          )
          const worker: WorkerRun<R, P, F> = {
            options,
            leaseMillis,
            slots,
            running,
            held: new Map(),
            slotFreed: yield* Queue.sliding<void>(1),
            jobStarted: yield* Queue.sliding<void>(1)
          }
          const { held, jobStarted, slotFreed } = worker
          const annotations = { queue: options.queue }
          const leases = makeOutage(`lease extensions of queue ${options.queue}`, annotations)
          yield* Effect.forkScoped(heartbeat(primitives, held, jobStarted, leaseMillis, leases))

          // a claim (or due-time read) that fails is tried again after the backoff; the jobs running go on
          const claims = makeOutage(`claims of queue ${options.queue}`, annotations)
          const backoff = makeBackoff()
          const failed = (cause: Cause.Cause<unknown>) =>
            Cause.isInterruptedOnly(cause)
              ? Effect.failCause(cause)
              : Effect.zipRight(claims.failed(cause, outageReason(cause)), Effect.sleep(backoff.next()))

          while (true) {
            const claimedAt = yield* nowMillis
            const pass = yield* Effect.exit(claimPass(worker))
            yield* bump
            if (Exit.isFailure(pass)) {
              yield* failed(pass.cause)
              continue
            }
            const { claimed, free } = pass.value
            if (free > 0 && claimed.length === free) {
              backoff.reset()
              yield* claims.succeeded
              continue
            }
            // until a wake-up, a freed slot, an ended job's item, or the wait (no query per pass while jobs run)
            const waited = yield* Effect.exit(nextWait(primitives, options.queue, free, claimed.length, claimedAt, pollMillis))
            if (Exit.isFailure(waited)) {
              yield* failed(waited.cause)
              continue
            }
            backoff.reset()
            yield* claims.succeeded
            const wait = waited.value
            // items that arrived during this pass are the next pass's at once
            if (!slots.waiting()) {
              sleepingUntil.set(options.queue, (yield* nowMillis) + wait)
              yield* Effect.raceAll([
                Effect.sleep(wait),
                Queue.take(rung),
                Queue.take(slotFreed),
                Queue.take(slots.itemArrived)
              ]).pipe(Effect.ensuring(Effect.sync(() => sleepingUntil.delete(options.queue))))
            }
            // a moment for the jobs still running, so that one claim serves them all
            yield* slots.moment
            // what ended so far is all seen by the next pass: its wake-ups are spent
            yield* Queue.takeAll(slotFreed)
            yield* Queue.takeAll(slots.itemArrived)
          }
        })
      )

    const worker = <R, P = undefined, F = never>(options: WorkerOptions<R, P, F>): Effect.Effect<never, never, R> =>
      supervise(`queue:${options.queue}`, loop(options))

    const isIdle = (queue: string) =>
      Effect.gen(function* () {
        if ((inFlight.get(queue) ?? 0) > 0 || (claiming.get(queue) ?? 0) > 0) return false
        const taken = claimsTaking.get(queue) ?? 0
        if ((yield* primitives.claimable({ queue, ...capsOf.get(queue) })) > 0) return false
        // a claim pass that ran while the query did (on another connection) may have taken what it would have
        // counted: its end tells (a pass bumps the tick once it has started what it took)
        while ((claiming.get(queue) ?? 0) > 0) yield* tickAfter(ticks)
        return (inFlight.get(queue) ?? 0) === 0 && (claimsTaking.get(queue) ?? 0) === taken
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

    return JobQueue.of({ ...primitives, enqueue, enqueueAll, hurry, worker, wake, awaitIdle })
  })

/**
 * A JobQueue over any store's primitives (the worker, wake-ups and probes are
 * built on them): for a store of one's own, or to observe the worker in tests.
 */
export const fromPrimitives = (primitives: Primitives): Effect.Effect<JobQueueShape> => make(primitives)
