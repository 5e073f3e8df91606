/**
 * The turn a fiber's statements take when they queue for a database session
 * that runs one statement at a time (PGlite, `pglite/SessionLock.ts`): lower
 * turns go first. A fiber with none is served in its order of arrival at the
 * lock. A reply takes its turn when its message arrives, so its statements up
 * to its first token go before those of later messages (the replies queued
 * behind one another get their first token in order, not all together at the
 * end); past its first token it takes a new turn, behind everything queued
 * then. PostgreSQL (a pool of sessions) ignores turns.
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"

/** The fiber's turn; forked fibers inherit it. */
export const sessionTurn = FiberRef.unsafeMake<number | undefined>(undefined)

let lastTurn = 0

/** A turn after every one given so far. */
export const nextTurnUnsafe = (): number => ++lastTurn

/** Runs `self` with a turn taken now (its forks keep it). */
export const withNewTurn = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => Effect.locally(self, sessionTurn, nextTurnUnsafe()))

/** From now on this fiber's statements queue behind everything queued so far. */
export const takeLaterTurn: Effect.Effect<void> = Effect.suspend(() => FiberRef.set(sessionTurn, nextTurnUnsafe()))
