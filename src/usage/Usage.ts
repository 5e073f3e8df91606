/**
 * Usage and credits. A reply is reserved before it is generated
 * (`reserveReply`: counted against the plan's monthly replies cap, one credit
 * with a live key, none in the sandbox) and released if it does not complete
 * (`releaseReply`), so refused and abandoned replies cost nothing.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { LimitReached } from "../../schema/Errors.js"
import type { Tenant } from "../../schema/Tenant.js"
import type { Usage as UsageObject } from "../../schema/Usage.js"
import { Tickets } from "../tickets/Tickets.js"
import { iso, now } from "../Time.js"
import { monthlyRefreshCap, monthlyReplyCap, monthlyTicketCap, monthOf, periodOf } from "./Plans.js"
import { UsageRepo } from "./UsageRepo.js"

/** A reply counted by `reserveReply`; hand it back to `releaseReply` if the reply is not completed. */
export interface Reservation {
  /** Credits the reply consumed: 1 with a live key, 0 in the sandbox. */
  readonly credits: number
  /** The month (`YYYY-MM`, UTC) it was counted in, which a release must decrement. */
  readonly month: string
}

export class Usage extends Effect.Service<Usage>()("Usage/Programs", {
  effect: Effect.gen(function* () {
    const repo = yield* UsageRepo
    const tickets = yield* Tickets

    /**
     * Counts a reply about to be generated, or fails with `LimitReached` (402)
     * when this month's replies are used up. Runs as one statement that commits
     * on its own: call it before the reply, outside any long transaction.
     */
    const reserveReply = Effect.fn("Usage.reserveReply")(function* (tenant: Tenant) {
      const at = yield* now
      const month = monthOf(at)
      const credits = tenant.environment === "live" ? 1 : 0
      const counted = yield* repo.reserve(tenant, month, credits, monthlyReplyCap)
      if (counted._tag === "None") {
        // refused: only now is the plan read, for the message
        const plan = yield* repo.plan(tenant)
        const cap = monthlyReplyCap[plan]
        return yield* new LimitReached({
          message: `The ${plan} plan allows ${cap} replies per month; this month's are used up.`
        })
      }
      return { credits, month } satisfies Reservation
    })

    /** Undoes a reservation whose reply was not completed (failed, interrupted, refused later). */
    const releaseReply = Effect.fn("Usage.releaseReply")(function* (tenant: Tenant, reservation: Reservation) {
      yield* repo.release(tenant, reservation.month, reservation.credits)
    })

    /**
     * Runs `reply` under a reservation: refused with `LimitReached` before it
     * starts when the month's replies are used up, and given back if `reply`
     * fails or is interrupted (a client that went away), so only completed
     * replies count and cost credits. A streamed reply whose completion is
     * decided elsewhere uses `reserveReply` / `releaseReply` directly.
     */
    const withReply = <A, E, R>(tenant: Tenant, reply: (reservation: Reservation) => Effect.Effect<A, E, R>) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(reserveReply(tenant), (reservation) =>
          restore(reply(reservation)).pipe(
            Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : releaseReply(tenant, reservation)))
          )
        )
      )

    const summary = Effect.fn("Usage.summary")(function* (tenant: Tenant) {
      const at = yield* now
      const month = monthOf(at)
      const period = periodOf(at)
      const plan = yield* repo.plan(tenant)
      const [counter, ticketsUsed] = yield* Effect.all([repo.counter(tenant, month), tickets.monthCount(tenant, month)])
      return {
        object: "usage",
        plan,
        livemode: tenant.environment === "live",
        period: { start: iso(period.start), end: iso(period.end) },
        tickets: { used: ticketsUsed, cap: monthlyTicketCap[plan] },
        replies: { used: counter.replies, cap: monthlyReplyCap[plan] },
        credits: { consumed: counter.credits }
      } satisfies UsageObject
    })

    /**
     * Counts up to `wanted` refreshes this month within the plan's cap: how many may run (fewer, down to none, when
     * the month's are nearly or all used). Inside the caller's transaction: they count when it commits.
     */
    const reserveRefreshes = Effect.fn("Usage.reserveRefreshes")(function* (tenant: Tenant, wanted: number) {
      const at = yield* now
      const plan = yield* repo.plan(tenant)
      const granted = yield* repo.reserveRefreshes(tenant, monthOf(at), wanted, monthlyRefreshCap[plan])
      return { granted: granted.granted, plan, cap: monthlyRefreshCap[plan] }
    })

    /** Gives back refreshes counted this month that will not run. */
    const releaseRefreshes = (tenant: Tenant, count: number) =>
      Effect.flatMap(now, (at) => repo.releaseRefreshes(tenant, monthOf(at), count))

    return { reserveReply, releaseReply, withReply, summary, reserveRefreshes, releaseRefreshes } as const
  }),
  dependencies: [UsageRepo.Default, Tickets.Default]
}) {}
