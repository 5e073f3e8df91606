/**
 * The webhook dispatcher: a JobQueue worker on the `webhooks` queue, one job per
 * delivery keyed by subscription (at most `perSubscription` in flight for one
 * subscription, across instances). Each claim of jobs takes their deliveries'
 * own leases in the same call (so a duplicate job can never send one twice at
 * once); a job's handler POSTs the event's fixed body with a fresh signature.
 * A success is recorded by the worker's next claim, together with the
 * successes that ended with it, in the call that settles their jobs and
 * claims the next ones (`Outcome.finish`; one database function,
 * `webhook_jobs_claim` of migration 0020, whose statements are planned once
 * per session); a failure records its attempt and
 * applies the schedule, the degraded flag and auto-disable — all by the
 * Clock. The `webhook_deliveries` rows stay the record; the job follows them.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { failure, Fetcher, type PostResult } from "../../layers/Fetcher.js"
import { type Job, JobQueue, Outcome } from "../../layers/JobQueue.js"
import { AppConfig } from "../Config.js"
import { boundary } from "../db/Sql.js"
import { Emails } from "../email/Emails.js"
import { now, unixSeconds } from "../Time.js"
import { Claimed, DispatchRepo, type Success } from "./DispatchRepo.js"
import { disableAfterFailures, disableAfterMillis, maxAttempts, nextAttemptAt } from "./Schedule.js"
import { signatureHeader } from "./Signature.js"
import { recordDelivery } from "./Metrics.js"

/** The JobQueue queue of deliveries (key: subscription id; payload: `{ deliveryId }`). */
export const webhookQueue = "webhooks"

/** Deliveries in flight per process. */
const concurrency = 16
/**
 * Deliveries in flight per subscription, across all instances: a slow receiver
 * can hold this many slots, never all of them, so it cannot stall the others.
 */
export const perSubscription = 8
/**
 * Deliveries in flight per workspace, across all instances, unless `WEBHOOK_WORKSPACE_SHARE` says otherwise: above
 * one subscription's cap, so a workspace's slow receiver leaves its other subscriptions slots (4 of a process's
 * 16), and below the pool, so a workspace whose receivers never answer leaves other workspaces 4.
 */
export const defaultWebhookWorkspaceShare = 12

/** How often a job of an inactive subscription looks again (reactivation hurries it at once). */
const inactiveRecheckMillis = 24 * 60 * 60_000

/** The real-time Clock every fiber has unless a test (TestClock) or a program provides another. */
const liveClock = Context.get(DefaultServices.liveServices, Clock.Clock)

const DeliveryJob = Schema.Struct({ deliveryId: Schema.String })

export const userAgent = "AssistantPlatform-Webhooks/1.0"

const describeFailure = (result: PostResult): string =>
  result._tag === "Failure"
    ? `${result.reason}: ${result.message}`
    : result.status >= 300 && result.status < 400
      ? `HTTP ${result.status} (redirects are not followed)`
      : `HTTP ${result.status}`

