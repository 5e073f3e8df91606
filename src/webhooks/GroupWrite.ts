/**
 * Group writes: items submitted by many fibers are written together, one
 * write per batch. The writer fiber writes at once whatever is waiting when it
 * is free, so an item alone waits for no timer; items submitted while a write
 * is under way go together in the next one. Each submitter waits for the write
 * that carried its item and gets its result (a failed write fails all of its
 * items' submitters).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Queue from "effect/Queue"

export interface GroupWrite<A, E> {
  /** Waits until a write carrying `item` ended; fails as that write failed. */
  readonly submit: (item: A) => Effect.Effect<void, E>
  /** The writer: runs for as long as the caller's fiber (fork it next to the submitters). */
  readonly run: Effect.Effect<never>
}

interface Waiting<A, E> {
  readonly item: A
  readonly done: Deferred.Deferred<void, E>
}

export const makeGroupWrite = <A, E, R>(
  write: (items: ReadonlyArray<A>) => Effect.Effect<void, E, R>,
  maxBatch: number
): Effect.Effect<GroupWrite<A, E>, never, R> =>
  Effect.gen(function* () {
    const context = yield* Effect.context<R>()
    const waiting = yield* Queue.unbounded<Waiting<A, E>>()

    const submit = (item: A) =>
      Effect.flatMap(Deferred.make<void, E>(), (done) =>
        Effect.zipRight(Queue.offer(waiting, { item, done }), Deferred.await(done))
      )

    let batch: ReadonlyArray<Waiting<A, E>> = []
    const writeBatch = Effect.gen(function* () {
      const first = yield* Queue.take(waiting)
      const rest = yield* Queue.takeUpTo(waiting, maxBatch - 1)
      batch = [first, ...rest]
      // a write that dies is a failure of its items, never of the writer
      const result = yield* Effect.exit(write(batch.map((w) => w.item)))
      const exit: Exit.Exit<void, E> = Exit.isSuccess(result) ? Exit.void : Exit.failCause(result.cause)
      for (const w of batch) Deferred.unsafeDone(w.done, exit)
      batch = []
    })

    // stopped (shutdown): no submitter waits for a write that will not come
    const interruptWaiting = Effect.gen(function* () {
      const queued = yield* Queue.takeAll(waiting)
      for (const w of [...batch, ...queued]) Deferred.unsafeDone(w.done, Exit.interrupt(FiberId.none))
      batch = []
    })

    const run: Effect.Effect<never> = Effect.forever(writeBatch).pipe(
      Effect.onInterrupt(() => interruptWaiting),
      Effect.provide(context)
    )
    return { submit, run }
  })
