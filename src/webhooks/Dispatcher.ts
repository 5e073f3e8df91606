/**
 * The webhook dispatcher: claims due deliveries (`FOR UPDATE SKIP LOCKED` and a
 * lease, so instances share the work and a crashed one's claims lapse), POSTs
 * each event's fixed body with a fresh signature, records the attempt, and
 * applies the schedule, the degraded flag and auto-disable — all by the Clock.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import { failure, Fetcher, type PostResult } from "../../layers/Fetcher.js"
import { AppConfig } from "../Config.js"
import { Emails } from "../email/Emails.js"
import { now, unixSeconds } from "../Time.js"
import { disableAfterFailures, disableAfterMillis, nextAttemptAt } from "./Schedule.js"
import { signatureHeader } from "./Signature.js"
import { DeliverySignal } from "./Signal.js"

/**
 * A claim outlives the 10 s deadline comfortably; past it another dispatcher may
 * take the delivery. Kept short: a crashed instance's claims count against the
 * subscription's in-flight cap until they lapse.
 */
const leaseMillis = 30_000
/** Deliveries in flight per process. */
const concurrency = 16
/**
 * Deliveries in flight per subscription, across all instances: a slow receiver
 * can hold this many slots, never all of them, so it cannot stall the others.
 */
const perSubscription = 8

export const userAgent = "AssistantPlatform-Webhooks/1.0"

interface Claimed {
  readonly id: string
  readonly subscription_id: string
  readonly event_id: string
  readonly event_type: string
  readonly attempt_count: number
  readonly max_attempts: number
  readonly horizon_at: Date
  readonly url: string
  readonly secret: string
  readonly previous_secret: string | null
  readonly previous_secret_expires_at: Date | null
  readonly body: string
}

interface SubscriptionState {
  readonly is_active: boolean
  readonly consecutive_failures: number
  readonly failing_since: Date | null
  readonly workspace_id: string
  readonly owner_email: string
  readonly url: string
}

const describeFailure = (result: PostResult): string =>
  result._tag === "Failure"
    ? `${result.reason}: ${result.message}`
    : result.status >= 300 && result.status < 400
      ? `HTTP ${result.status} (redirects are not followed)`
      : `HTTP ${result.status}`

