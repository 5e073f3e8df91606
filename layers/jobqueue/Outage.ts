/**
 * The database away, as a queue's worker meets it (`Worker.ts`): a dropped connection, a PostgreSQL restart.
 * The worker's own statements (claims, lease extensions, settles) are retried with a backoff that starts again
 * after a success (`makeBackoff`, by the Clock), and an outage is logged once when it begins and once when it
 * ends (`makeOutage`), not at every retry.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { shortCause } from "./Reasons.js"

/** The first retry's wait after a failure, doubled at each failure that follows, up to `retryCapMillis`. */
export const firstRetryMillis = 100
export const retryCapMillis = 5_000

/** The wait before the retry after `failures` consecutive failures (1: the first retry). */
export const statementRetryMillis = (failures: number) =>
  Math.min(firstRetryMillis * 2 ** Math.max(0, failures - 1), retryCapMillis)

/** Consecutive failures of one kind of statement, and the wait before its next try; a success starts it again. */
export const makeBackoff = () => {
  let failures = 0
  return {
    /** A failure: the wait before the next try. */
    next: (): number => statementRetryMillis(++failures),
    reset: () => {
      failures = 0
    }
  }
}

/** Connection errors (refused, reset, timed out), the server's own shutdown codes (08xxx, 57P0x), too many clients. */
const lostCodes = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|08...|57P0[123]|53300)$/
const lostMessages = /Connection terminated|connection timeout|Failed to acquire connection|not queryable|ECONNREFUSED/i

// a pool closed for good (the process stopping) is no outage: trying again cannot succeed
const closedPool = /after calling end on the pool/i

/** The driver's error in `error`'s chain (SqlError, then pool, client, socket) that tells a lost connection. */
const lostConnection = (error: unknown): { readonly code?: string; readonly message: string } | undefined => {
  let found: { readonly code?: string; readonly message: string } | undefined
  let current: unknown = error
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const { code, message } = current as { readonly code?: unknown; readonly message?: unknown }
    const text = typeof message === "string" ? message : ""
    if (closedPool.test(text)) return undefined
    if (found === undefined && ((typeof code === "string" && lostCodes.test(code)) || lostMessages.test(text))) {
      found = typeof code === "string" ? { code, message: text } : { message: text }
    }
    current = (current as { readonly cause?: unknown }).cause
  }
  return found
}

const lostIn = (cause: Cause.Cause<unknown>) =>
  Cause.isInterruptedOnly(cause)
    ? undefined
    : [...Cause.failures(cause), ...Cause.defects(cause)].map(lostConnection).find((lost) => lost !== undefined)

/**
 * Whether a statement failed because the database could not be reached or dropped the connection, not because of
 * the statement: run again, it may succeed, and it may have committed or not. The worker's statements die with
 * their SqlError (see `Postgres.ts`), so defects count as well as failures.
 */
export const isConnectionLost = (cause: Cause.Cause<unknown>): boolean => lostIn(cause) !== undefined

/** The driver's own words for a lost connection (`57P01 terminating connection ...`), or none. */
export const lostConnectionReason = (cause: Cause.Cause<unknown>): string | undefined => {
  const lost = lostIn(cause)
  return lost === undefined ? undefined : [lost.code, lost.message].filter((part) => part !== undefined && part !== "").join(" ")
}

/** While an outage lasts, a line says it still does this often. */
export const stillFailingLogMillis = 60_000

/**
 * One kind of a worker's statements (`what`: "claims of queue x") through outages: the first failure after a
 * success is logged with its short cause (`reason`), at warning level for a lost connection and at error level
 * with the whole cause for anything else (a bug would otherwise hide behind the retries); the retries that
 * follow are not, but for a line every `stillFailingLogMillis` while it lasts; the first success after them is
 * logged once, with how long it took and how many tries failed.
 */
export const makeOutage = (what: string, annotations: Record<string, string>) => {
  let since: number | undefined
  let logged = 0
  let failures = 0
  return {
    failed: (cause: Cause.Cause<unknown>, reason: string) =>
      Effect.gen(function* () {
        failures++
        const now = yield* Clock.currentTimeMillis
        if (since !== undefined) {
          if (now - logged < stillFailingLogMillis) return
          logged = now
          return yield* Effect.logWarning(
            `${what} still failing (${reason}) after ${failures} tries over ${now - since} ms; retrying with backoff`
          ).pipe(Effect.annotateLogs(annotations))
        }
        since = now
        logged = now
        const line = `${what} failing (${reason}); retrying with backoff, the jobs running here go on`
        yield* (isConnectionLost(cause) ? Effect.logWarning(line) : Effect.logError(line, cause)).pipe(
          Effect.annotateLogs(annotations)
        )
      }),
    succeeded: Effect.suspend(() => {
      if (since === undefined) return Effect.void
      const began = since
      const tries = failures
      since = undefined
      failures = 0
      return Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.logInfo(`${what} succeed again after ${tries} failed ${tries === 1 ? "try" : "tries"} over ${now - began} ms`).pipe(
          Effect.annotateLogs(annotations)
        )
      )
    })
  }
}

export type Outage = ReturnType<typeof makeOutage>

/** A statement's failure in an outage's log line: the driver's words for a lost connection, else its short cause. */
export const outageReason = (cause: Cause.Cause<unknown>): string => lostConnectionReason(cause) ?? shortCause(cause)

/** Longest a job's settle is tried again while the database is away; past it the job is left to its lease. */
const settleRetryMillis = 10 * 60_000

/**
 * `self` (a settle, a give-up's transaction) tried again after the backoff while it fails for a lost connection,
 * for at most `settleRetryMillis`: a job whose work is done is recorded once the database answers again, not
 * left to its lease to run a second time. Fenced by the job's claim, a settle that did commit before its answer
 * was lost does nothing the second time. Any other failure, and interruption, passes through.
 */
export const retryingLostConnection = <A, R>(outage: Outage, self: Effect.Effect<A, never, R>): Effect.Effect<A, never, R> =>
  Effect.catchAllCause(self, (first) =>
    !isConnectionLost(first)
      ? Effect.failCause(first)
      : Effect.gen(function* () {
          yield* outage.failed(first, outageReason(first))
          const backoff = makeBackoff()
          const until = (yield* Clock.currentTimeMillis) + settleRetryMillis
          for (let tries = 1; ; tries++) {
            yield* Effect.sleep(backoff.next())
            const exit = yield* Effect.exit(self)
            if (Exit.isSuccess(exit)) {
              yield* outage.succeeded
              return exit.value
            }
            if (!isConnectionLost(exit.cause) || (yield* Clock.currentTimeMillis) >= until) return yield* exit
            yield* outage.failed(exit.cause, outageReason(exit.cause))
          }
        })
  )
