/**
 * The retry schedule. Attempt 1 is immediate; then waits of 30 s, 2 min, 10 min,
 * 30 min, 1 h, 2 h, 4 h, 8 h and 9 h since the previous attempt, with the tenth
 * attempt clamped to the 24 h horizon after the event. No attempt is scheduled
 * past it: the tenth is the last, and once it fails the event is dropped for
 * that subscription. The horizon bounds when attempts are due, not when their
 * claims run: an attempt due at the horizon is made by a claim a moment later.
 */
export const maxAttempts = 10
export const horizonMillis = 24 * 60 * 60 * 1000

const second = 1000
const minute = 60 * second
const hour = 60 * minute

/** Wait before attempt n+2, indexed by n (the wait after attempt 1 comes first). */
export const retryWaitsMillis = [30 * second, 2 * minute, 10 * minute, 30 * minute, hour, 2 * hour, 4 * hour, 8 * hour, 9 * hour]

/** When the next attempt is due after `attemptsMade` attempts, or null when none remains. */
export const nextAttemptAt = (attemptsMade: number, lastAttemptAt: Date, horizonAt: Date): Date | null => {
  if (attemptsMade >= maxAttempts) return null
  const wait = retryWaitsMillis[attemptsMade - 1]
  if (wait === undefined) return null
  const due = lastAttemptAt.getTime() + wait
  const clamped = attemptsMade + 1 === maxAttempts ? Math.min(due, horizonAt.getTime()) : due
  return clamped > horizonAt.getTime() ? null : new Date(clamped)
}

/** Auto-disable: this many consecutive failed attempts, spanning at least this long. */
export const disableAfterFailures = 50
export const disableAfterMillis = 24 * hour