export class Dispatcher extends Effect.Service<Dispatcher>()("Webhooks/Dispatcher", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const fetcher = yield* Fetcher
    const emails = yield* Emails
    const signal = yield* DeliverySignal
    const config = yield* AppConfig

    /** Claims up to `limit` due deliveries, at most `perSubscription` in flight for any subscription. */
    const claimDue = (limit: number) =>
      Effect.gen(function* () {
        const at = yield* now
        return yield* sql<Claimed>`
          with candidates as (
            -- per active subscription, its earliest due deliveries, as many as it has free in-flight room
            select x.id, x.next_attempt_at
            from webhook_subscriptions s
            cross join lateral (
              select d.id, d.next_attempt_at from webhook_deliveries d
              where d.subscription_id = s.id and d.status = 'pending' and d.next_attempt_at <= ${at}
                and (d.locked_until is null or d.locked_until <= ${at})
              order by d.next_attempt_at
              limit greatest(${perSubscription} - (
                select count(*) from webhook_deliveries b
                where b.subscription_id = s.id and b.status = 'pending' and b.locked_until > ${at}), 0)
            ) x
            where s.is_active and s.deleted_at is null
          ),
          due as (
            select d.id from webhook_deliveries d
            where d.id in (select id from candidates)
            order by d.next_attempt_at
            limit ${limit}
            for update skip locked
          )
          update webhook_deliveries d set locked_until = ${new Date(at.getTime() + leaseMillis)}
          from due, webhook_subscriptions s, events e
          where d.id = due.id and s.id = d.subscription_id and e.id = d.event_id
          returning d.id, d.subscription_id, d.event_id, d.event_type, d.attempt_count, d.max_attempts, d.horizon_at,
            s.url, s.secret, s.previous_secret, s.previous_secret_expires_at, e.body`
      }).pipe(sql.withTransaction, Effect.orDie)

    /** Failure bookkeeping of the subscription; deactivates it and e-mails the owner past the threshold. */
    const subscriptionFailed = (subscriptionId: string, at: Date, dropped: boolean) =>
      Effect.gen(function* () {
        const [sub] = yield* sql<SubscriptionState>`
          select s.is_active, s.consecutive_failures, s.failing_since, s.workspace_id, s.url, w.owner_email
          from webhook_subscriptions s join workspaces w on w.id = s.workspace_id
          where s.id = ${subscriptionId} for update of s`
        if (sub === undefined) return
        const failures = sub.consecutive_failures + 1
        const since = sub.failing_since ?? at
        const disable = sub.is_active && failures >= disableAfterFailures && at.getTime() - since.getTime() >= disableAfterMillis
        yield* sql`
          update webhook_subscriptions set consecutive_failures = ${failures}, failing_since = ${since},
            degraded = degraded or ${dropped}, is_active = is_active and not ${disable}, updated_at = ${at}
          where id = ${subscriptionId}`
        if (disable) {
          yield* emails.enqueue({
            to: sub.owner_email,
            subject: "A webhook subscription was disabled",
            text: [
              `Your webhook subscription ${subscriptionId} (${sub.url}) failed ${failures} times in a row since ${since.toISOString()}.`,
              "It has been deactivated. Pending deliveries are kept: fix the receiver, then set is_active to true",
              "(PATCH /v1/webhooks/{id}) and deliveries still inside their 24 h horizon will resume."
            ].join("\n"),
            workspaceId: sub.workspace_id as never
          })
        }
      })

    const record = (c: Claimed, at: Date, result: PostResult) =>
      Effect.gen(function* () {
        const ok = result._tag === "Response" && result.status >= 200 && result.status < 300
        const status = result._tag === "Response" ? result.status : null
        const error = ok ? null : describeFailure(result)
        yield* sql`
          insert into webhook_attempts ${sql.insert({
            delivery_id: c.id,
            attempted_at: at,
            response_status: status,
            duration_ms: Math.round(result.durationMillis),
            response_body_excerpt: result._tag === "Response" ? result.bodyExcerpt : null,
            error
          })}`
        const attempts = c.attempt_count + 1
        if (ok) {
          yield* sql`
            update webhook_deliveries set status = 'succeeded', attempt_count = ${attempts}, last_attempted_at = ${at},
              first_attempt_at = coalesce(first_attempt_at, ${at}), response_status = ${status},
              next_attempt_at = null, locked_until = null, last_error = null
            where id = ${c.id}`
          yield* sql`
            update webhook_subscriptions set consecutive_failures = 0, failing_since = null, degraded = false
            where id = ${c.subscription_id} and (consecutive_failures <> 0 or degraded)`
          return
        }
        const next = attempts >= c.max_attempts ? null : nextAttemptAt(attempts, at, c.horizon_at)
        yield* sql`
          update webhook_deliveries set status = ${next === null ? "failed" : "pending"}, attempt_count = ${attempts},
            last_attempted_at = ${at}, first_attempt_at = coalesce(first_attempt_at, ${at}), response_status = ${status},
            next_attempt_at = ${next}, locked_until = null, last_error = ${error}
          where id = ${c.id}`
        yield* subscriptionFailed(c.subscription_id, at, next === null)
      }).pipe(sql.withTransaction)

    /** Past its horizon (it waited on an inactive subscription): dropped without an attempt. */
    const expire = (c: Claimed, at: Date) =>
      Effect.gen(function* () {
        yield* sql`
          update webhook_deliveries set status = 'failed', next_attempt_at = null, locked_until = null,
            last_error = 'dropped: the 24 h retry horizon passed'
          where id = ${c.id}`
        yield* sql`update webhook_subscriptions set degraded = true where id = ${c.subscription_id}`
      }).pipe(sql.withTransaction)

    const deliver = (c: Claimed) =>
      Effect.gen(function* () {
        const at = yield* now
        if (at.getTime() > c.horizon_at.getTime()) return yield* expire(c, at)
        const secrets = [c.secret]
        if (c.previous_secret !== null && c.previous_secret_expires_at !== null && c.previous_secret_expires_at > at) {
          secrets.push(c.previous_secret)
        }
        const result = yield* fetcher.post({
          url: c.url,
          body: c.body,
          headers: {
            "content-type": "application/json",
            "user-agent": userAgent,
            "service-signature": signatureHeader(secrets, unixSeconds(at), c.body),
            "service-event-id": c.event_id,
            "service-event-type": c.event_type,
            "service-delivery-id": c.id
          },
          timeoutMillis: config.webhookResponseDeadlineMillis,
          allowPrivate: config.allowPrivateUrls
        }).pipe(
          // the deadline by the Clock as well (the Fetcher's own timer is real time), so TestClock drives it
          Effect.timeoutTo({
            duration: config.webhookResponseDeadlineMillis,
            onSuccess: (posted): PostResult => posted,
            onTimeout: (): PostResult =>
              failure(
                "timeout",
                `timed out after ${config.webhookResponseDeadlineMillis} ms`,
                config.webhookResponseDeadlineMillis
              )
          })
        )
        yield* record(c, at, result)
      }).pipe(
        Effect.catchAllCause((cause) => Effect.logError(`delivery ${c.id} could not be recorded`, cause)),
        // on shutdown, hand the claim back at once rather than after the lease
        Effect.onInterrupt(() =>
          sql`update webhook_deliveries set locked_until = null where id = ${c.id} and status = 'pending'`.pipe(
            Effect.ignore
          )
        )
      )

    /** When the next pending delivery of an active subscription falls due (or its lease lapses). */
    const nextDueAt = Effect.gen(function* () {
      const [row] = yield* sql<{ readonly at: Date | null }>`
        select min(greatest(d.next_attempt_at, coalesce(d.locked_until, d.next_attempt_at))) as at
        from webhook_deliveries d join webhook_subscriptions s on s.id = d.subscription_id
        where d.status = 'pending' and s.is_active and s.deleted_at is null`
      return Option.fromNullable(row?.at ?? null)
    }).pipe(Effect.orDie)

    /**
     * Runs forever as a pool of `concurrency` slots: whenever slots are free it
     * claims that many due deliveries and sends each in its own fiber; then it
     * sleeps until a slot frees, the next due time, the poll interval, or the bell.
     */
    const run = Effect.scoped(
      Effect.gen(function* () {
        const inFlight = yield* FiberSet.make()
        const slotFreed = yield* Queue.sliding<void>(1)
        let busy = 0
        const start = (c: Claimed) => {
          busy++
          return FiberSet.run(
            inFlight,
            deliver(c).pipe(Effect.ensuring(Effect.suspend(() => (busy--, Queue.offer(slotFreed, undefined)))))
          )
        }
        while (true) {
          const free = concurrency - busy
          const claimedAt = (yield* now).getTime()
          const claimed = free > 0 ? yield* claimDue(free) : []
          for (const c of claimed) yield* start(c)
          if (free > 0 && claimed.length === free) continue
          const due = yield* nextDueAt
          // read the clock right before sleeping: a clock that moved during the query must not push the wake-up later
          const wait = yield* Effect.map(now, (at) =>
            Option.match(due, {
              onNone: () => config.webhookPollMillis,
              // due by the time of the claim but not claimed: every slot busy or its subscription at the cap,
              // so a freed slot (or the poll) wakes us; due since then: go again at once
              onSome: (d) =>
                d.getTime() <= claimedAt
                  ? config.webhookPollMillis
                  : Math.min(Math.max(0, d.getTime() - at.getTime()), config.webhookPollMillis)
            })
          )
          yield* Effect.raceAll([Effect.sleep(wait), signal.wait, Queue.take(slotFreed)])
        }
      })
    )

    return { run } as const
  })
}) {}
