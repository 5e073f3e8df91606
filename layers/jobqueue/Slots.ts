/**
 * A worker's slots (`Worker.ts`): the jobs running in it, and the carried writes (`WorkerOptions.finish`) of
 * jobs that ended well, each keeping its slot until the worker's next claim writes its item. That claim counts
 * those slots free (their jobs' fibers end after it). Once the worker stops, what waits is written at once and
 * a job ending later writes its own item.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Queue from "effect/Queue"
import { type Carried, type FinishOptions, type Job, Outcome, type Primitives } from "../JobQueue.js"

/** A job that ended well, its item waiting for the claim that writes it; `written` tells its job how that went. */
export interface Carrying<F> {
  readonly job: Job
  readonly item: F
  readonly written: Deferred.Deferred<boolean>
}

/** Most real time a claim pass waits for the jobs still running (milliseconds). */
const claimMomentMillis = 3

/** Real time, not the Clock: the moment passes the same under a TestClock that nobody advances. */
const realSleep = (millis: number): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const handle = setTimeout(() => resume(Effect.void), millis)
    return Effect.sync(() => clearTimeout(handle))
  })

export interface SlotsOptions<F, R> {
  readonly queue: string
  readonly concurrency: number
  readonly leaseMillis: number
  readonly finish: FinishOptions<F, R> | undefined
}

export const makeSlots = <F, R>(primitives: Primitives, options: SlotsOptions<F, R>) =>
  Effect.gen(function* () {
    // slots taken: jobs running, and ended jobs whose items wait in `carrying`
    let busy = 0
    const carrying: Array<Carrying<F>> = []
    // jobs whose items a claim wrote: that claim counted their slots free, and their fibers end after it
    const written = new Set<string>()
    // once the worker stops, a job that ends well writes its own item
    let closing = false
    /** Rung when an item arrives: a sleeping worker's wake-up. */
    const itemArrived = yield* Queue.sliding<void>(1)

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

    const answer = (items: ReadonlyArray<Carrying<F>>, ok: boolean) => {
      for (const c of items) Deferred.unsafeDone(c.written, Exit.succeed(ok))
    }

    /** What a claim carries for `items`: their jobs, settled in its statement, and their items' write. */
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
    // carries items). Made after the worker's jobs' FiberSet, so this runs before they are interrupted.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closing = true
        const items = carrying.splice(0)
        if (items.length === 0) return Effect.void
        if (!primitives.carries) return writeAlone(items)
        const claim = primitives.claim({ queue: options.queue, limit: 0, leaseMillis: options.leaseMillis, carried: carriedBy(items) })
        return Effect.map(Effect.exit(claim), (exit) => answer(items, Exit.isSuccess(exit)))
      })
    )

    return {
      moment,
      itemArrived,
      carriedBy,
      writeAlone,
      /** Whether items wait for a claim. */
      waiting: () => carrying.length > 0,
      /** A job starts in a free slot. */
      take: () => {
        busy++
      },
      /**
       * A job's fiber ended: true when its slot is free now, false when the claim that wrote its item already
       * counted it free.
       */
      release: (jobId: string): boolean => {
        if (written.delete(jobId)) return false
        busy--
        jobEnded()
        return true
      },
      /** The items waiting, taken by the pass that writes them, and the slots that pass may fill. */
      forPass: (): { readonly items: ReadonlyArray<Carrying<F>>; readonly free: number } => {
        const items = carrying.splice(0)
        return { items, free: options.concurrency - busy + items.length }
      },
      /** A claim wrote `items`: their slots count free now (their jobs' fibers end after it). */
      freed: (items: ReadonlyArray<Carrying<F>>) => {
        busy -= items.length
        for (const c of items) written.add(c.job.id)
      },
      /** Tells the jobs of `items` whether a claim wrote them. */
      answer,
      /**
       * The claim that carried `items` did not reach the database: they wait for the next claim again, first in
       * line (once the worker stops, they are answered as not written: the stop writes what waits only once).
       */
      carryAgain: (items: ReadonlyArray<Carrying<F>>) => {
        if (closing) answer(items, false)
        else carrying.unshift(...items)
      },
      /** A job that ended well hands its item over; true once it is written. */
      carry: (job: Job, item: F): Effect.Effect<boolean, never, R> =>
        Effect.flatMap(Deferred.make<boolean>(), (done) =>
          Effect.suspend(() => {
            const waiting = { job, item, written: done }
            if (closing) return Effect.zipRight(writeAlone([waiting]), Deferred.await(done))
            carrying.push(waiting)
            jobEnded()
            return Effect.zipRight(Queue.offer(itemArrived, undefined), Deferred.await(done))
          })
        )
    }
  })

export type Slots<F, R> = Effect.Effect.Success<ReturnType<typeof makeSlots<F, R>>>
