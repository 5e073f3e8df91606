/**
 * The lock of PGlite's one session: a release hands the session to one waiter,
 * the one with the lowest turn (`SessionTurn.ts`; one with none gets a turn on
 * arrival, so those are first come first served). Effect's semaphore wakes
 * every waiter at each release and lets them race for the permit: with a
 * hundred statements queued that is a hundred fiber wake-ups per statement,
 * in no useful order.
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { nextTurnUnsafe, sessionTurn } from "../SessionTurn.js"

interface Waiter {
  readonly turn: number
  readonly resume: () => void
  /** The session was handed to it: if it is interrupted now, it passes the session on. */
  handed: boolean
}

export interface SessionLock {
  /** Waits for the session; interruptible while it waits. */
  readonly take: Effect.Effect<void>
  readonly release: Effect.Effect<void>
}

export const makeSessionLock = (): SessionLock => {
  let busy = false
  // by turn, lowest first
  const waiters: Array<Waiter> = []

  const releaseUnsafe = () => {
    const next = waiters.shift()
    if (next === undefined) {
      busy = false
      return
    }
    next.handed = true
    next.resume()
  }

  const enqueue = (waiter: Waiter) => {
    let at = waiters.length
    while (at > 0 && waiters[at - 1]!.turn > waiter.turn) at--
    waiters.splice(at, 0, waiter)
  }

  const take = Effect.flatMap(FiberRef.get(sessionTurn), (turn) =>
    Effect.async<void>((resume) => {
      if (!busy) {
        busy = true
        return resume(Effect.void)
      }
      const waiter: Waiter = { turn: turn ?? nextTurnUnsafe(), resume: () => resume(Effect.void), handed: false }
      enqueue(waiter)
      return Effect.sync(() => {
        if (waiter.handed) return releaseUnsafe()
        const at = waiters.indexOf(waiter)
        if (at >= 0) waiters.splice(at, 1)
      })
    })
  )

  return { take, release: Effect.sync(releaseUnsafe) }
}
