/**
 * Outgoing e-mail: the `emails` table is the record (`pending` -> `sent` |
 * `failed`, attempts, last error); the work item is a job on the `email` queue
 * of the JobQueue, sent through the `Mailer` layer.
 *
 * `enqueue` runs inside the caller's transaction and writes both, so an e-mail
 * exists exactly when the change that causes it committed. A sender killed
 * mid-send loses nothing: its job's lease lapses and any instance takes it
 * again, so a message may be sent twice but is never lost. Retries follow
 * `retryDelaysMillis` by the Clock; the job waits for the next attempt.
 *
 * The `email-sender` worker (`run`) wakes for a local enqueue after its commit
 * and otherwise looks at least every `EMAIL_POLL_MS` (default 1 s) for e-mails
 * of other instances. Tests set a long poll: under TestClock every wake-up
 * costs real time. `dispatchDue` is one claim-and-send pass by hand.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { WorkspaceId } from "../../schema/Ids.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { type Job, JobQueue, Outcome as JobOutcome } from "../../layers/JobQueue.js"
import { Mailer } from "../../layers/Mailer.js"
import { AppConfig } from "../Config.js"
import { now } from "../Time.js"
import { EmailsRepo, type PendingRow } from "./EmailsRepo.js"

export interface EnqueueInput {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html?: string | undefined
  /** The workspace the message concerns, when there is one. */
  readonly workspaceId?: WorkspaceId | undefined
}

/** What one `dispatchDue` did. */
export interface DispatchSummary {
  readonly claimed: number
  readonly sent: number
  /** Failed this time, scheduled again. */
  readonly retrying: number
  /** Failed for the last time: now `failed`. */
  readonly failed: number
}

/** A claim holds a row this long; after that any sender may claim it again. */
export const leaseMillis = 60_000

/** Waits after the 1st, 2nd, ... failed attempt; after the last one the e-mail is `failed`. */
export const retryDelaysMillis: ReadonlyArray<number> = [
  60_000, // 1 min
  5 * 60_000, // 5 min
  15 * 60_000, // 15 min
  60 * 60_000, // 1 h
  3 * 60 * 60_000, // 3 h
  6 * 60 * 60_000 // 6 h
]

/** Attempts before an e-mail is given up (`failed`). */
export const maxAttempts = retryDelaysMillis.length + 1

/** Rows claimed per dispatch by the sender fiber. */
export const defaultBatch = 20

/** The JobQueue queue of e-mail jobs (payload: `{ emailId }`). */
export const emailQueue = "email"

/** E-mails sent at once by one instance. */
const concurrency = 4

const EmailJob = Schema.Struct({ emailId: Schema.String })

const maxErrorLength = 1000

type Outcome = "sent" | "retrying" | "failed" | "skipped"

export class Emails extends Effect.Service<Emails>()("Email/Emails", {
  effect: Effect.gen(function* () {
    const repo = yield* EmailsRepo
    const ids = yield* IdGenerator
    const mailer = yield* Mailer
    const jobs = yield* JobQueue
    const pollMillis = (yield* AppConfig).emailPollMillis

    /** Queue a message; call it inside the transaction of the change it reports. Returns the `eml_` id. */
    const enqueue = Effect.fn("Emails.enqueue")(function* (input: EnqueueInput) {
      const at = yield* now
      const id = yield* ids.make("eml")
      yield* repo.insert({
        id,
        workspace_id: input.workspaceId ?? null,
        to_address: input.to,
        subject: input.subject,
        body_text: input.text,
        body_html: input.html ?? null,
        created_at: at
      })
      yield* jobs.enqueue({ queue: emailQueue, payload: { emailId: id } })
      return id
    })

    // Sends one e-mail and records the attempt; the job follows the record.
    const send = (row: PendingRow) =>
      Effect.gen(function* () {
        const result = yield* Effect.either(
          mailer.send({
            to: row.to_address,
            subject: row.subject,
            text: row.body_text,
            ...(row.body_html === null ? {} : { html: row.body_html })
          })
        )
        const at = yield* now
        const attempts = row.attempts + 1
        if (Either.isRight(result)) {
          yield* repo.sent(row.id, attempts, at)
          return ["sent", JobOutcome.done] as const
        }
        const error = result.left.reason.slice(0, maxErrorLength)
        if (attempts >= maxAttempts) {
          yield* repo.failed(row.id, error, attempts)
          yield* Effect.logError(`e-mail ${row.id} failed after ${attempts} attempts: ${error}`)
          return ["failed", JobOutcome.failed(error)] as const
        }
        const next = new Date(at.getTime() + retryDelaysMillis[attempts - 1]!)
        yield* repo.retrying(row.id, attempts, error, next)
        yield* Effect.logWarning(`e-mail ${row.id} attempt ${attempts} failed, retrying at ${next.toISOString()}: ${error}`)
        return ["retrying", JobOutcome.retryAt(next, error)] as const
      })

    const deliver = (job: Job) =>
      Effect.gen(function* () {
        const payload = Schema.decodeUnknownEither(EmailJob)(job.payload)
        if (Either.isLeft(payload)) return ["skipped", JobOutcome.failed("not an e-mail job")] as const
        const row = yield* repo.pending(payload.right.emailId)
        // already settled (a duplicate job, or a sender that died after recording)
        if (Option.isNone(row)) return ["skipped", JobOutcome.done] as const
        return yield* send(row.value)
      })

    const leaseMillisOf = leaseMillis

    /** Claim due e-mails (at most `batch`), send them, record each outcome. */
    const dispatchDue = Effect.fn("Emails.dispatchDue")(function* (batch: number = defaultBatch) {
      const claimed = yield* jobs.claim({ queue: emailQueue, limit: batch, leaseMillis: leaseMillisOf })
      const outcomes = yield* Effect.forEach(
        claimed,
        (job) =>
          Effect.flatMap(deliver(job), ([kind, outcome]) => Effect.as(jobs.settle(job, outcome), kind)).pipe(
            Effect.onInterrupt(() => jobs.release(job))
          ),
        { concurrency }
      )
      const count = (o: Outcome) => outcomes.filter((x) => x === o).length
      return {
        claimed: claimed.length,
        sent: count("sent"),
        retrying: count("retrying"),
        failed: count("failed")
      } satisfies DispatchSummary
    })

    /**
     * The queue's `onGiveUp`: sending died (not a refusal of the mailer, which `send` records) at the last attempt:
     * the e-mail is `failed`, as after its last refused attempt. A write that fails dies: the queue tries again.
     */
    const giveUp = (job: Job, reason: string) =>
      Effect.gen(function* () {
        const payload = Schema.decodeUnknownEither(EmailJob)(job.payload)
        if (Either.isLeft(payload)) return
        yield* repo.failed(payload.right.emailId, `could not be sent: an internal error occurred (${reason})`.slice(0, maxErrorLength))
      })

    /** The `email-sender` worker: supervised, never ends. */
    const run: Effect.Effect<never> = jobs.worker({
      queue: emailQueue,
      concurrency,
      leaseMillis,
      pollMillis,
      // the mailer's refusals retry on the e-mail's own schedule; a handler that dies is given up at the same count
      maxAttempts,
      onGiveUp: giveUp,
      handle: (job) => Effect.map(deliver(job), ([, outcome]) => outcome)
    })

    return { enqueue, dispatchDue, run } as const
  }),
  dependencies: [EmailsRepo.Default]
}) {}
