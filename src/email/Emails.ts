/**
 * Outgoing e-mail: a durable queue in the `emails` table, drained by the
 * `email-sender` fiber through the `Mailer` layer.
 *
 * `enqueue` runs inside the caller's transaction, so an e-mail exists exactly
 * when the change that causes it committed. `dispatchDue` claims due rows in one
 * short statement (`FOR UPDATE SKIP LOCKED`, setting a 60 s lease), sends them
 * outside any transaction, then records the outcome. A sender killed mid-send
 * loses nothing: its lease lapses and the next claim (of any instance) takes the
 * row again, so a message may be sent twice but is never lost.
 *
 * The `email-sender` fiber (`run`) loops: dispatch, then sleep until the
 * earliest pending e-mail becomes claimable (its retry time or the end of
 * another sender's lease), or 1 s after a local `enqueue` rang (by then the
 * enqueuing transaction has committed), and never longer than `EMAIL_POLL_MS`
 * (default 1 s: rows of other instances are found that fast). Tests set a long
 * poll: under TestClock every wake-up costs real time, and a 1 s poll makes a
 * day-long `TestClock.adjust` take minutes.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Queue from "effect/Queue"
import type { WorkspaceId } from "../../schema/Ids.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { Mailer } from "../../layers/Mailer.js"
import { AppConfig } from "../Config.js"
import { now } from "../Time.js"

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

/** After `enqueue` rings, the sender waits this long (for the enqueuing transaction to commit). */
const ringDelay = Duration.seconds(1)

const maxErrorLength = 1000

interface ClaimedRow {
  readonly id: string
  readonly to_address: string
  readonly subject: string
  readonly body_text: string
  readonly body_html: string | null
  readonly attempts: number
}

type Outcome = "sent" | "retrying" | "failed"

export class Emails extends Effect.Service<Emails>()("Email/Emails", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* IdGenerator
    const mailer = yield* Mailer
    const pollMillis = (yield* AppConfig).emailPollMillis
    // rung by `enqueue`; rings coalesce
    const bell = yield* Queue.sliding<void>(1)

    /** Queue a message; call it inside the transaction of the change it reports. Returns the `eml_` id. */
    const enqueue = Effect.fn("Emails.enqueue")(function* (input: EnqueueInput) {
      const at = yield* now
      const id = yield* ids.make("eml")
      yield* sql`
        insert into emails ${sql.insert({
          id,
          workspace_id: input.workspaceId ?? null,
          to_address: input.to,
          subject: input.subject,
          body_text: input.text,
          body_html: input.html ?? null,
          status: "pending",
          attempts: 0,
          next_attempt_at: at,
          created_at: at
        })}`
      yield* Queue.offer(bell, undefined)
      return id
    }, Effect.orDie)

    // One statement, so one short transaction: lock due rows nobody else holds
    // (skipping rows another sender is claiming right now) and lease them.
    const claim = (batch: number) =>
      Effect.gen(function* () {
        const at = yield* now
        const lease = new Date(at.getTime() + leaseMillis)
        const rows = yield* sql<ClaimedRow>`
          update emails set locked_until = ${lease}
          where id in (
            select id from emails
            where status = 'pending' and next_attempt_at <= ${at}
              and (locked_until is null or locked_until <= ${at})
            order by next_attempt_at, id
            limit ${batch}
            for update skip locked
          )
          returning id, to_address, subject, body_text, body_html, attempts`
        return rows
      })

    const deliver = (row: ClaimedRow) =>
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
        const attempts = Number(row.attempts) + 1
        // `status = 'pending'`: never resurrect a row a duplicate sender already settled.
        if (Either.isRight(result)) {
          yield* sql`
            update emails set status = 'sent', sent_at = ${at}, attempts = ${attempts}, locked_until = null
            where id = ${row.id} and status = 'pending'`
          return "sent" as Outcome
        }
        const error = result.left.reason.slice(0, maxErrorLength)
        if (attempts >= maxAttempts) {
          yield* sql`
            update emails set status = 'failed', attempts = ${attempts}, last_error = ${error}, locked_until = null
            where id = ${row.id} and status = 'pending'`
          yield* Effect.logError(`e-mail ${row.id} failed after ${attempts} attempts: ${error}`)
          return "failed" as Outcome
        }
        const next = new Date(at.getTime() + retryDelaysMillis[attempts - 1]!)
        yield* sql`
          update emails set attempts = ${attempts}, last_error = ${error}, next_attempt_at = ${next}, locked_until = null
          where id = ${row.id} and status = 'pending'`
        yield* Effect.logWarning(`e-mail ${row.id} attempt ${attempts} failed, retrying at ${next.toISOString()}: ${error}`)
        return "retrying" as Outcome
      })

    /** Claim due e-mails (at most `batch`), send them, record each outcome. */
    const dispatchDue = Effect.fn("Emails.dispatchDue")(function* (batch: number = defaultBatch) {
      const rows = yield* claim(batch)
      if (rows.length === 0) return { claimed: 0, sent: 0, retrying: 0, failed: 0 } satisfies DispatchSummary
      const outcomes = yield* Effect.forEach(rows, deliver, { concurrency: 4 })
      const count = (o: Outcome) => outcomes.filter((x) => x === o).length
      return {
        claimed: rows.length,
        sent: count("sent"),
        retrying: count("retrying"),
        failed: count("failed")
      } satisfies DispatchSummary
    }, Effect.orDie)

    // When the earliest pending e-mail may be claimed (retry time, or the end of a lease), if any.
    const nextClaimable = Effect.map(
      sql<{ at: Date | string | null }>`
        select min(greatest(next_attempt_at, coalesce(locked_until, next_attempt_at))) as at
        from emails where status = 'pending'`,
      (rows) => (rows[0]?.at == null ? undefined : new Date(rows[0].at).getTime())
    )

    /** Sleep until there may be work (see the module comment); not at all after a full batch. */
    const awaitWork = (previous: DispatchSummary) =>
      Effect.gen(function* () {
        if (previous.claimed >= defaultBatch) return
        const next = yield* nextClaimable
        const at = (yield* now).getTime()
        // at least 1 s (or the poll, if shorter) so a row locked elsewhere cannot make this spin
        const wait =
          next === undefined ? pollMillis : Math.min(pollMillis, Math.max(Math.min(pollMillis, 1_000), next - at))
        yield* Effect.raceFirst(Effect.sleep(wait), Effect.zipRight(Queue.take(bell), Effect.sleep(ringDelay)))
      }).pipe(Effect.orDie)

    /** The `email-sender` fiber: forever dispatch what is due, then wait for more. */
    const run: Effect.Effect<never> = Effect.forever(Effect.flatMap(dispatchDue(), awaitWork))

    return { enqueue, dispatchDue, run } as const
  })
}) {}