export class Dispatcher extends Effect.Service<Dispatcher>()("Webhooks/Dispatcher", {
  effect: Effect.gen(function* () {
    const repo = yield* DispatchRepo
    const fetcher = yield* Fetcher
    const emails = yield* Emails
    const jobs = yield* JobQueue
    const config = yield* AppConfig
    // a claim outlives the response deadline (checked at start); past it another dispatcher may take the delivery
    const leaseMillis = config.webhookLeaseMillis

    const decodeClaimed = Schema.decodeUnknown(Claimed)

    /**
     * The deliveries of one claim's jobs, leased, by delivery id: those the claim
     * took (`webhookClaim`), or else (a store that ran no claim call: memory) taken
     * here in one statement by the same rule. Each handler takes its own.
     */
    const claimDeliveries = (jobs: ReadonlyArray<Job>) =>
      Effect.gen(function* () {
        const taken = new Map<string, Claimed>()
        if (jobs.every((job) => job.alongside !== undefined)) {
          for (const job of jobs) {
            if (job.alongside === undefined || Option.isNone(job.alongside)) continue
            const row = yield* boundary(decodeClaimed(job.alongside.value))
            taken.set(row.id, row)
          }
          return taken
        }
        const ids: Array<string> = []
        for (const job of jobs) {
          const payload = Schema.decodeUnknownEither(DeliveryJob)(job.payload)
          if (Either.isRight(payload)) ids.push(payload.right.deliveryId)
        }
        return yield* leaseDeliveries(ids)
      })

    /**
     * Leases these deliveries where they are due and free, in a statement of its own (its own snapshot), by the
     * lease rule the claim call uses (`webhook_deliveries_lease`, migration 0017).
     */
    const leaseDeliveries = (ids: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const taken = new Map<string, Claimed>()
        if (ids.length === 0) return taken
        const at = yield* now
        for (const row of yield* repo.lease(ids, at, new Date(at.getTime() + leaseMillis))) taken.set(row.id, row)
        return taken
      })

    /** Why a delivery could not be claimed: when its job should look again, if ever. */
    const notClaimed = (id: string, at: Date) =>
      Effect.gen(function* () {
        const found = yield* repo.unclaimed(id)
        if (Option.isNone(found)) return Outcome.done
        const row = found.value
        if (row.status !== "pending" || row.deleted_at !== null) return Outcome.done
        if (!row.is_active) return Outcome.retryAt(new Date(at.getTime() + inactiveRecheckMillis), "subscription inactive")
        // not due yet (a manual retry's older job), or leased by another dispatcher
        const times = [row.next_attempt_at, row.locked_until].filter((d): d is Date => d !== null).map((d) => d.getTime())
        return Outcome.retryAt(new Date(Math.max(at.getTime() + 1, ...times)))
      })

    /** Failure bookkeeping of the subscription; deactivates it and e-mails the owner past the threshold. */
    const subscriptionFailed = (subscriptionId: string, at: Date, dropped: boolean) =>
      Effect.gen(function* () {
        const found = yield* repo.lockSubscription(subscriptionId)
        if (Option.isNone(found)) return
        const sub = found.value
        const failures = sub.consecutive_failures + 1
        const since = sub.failing_since ?? at
        const disable = sub.is_active && failures >= disableAfterFailures && at.getTime() - since.getTime() >= disableAfterMillis
        yield* repo.subscriptionFailed(subscriptionId, { failures, since, dropped, disable }, at)
        if (disable) {
          yield* emails.enqueue({
            to: sub.owner_email,
            subject: "A webhook subscription was disabled",
            text: [
              `Your webhook subscription ${subscriptionId} (${sub.url}) failed ${failures} times in a row since ${since.toISOString()}.`,
              "It has been deactivated. Pending deliveries are kept: fix the receiver, then set is_active to true",
              "(PATCH /v1/webhooks/{id}) and deliveries still inside their 24 h horizon will resume."
            ].join("\n"),
            workspaceId: sub.workspace_id
          })
        }
      })

    /**
     * Records an attempt; what the job becomes. A success is handed to the worker (`Outcome.finish`): its next
     * claim records it with the others that ended meanwhile, settles their jobs and claims the next ones, in one
     * round trip. A failure is a transaction with the subscription's bookkeeping.
     */
    const record = (c: Claimed, at: Date, result: PostResult): Effect.Effect<Outcome<Success>> => {
      const status = result._tag === "Response" ? result.status : null
      if (result._tag === "Response" && result.status >= 200 && result.status < 300) {
        return Effect.succeed(Outcome.finish({
          claimed: c,
          at,
          status: result.status,
          durationMillis: Math.round(result.durationMillis),
          bodyExcerpt: result.bodyExcerpt
        }))
      }
      const error = describeFailure(result)
      const attempts = c.attempt_count + 1
      const next = attempts >= c.max_attempts ? null : nextAttemptAt(attempts, at, c.horizon_at)
      return repo.transaction(
        Effect.gen(function* () {
          yield* repo.attemptFailed(c.id, {
            at,
            status,
            durationMillis: Math.round(result.durationMillis),
            bodyExcerpt: result._tag === "Response" ? result.bodyExcerpt : null,
            error,
            attempts,
            next
          })
          yield* subscriptionFailed(c.subscription_id, at, next === null)
          return next === null ? Outcome.done : Outcome.retryAt(next)
        })
      )
    }

    // the deadline raced by a Clock that is not real time (a fiber and a timer per POST, so not by default)
    const clockDeadline = {
      duration: config.webhookResponseDeadlineMillis,
      onSuccess: (posted: PostResult): PostResult => posted,
      onTimeout: (): PostResult =>
        failure("timeout", `timed out after ${config.webhookResponseDeadlineMillis} ms`, config.webhookResponseDeadlineMillis)
    }

    const deliver = (c: Claimed) =>
      Effect.gen(function* () {
        // No horizon test here: the horizon bounds the schedule (`nextAttemptAt` never schedules past it, the tenth
        // attempt falls on it), and a claim always runs a little after its due time, so an attempt that was due is
        // made however late its claim. What waited past its horizon on an inactive subscription is dropped by the
        // reactivation (`Webhooks.update`), so it is never claimed.
        const at = yield* now
        const secrets = [c.secret]
        if (c.previous_secret !== null && c.previous_secret_expires_at !== null && c.previous_secret_expires_at > at) {
          secrets.push(c.previous_secret)
        }
        const posted = fetcher.post({
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
        })
        const result = yield* Effect.clockWith((clock) =>
          // the Fetcher's own deadline is a real timer: under the live Clock it is the Clock's deadline already;
          // under another Clock (TestClock) the deadline is raced by that Clock as well, so it drives it
          clock === liveClock ? posted : Effect.timeoutTo(posted, clockDeadline)
        )
        const outcome = yield* record(c, at, result)
        const ok = result._tag === "Response" && result.status >= 200 && result.status < 300
        yield* recordDelivery(ok ? "succeeded" : outcome._tag === "Retry" ? "retrying" : "failed")
        return outcome
      }).pipe(
        // the delivery's lease lapses and the job's retry takes it again
        Effect.catchAllCause((cause) =>
          Effect.zipRight(
            Effect.logError(`delivery ${c.id} could not be recorded`, cause),
            Effect.map(now, (at) => Outcome.retryAt(new Date(at.getTime() + leaseMillis), "could not be recorded"))
          )
        )
      )

    const releaseDelivery = (id: string) => Effect.ignore(repo.release(id))

    const deliveryOf = (job: Job): string | undefined => {
      const payload = Schema.decodeUnknownEither(DeliveryJob)(job.payload)
      return Either.isRight(payload) ? payload.right.deliveryId : undefined
    }

    const handle = (job: Job, taken: Map<string, Claimed>) => {
      const id = deliveryOf(job)
      if (id === undefined) return Effect.succeed(Outcome.failed("not a delivery job"))
      // whether this job holds its delivery's lease: set in the step that takes it, so an interruption never falls
      // between the two (what its claim took and it has not picked up is given back by `handBack`)
      let mine = false
      const hold = (claimed: Claimed | undefined) => {
        if (claimed !== undefined) mine = true
        return Option.fromNullable(claimed)
      }
      return Effect.gen(function* () {
        let claimed = yield* Effect.sync(() => {
          const found = taken.get(id)
          taken.delete(id)
          return hold(found)
        })
        // Not taken by the claim (not due, leased by another dispatcher, its subscription inactive, done, or a
        // store that ran no claim call): one more try in a statement of its own, then the reason decides the job.
        if (Option.isNone(claimed)) {
          claimed = yield* Effect.uninterruptible(Effect.map(leaseDeliveries([id]), (leased) => hold(leased.get(id))))
        }
        if (Option.isNone(claimed)) return yield* Effect.flatMap(now, (at) => notClaimed(id, at))
        return yield* deliver(claimed.value)
      }).pipe(
        // on shutdown, hand the delivery's lease back at once rather than after it lapses
        Effect.onInterrupt(() => (mine ? releaseDelivery(id) : Effect.void))
      )
    }

    /**
     * A job handed back on shutdown gives back its delivery's lease if its claim took it and its handler did not
     * pick it up (that one gives it back itself): before the job's own lease, so the next claim of the job finds
     * the delivery free. Without `prepare`'s result (interrupted), by the claim's own row for the job.
     */
    const handBack = (job: Job, taken: Map<string, Claimed> | undefined) => {
      const id = deliveryOf(job)
      if (id === undefined) return Effect.void
      const takenByClaim =
        taken === undefined ? job.alongside !== undefined && Option.isSome(job.alongside) : taken.delete(id)
      return takenByClaim ? releaseDelivery(id) : Effect.void
    }

    /**
     * The queue's `onGiveUp`: the delivery's job ended without recording its last attempt (its claims failed, or its
     * attempts stopped their process). The delivery ends `failed` with the reason, not `pending` with no job left
     * to send it; the subscription's failure count is the receiver's and is left alone.
     */
    const giveUp = (job: Job, reason: string) => {
      const id = deliveryOf(job)
      if (id === undefined) return Effect.void
      return repo.givenUp(id, `not delivered: an internal error occurred (${reason})`)
    }

    /**
     * Runs forever: `concurrency` deliveries at once, `perSubscription` per subscription, the workspace's share per
     * workspace; supervises itself.
     */
    const run: Effect.Effect<never> = jobs.worker({
      queue: webhookQueue,
      concurrency,
      perKey: perSubscription,
      // a workspace's subscriptions together (the job's group) hold at most its share of the slots
      perGroup: config.webhookWorkspaceShare ?? defaultWebhookWorkspaceShare,
      leaseMillis,
      pollMillis: config.webhookPollMillis,
      claimCall: (call) => repo.claimCall(call, new Date(call.at.getTime() + leaseMillis)),
      prepare: claimDeliveries,
      // its handler settles every outcome itself; only a failed `prepare` fails an attempt: the bound is above the
      // delivery's own schedule, with room for attempts that could not be recorded
      maxAttempts: 2 * maxAttempts,
      handBack,
      onGiveUp: giveUp,
      finish: { write: repo.recordSuccesses, alone: repo.recordSuccessesAlone },
      handle
    })

    return { run } as const
  }),
  dependencies: [DispatchRepo.Default]
}) {}
