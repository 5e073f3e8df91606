/**
 * One reply's events while it is generated. Each event is numbered 1, 2, ... and kept in memory for this
 * process's readers (`Live`); a flusher fiber writes them to `message_events` in batches (whatever queued up
 * while the previous batch was written), starting once the first token is out so that no write delays it;
 * `finish` stops the flusher, writes what it had not with the reply's final state and the terminal event in one
 * statement, and only then publishes the terminal event.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Queue from "effect/Queue"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { takeLaterTurn } from "../../layers/SessionTurn.js"
import type { StreamEvent } from "../../schema/Conversations.js"
import { now } from "../Time.js"
import type { EventRow } from "./ConversationsRepo.js"

/** An event as sent: its number and its JSON. */
export interface Numbered {
  readonly id: number
  readonly data: string
  readonly terminal: boolean
}

const isTerminal = (event: StreamEvent) => event.type === "done" || event.type === "error"

/** A reply generated in this process, as its readers follow it. */
export interface Live {
  readonly events: Array<Numbered>
  /** How many events there are: readers wake on its changes. */
  readonly count: SubscriptionRef.SubscriptionRef<number>
  readers: number
  /** While no reader follows: the grace timer that stops the reply. */
  timer: Fiber.RuntimeFiber<void> | undefined
  generator: Fiber.RuntimeFiber<void> | undefined
  finished: boolean
}

export const makeLive: Effect.Effect<Live> = Effect.map(SubscriptionRef.make(0), (count) => ({
  events: [],
  count,
  readers: 0,
  timer: undefined,
  generator: undefined,
  finished: false
}))

/** Writes the reply's end (`at`) with the events not written yet (`rest`, the terminal one last), in one statement. */
export type Store = (at: Date, rest: ReadonlyArray<EventRow>) => Effect.Effect<unknown>

export interface ReplyLog {
  readonly emit: (event: StreamEvent) => Effect.Effect<void>
  /** The first token is out: from now on the flusher writes. */
  readonly firstTokenOut: Effect.Effect<void>
  /** The terminal event, after `store` wrote it; uninterruptible. */
  readonly finish: (event: StreamEvent, store: Store) => Effect.Effect<void>
}

export const makeReplyLog = (options: {
  readonly entry: Live
  /** Where the flusher's fiber runs (interrupted when the server stops). */
  readonly fibers: FiberSet.FiberSet<void>
  readonly insertEvents: (rows: ReadonlyArray<EventRow>) => Effect.Effect<void>
  /** Run once the terminal event is out. */
  readonly onFinished: Effect.Effect<void>
}): Effect.Effect<ReplyLog> =>
  Effect.gen(function* () {
    const { entry } = options
    const pending = yield* Queue.unbounded<Numbered>()
    // events up to this number are in the database
    let persisted = 0
    // the first token is sent before anything is written: the reply's statements before it wait their turn on the
    // database's session (PGlite has one), and `finish` writes whatever the flusher did not
    const firstToken = yield* Deferred.make<void>()
    const flushBatch = Effect.gen(function* () {
      const batch = yield* Queue.takeBetween(pending, 1, 64)
      const rows = Array.from(batch, (e): EventRow => ({ seq: e.id, data: e.data }))
      yield* options.insertEvents(rows)
      persisted = Math.max(persisted, rows[rows.length - 1]!.seq)
    })
    const flusher = yield* FiberSet.run(
      options.fibers,
      Effect.interruptible(Deferred.await(firstToken).pipe(Effect.zipRight(takeLaterTurn), Effect.zipRight(Effect.forever(flushBatch))))
    )

    const publish = (event: StreamEvent) =>
      Effect.gen(function* () {
        const numbered: Numbered = { id: entry.events.length + 1, data: JSON.stringify(event), terminal: isTerminal(event) }
        entry.events.push(numbered)
        yield* SubscriptionRef.set(entry.count, entry.events.length)
        return numbered
      })

    const finish = (event: StreamEvent, store: Store) =>
      Effect.gen(function* () {
        // the flusher does not outlive the reply, even at shutdown
        yield* Fiber.interrupt(flusher)
        const at = yield* now
        const rest = entry.events.slice(persisted).map((e): EventRow => ({ seq: e.id, data: e.data }))
        rest.push({ seq: entry.events.length + 1, data: JSON.stringify(event) })
        // one statement (atomic): a batch the flusher was writing when stopped may be in already, inserts skip what exists
        yield* store(at, rest)
        entry.finished = true
        yield* publish(event)
        yield* options.onFinished
      }).pipe(Effect.uninterruptible)

    return {
      emit: (event) => Effect.asVoid(Effect.flatMap(publish(event), (n) => Queue.offer(pending, n))),
      firstTokenOut: Deferred.succeed(firstToken, undefined),
      finish
    }
  })
