/**
 * What becomes of a job whose attempt did not end well (`Worker.ts` runs the attempts).
 *
 * - Failures: a handler (or its claim's `prepare`) that fails or dies is a failed
 *   attempt: logged at error level in one line (job, queue, key, short cause),
 *   counted (`jobs_attempts_failed_total`), its short cause kept in `last_error`,
 *   and retried after `retryBackoffMillis`; at attempt `maxAttempts` it is given
 *   up (so is a retry the handler asks for at that attempt): `onGiveUp` records
 *   it where people see it and the job is settled failed, in one transaction
 *   (`jobs_failed_total`), and the next job of its key runs. An `onGiveUp` that
 *   fails or dies rolls back and leaves the job to run its last attempt again
 *   after the backoff (that claim not counted), so a failure is never settled
 *   unrecorded. `onRetry` shows a retry the same way.
 * - Attempts that stop their worker: the claim counts the attempt (`Job.attempts`),
 *   so one whose process is killed before it settles (a decoder's native crash)
 *   counts too. The claim past the last attempt runs no handler (it would stop
 *   this worker as well): what the claim took is given back (`handBack`) and the
 *   job is given up as above with `onGiveUp(job, stoppedReason, "stopped")`,
 *   keeping the count it had. So a job that kills every process that takes it
 *   ends `failed` after `maxAttempts` processes, on one instance or several.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import {
  defaultMaxAttempts,
  type GiveUpHow,
  type Job,
  Outcome,
  type Primitives,
  retryBackoffMillis,
  stoppedReason,
  type WorkerOptions
} from "../JobQueue.js"
import { recordJobAttemptFailed, recordJobFailed } from "./Metrics.js"
import { makeOutage, type Outage, retryingLostConnection } from "./Outage.js"
import { shortCause } from "./Reasons.js"

const nowMillis = Clock.currentTimeMillis

export const makeFailures = (primitives: Primitives) => {
  // per queue: its jobs' settles through an outage, logged once for all of them
  const settleOutages = new Map<string, Outage>()
  /** A job's settle (or its give-up's transaction), tried again while the database is away. */
  const settling = <A, R>(job: Job, self: Effect.Effect<A, never, R>) => {
    let outage = settleOutages.get(job.queue)
    if (outage === undefined) {
      outage = makeOutage(`settles of queue ${job.queue}`, { queue: job.queue })
      settleOutages.set(job.queue, outage)
    }
    return retryingLostConnection(outage, self)
  }

  /**
   * A handler (or its claim's `prepare`) that failed or died: one error line, counted, then retried after the
   * backoff, or, at the last attempt, given up (recorded by `onGiveUp` first) and settled failed.
   */
  const failedAttempt = <R, P, F>(options: WorkerOptions<R, P, F>, job: Job, cause: Cause.Cause<unknown>) =>
    Effect.gen(function* () {
      const reason = shortCause(cause)
      const attempt = job.attempts + 1
      const maxAttempts = options.maxAttempts ?? defaultMaxAttempts
      const last = attempt >= maxAttempts
      const retryAt = new Date((yield* nowMillis) + retryBackoffMillis(job.attempts))
      const fields = { job_id: job.id, queue: job.queue, key: job.key ?? "", attempt, max_attempts: maxAttempts }
      yield* recordJobAttemptFailed(job.queue)
      yield* Effect.logError(
        `job ${job.id} of ${job.queue} (key ${job.key ?? "none"}) failed, attempt ${attempt} of ${maxAttempts}: ${reason}; ` +
          (last ? "giving up" : `retrying at ${retryAt.toISOString()}`)
      ).pipe(Effect.annotateLogs(fields))
      // the whole cause (its stack) below the error level, for whoever debugs it
      yield* Effect.logDebug(`job ${job.id} of ${job.queue}: the failed attempt's cause`, cause)
      if (!last) {
        if (options.onRetry !== undefined) {
          const shown = yield* Effect.exit(options.onRetry(job, reason, retryAt))
          if (Exit.isFailure(shown)) {
            if (Cause.isInterruptedOnly(shown.cause)) return yield* Effect.interrupt
            yield* Effect.logWarning(`job ${job.id} of ${job.queue}: its retry could not be shown: ${shortCause(shown.cause)}`)
          }
        }
        return yield* settling(job, primitives.settle(job, Outcome.retryAt(retryAt, reason)))
      }
      yield* giveUp(options, job, reason, "failed")
    })

  /**
   * The job ends failed: `onGiveUp` records it where people see it and the job is settled failed, in one
   * transaction. Not recorded (the hook failed or died, the database away), nothing of it is: the job waits for
   * the backoff with this claim not counted, so its last attempt runs again ("failed") or the give-up is tried
   * again ("stopped"), and a failure is never settled unseen.
   */
  const giveUp = <R, P, F>(options: WorkerOptions<R, P, F>, job: Job, reason: string, how: GiveUpHow) =>
    Effect.gen(function* () {
      const record = options.onGiveUp === undefined ? Effect.void : options.onGiveUp(job, reason, how)
      // a job claimed past its last attempt ends with the count of the attempts it had
      const settled = primitives.settle(job, Outcome.failed(reason), { uncounted: how === "stopped" })
      const exit = yield* Effect.exit(settling(job, primitives.transaction(Effect.zipRight(record, settled))))
      if (Exit.isSuccess(exit)) return yield* recordJobFailed(job.queue)
      if (Cause.isInterruptedOnly(exit.cause)) return yield* Effect.interrupt
      const retryAt = new Date((yield* nowMillis) + retryBackoffMillis(job.attempts))
      yield* Effect.logError(
        `job ${job.id} of ${job.queue}: its failure could not be recorded (${shortCause(exit.cause)}); ` +
          `${how === "failed" ? "running it" : "giving it up"} again at ${retryAt.toISOString()}`
      ).pipe(Effect.annotateLogs({ job_id: job.id, queue: job.queue, key: job.key ?? "" }))
      yield* settling(job, primitives.settle(job, Outcome.retryAt(retryAt, reason), { uncounted: true }))
    })

  /**
   * A job claimed past its last attempt: the attempts it was claimed for stopped their worker before they
   * ended (its process killed, say), so none settled. Its handler does not run (it would stop this worker too):
   * what its claim took is given back and it is given up.
   */
  const exhausted = <R, P, F>(options: WorkerOptions<R, P, F>, job: Job, prepared: P | undefined) =>
    Effect.gen(function* () {
      const maxAttempts = options.maxAttempts ?? defaultMaxAttempts
      yield* Effect.logError(
        `job ${job.id} of ${job.queue} (key ${job.key ?? "none"}) claimed after its last attempt (${maxAttempts}): ` +
          `${stoppedReason}; giving up`
      ).pipe(Effect.annotateLogs({ job_id: job.id, queue: job.queue, key: job.key ?? "", max_attempts: maxAttempts }))
      if (options.handBack !== undefined) yield* options.handBack(job, prepared)
      yield* giveUp(options, job, stoppedReason, "stopped")
    })

  return { settling, failedAttempt, giveUp, exhausted } as const
}
