/**
 * SQL of the webhook dispatcher (`Dispatcher.ts`): the deliveries' leases, an attempt's record, a subscription's
 * failure streak, and the claim call that records successes, settles their jobs and claims the next ones
 * (`webhook_jobs_claim` of migration 0020). Rows are decoded, not cast.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ClaimCall } from "../../layers/JobQueue.js"
import { WorkspaceId } from "../../schema/Ids.js"
import { DbDate } from "../db/Columns.js"
import { decodeAll, decodeOne, execute, transaction } from "../db/Sql.js"

/** A delivery with its lease taken, and what sending it needs. */
export const Claimed = Schema.Struct({
  id: Schema.String,
  subscription_id: Schema.String,
  event_id: Schema.String,
  event_type: Schema.String,
  attempt_count: Schema.Number,
  max_attempts: Schema.Number,
  horizon_at: DbDate,
  url: Schema.String,
  secret: Schema.String,
  previous_secret: Schema.NullOr(Schema.String),
  previous_secret_expires_at: Schema.NullOr(DbDate),
  body: Schema.String
})
export type Claimed = typeof Claimed.Type

/** A successful attempt, waiting to be recorded. */
export interface Success {
  readonly claimed: Claimed
  readonly at: Date
  readonly status: number
  readonly durationMillis: number
  readonly bodyExcerpt: string
}

/** A delivery that could not be claimed, and its subscription's state. */
const Unclaimed = Schema.Struct({
  status: Schema.String,
  next_attempt_at: Schema.NullOr(DbDate),
  locked_until: Schema.NullOr(DbDate),
  is_active: Schema.Boolean,
  deleted_at: Schema.NullOr(DbDate)
})

/** A subscription's failure streak, and whom to tell when it is disabled. */
const SubscriptionState = Schema.Struct({
  is_active: Schema.Boolean,
  consecutive_failures: Schema.Number,
  failing_since: Schema.NullOr(DbDate),
  workspace_id: WorkspaceId,
  owner_email: Schema.String,
  url: Schema.String
})

/** A failed attempt: its record, and what the delivery becomes (`next`: when it is tried again; null: failed). */
export interface FailedAttempt {
  readonly at: Date
  readonly status: number | null
  readonly durationMillis: number
  readonly bodyExcerpt: string | null
  readonly error: string
  readonly attempts: number
  readonly next: Date | null
}

