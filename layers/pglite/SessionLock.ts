/**
 * The lock of PGlite's one session. A statement on its own takes it shared: any
 * number run at once, posted to the session's thread without waiting for one
 * another (the thread runs them in the order they arrive, so a statement costs
 * no round trip of its own while others are queued). A transaction takes it
 * exclusive, from BEGIN to COMMIT/ROLLBACK: nobody else's statement may land
 * inside it. Waiters are served by turn (`SessionTurn.ts`; one with none gets
 * a turn on arrival, so those are first come first served), from the front
 * while they are compatible; a release wakes only the waiters it serves.
 * (Effect's semaphore wakes every waiter at each release and lets them race.)
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { nextTurnUnsafe, sessionTurn } from "../SessionTurn.js"

interface Waiter {
  readonly turn: number
  readonly exclusive: boolean
  readonly resume: () => void
  /** The lock was granted to it: if it is interrupted now, it gives the lock back. */
  granted: boolean
}

export interface SessionLock {
  /** Waits for the lock; interruptible while it waits. Release with `release` of the same mode. */
  readonly take: (exclusive: boolean) => Effect.Effect<void>
  readonly release: (exclusive: boolean) => Effect.Effect<void>
}

export const makeSessionLock = (): SessionLock => {
  let shared = 0
  let exclusiveHeld = false
  // by turn, lowest first
  const waiters: Array<Waiter> = []

  const fits = (exclusive: boolean) => (exclusive ? !exclusiveHeld && shared === 0 : !exclusiveHeld)
  const hold = (exclusive: boolean) => {
    if (exclusive) exclusiveHeld = true
    else shared++
  }

  /** Grants the waiters at the front while they fit. */
  const serve = () => {
    while (waiters.length > 0 && fits(waiters[0]!.exclusive)) {
      const next = waiters.shift()!
      hold(next.exclusive)
      next.granted = true
      next.resume()
    }
  }

  const releaseUnsafe = (exclusive: boolean) => {
    if (exclusive) exclusiveHeld = false
    else shared--
    serve()
  }

  const enqueue = (waiter: Waiter) => {
    let at = waiters.length
    while (at > 0 && waiters[at - 1]!.turn > waiter.turn) at--
    waiters.splice(at, 0, waiter)
  }

  const take = (exclusive: boolean) =>
    Effect.flatMap(FiberRef.get(sessionTurn), (turn) =>
      Effect.async<void>((resume) => {
        // nobody waits and it fits: at once (a waiter ahead keeps its place)
        if (waiters.length === 0 && fits(exclusive)) {
          hold(exclusive)
          return resume(Effect.void)
        }
        const waiter: Waiter = { turn: turn ?? nextTurnUnsafe(), exclusive, resume: () => resume(Effect.void), granted: false }
        enqueue(waiter)
        // a waiter with an earlier turn than those ahead may fit now
        serve()
        return Effect.sync(() => {
          if (waiter.granted) return releaseUnsafe(exclusive)
          const at = waiters.indexOf(waiter)
          if (at >= 0) waiters.splice(at, 1)
          // the front may fit now that this one left it
          serve()
        })
      })
    )

  return { take, release: (exclusive) => Effect.sync(() => releaseUnsafe(exclusive)) }
}