export class DispatchRepo extends Effect.Service<DispatchRepo>()("Webhooks/DispatchRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * Leases these deliveries where they are due and free, in a statement of its own (its own snapshot), by the
     * lease rule the claim call uses (`webhook_deliveries_lease`, migration 0017).
     */
    const lease = (ids: ReadonlyArray<string>, at: Date, until: Date): Effect.Effect<ReadonlyArray<Claimed>> =>
      decodeAll(
        Claimed,
        sql`
          select l.* from (select set_config('synchronous_commit', 'off', true)) async_commit,
            webhook_deliveries_lease(${ids}::text[], ${at}, ${until}) l`
      )

    /** Why a delivery could not be claimed: its state and its subscription's. */
    const unclaimed = (id: string): Effect.Effect<Option.Option<typeof Unclaimed.Type>> =>
      decodeOne(
        Unclaimed,
        sql`
          select d.status, d.next_attempt_at, d.locked_until, s.is_active, s.deleted_at
          from webhook_deliveries d join webhook_subscriptions s on s.id = d.subscription_id
          where d.id = ${id}`
      )

    /** The subscription's failure state, locked until the caller's transaction ends. */
    const lockSubscription = (id: string): Effect.Effect<Option.Option<typeof SubscriptionState.Type>> =>
      decodeOne(
        SubscriptionState,
        sql`
          select s.is_active, s.consecutive_failures, s.failing_since, s.workspace_id, s.url, w.owner_email
          from webhook_subscriptions s join workspaces w on w.id = s.workspace_id
          where s.id = ${id} for update of s`
      )

    /** One more failure of the subscription's receiver: its streak, its degraded flag, and whether it is disabled. */
    const subscriptionFailed = (
      id: string,
      state: { readonly failures: number; readonly since: Date; readonly dropped: boolean; readonly disable: boolean },
      at: Date
    ): Effect.Effect<void> =>
      execute(sql`
        update webhook_subscriptions set consecutive_failures = ${state.failures}, failing_since = ${state.since},
          degraded = degraded or ${state.dropped}, is_active = is_active and not ${state.disable}, updated_at = ${at}
        where id = ${id}`)

    /** A failed attempt's record, and its delivery retried at `next` or failed. */
    const attemptFailed = (deliveryId: string, attempt: FailedAttempt): Effect.Effect<void> =>
      Effect.zipRight(
        execute(sql`
          insert into webhook_attempts ${sql.insert({
            delivery_id: deliveryId,
            attempted_at: attempt.at,
            response_status: attempt.status,
            duration_ms: attempt.durationMillis,
            response_body_excerpt: attempt.bodyExcerpt,
            error: attempt.error
          })}`),
        execute(sql`
          update webhook_deliveries set status = ${attempt.next === null ? "failed" : "pending"},
            attempt_count = ${attempt.attempts}, last_attempted_at = ${attempt.at},
            first_attempt_at = coalesce(first_attempt_at, ${attempt.at}), response_status = ${attempt.status},
            next_attempt_at = ${attempt.next}, locked_until = null, last_error = ${attempt.error}
          where id = ${deliveryId}`)
      )

    /** A delivery's lease given back (a shutdown), unless it was settled meanwhile. */
    const release = (id: string): Effect.Effect<void> =>
      execute(sql`update webhook_deliveries set locked_until = null where id = ${id} and status = 'pending'`)

    /** The delivery's job ended without recording its last attempt: the delivery fails with `reason`. */
    const givenUp = (id: string, reason: string): Effect.Effect<void> =>
      execute(sql`
        update webhook_deliveries set status = 'failed', next_attempt_at = null, locked_until = null, last_error = ${reason}
        where id = ${id} and status = 'pending'`)

    /** The successes of jobs that ended together, as arrays (`webhook_deliveries_succeeded`, `webhook_jobs_claim`). */
    const successArrays = (successes: ReadonlyArray<Success>) => sql`
        ${successes.map((s) => s.claimed.id)}::text[],
        ${successes.map((s) => s.at.toISOString())}::timestamptz[],
        ${successes.map((s) => s.status)}::integer[],
        ${successes.map((s) => s.durationMillis)}::integer[],
        ${successes.map((s) => s.bodyExcerpt)}::text[],
        ${successes.map((s) => s.claimed.attempt_count + 1)}::integer[],
        ${[...new Set(successes.map((s) => s.claimed.subscription_id))]}::text[]`

    /**
     * Their record: their attempts, their deliveries, their subscriptions' failure streaks cleared. Timestamps cross
     * as ISO text. Written by the claim that settles their jobs (`claimCall`), or alone (the memory queue, and
     * what waits when the worker stops).
     */
    const recordSuccesses = (successes: ReadonlyArray<Success>) => sql`webhook_deliveries_succeeded(${successArrays(successes)})`

    const recordSuccessesAlone = (successes: ReadonlyArray<Success>): Effect.Effect<void> =>
      execute(sql`select ${recordSuccesses(successes)}`)

    /**
     * A claim of the worker (`webhook_jobs_claim`, migrations 0020 and 0034): the successes it carries recorded, their jobs settled, the next jobs
     * claimed and their deliveries leased (each that is due, unleased, and its subscription active), in one call
     * committed like the queue's bookkeeping, without waiting for the WAL flush (only a database crash can lose
     * it, and a lost lease is a lapsed one). Two jobs of one delivery in one claim: one of them gets it, the
     * other finds it taken, like a job of another claim.
     */
    const claimCall = (call: ClaimCall<Success>, leaseUntil: Date): Statement.Fragment => sql`
      webhook_jobs_claim(${successArrays(call.items)},
        ${call.ended.map((job) => job.id)}::bigint[], ${call.ended.map((job) => job.claim)}::integer[],
        ${call.queue}, ${call.at}, ${call.until}, ${call.perKey}::integer, ${call.perGroup}::integer,
        ${call.limit}::integer, ${call.async}, ${leaseUntil})`

    return {
      transaction: transaction(sql),
      lease,
      unclaimed,
      lockSubscription,
      subscriptionFailed,
      attemptFailed,
      release,
      givenUp,
      recordSuccesses,
      recordSuccessesAlone,
      claimCall
    } as const
  })
}) {}
