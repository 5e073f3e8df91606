/**
 * An agent's insights over a period of UTC days (`GET /v1/agents/{id}/insights`): the period checked and
 * bounded, its figures read per day (zeros filled in), the unanswered questions grouped (`Grouping.ts`) and
 * the replies rated down.
 */
import * as Effect from "effect/Effect"
import {
  defaultInsightDays,
  type InsightDay,
  type InsightParams,
  type Insights as InsightsValue,
  maxGroupConversations,
  maxInsightDays,
  maxRatedDown,
  maxUnansweredGroups,
  maxUnansweredQuestions
} from "../../schema/Insights.js"
import { ParameterInvalid } from "../../schema/Errors.js"
import { type AgentId, ConversationId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { Agents } from "../agents/Agents.js"
import { iso, now } from "../Time.js"
import { groupQuestions } from "./Grouping.js"
import { InsightsRepo } from "./InsightsRepo.js"

const dayMillis = 24 * 60 * 60_000

const dayOf = (at: Date) => at.toISOString().slice(0, 10)

/** A `YYYY-MM-DD` of the calendar as its first instant (UTC), or a failure on `param`. */
const parseDay = (value: string, param: "from" | "to") => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
  const at = match === null ? undefined : new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])))
  if (at === undefined || Number.isNaN(at.getTime()) || dayOf(at) !== value) {
    return Effect.fail(
      new ParameterInvalid({
        message: `${param} must be a day of the calendar as YYYY-MM-DD (UTC); got '${value.slice(0, 40)}'`,
        param
      })
    )
  }
  return Effect.succeed(at)
}

/** A day's figures (or the period's), counted up. */
interface Tally {
  conversations: number
  replies: { answered: number; fallback: number; handed_off: number }
  ratings: { up: number; down: number }
  handoffs: number
}

const emptyFigures = (): Tally => ({
  conversations: 0,
  replies: { answered: 0, fallback: 0, handed_off: 0 },
  ratings: { up: 0, down: 0 },
  handoffs: 0
})

export class Insights extends Effect.Service<Insights>()("Insights/Insights", {
  effect: Effect.gen(function* () {
    const repo = yield* InsightsRepo
    const agents = yield* Agents

    /** The period asked for, checked: its first day, and the first instant after its last. */
    const period = Effect.fn("Insights.period")(function* (params: InsightParams) {
      const today = new Date(Date.parse(`${dayOf(yield* now)}T00:00:00Z`))
      const last = params.to === undefined ? today : yield* parseDay(params.to, "to")
      const first =
        params.from === undefined ? new Date(last.getTime() - (defaultInsightDays - 1) * dayMillis) : yield* parseDay(params.from, "from")
      if (first.getTime() > last.getTime()) {
        return yield* new ParameterInvalid({ message: `from (${dayOf(first)}) is after to (${dayOf(last)})`, param: "from" })
      }
      const days = Math.round((last.getTime() - first.getTime()) / dayMillis) + 1
      if (days > maxInsightDays) {
        return yield* new ParameterInvalid({
          message: `The period is at most ${maxInsightDays} days; from ${dayOf(first)} to ${dayOf(last)} is ${days}`,
          param: "from"
        })
      }
      return { start: first, end: new Date(last.getTime() + dayMillis), days }
    })

    const retrieve = Effect.fn("Insights.retrieve")(function* (tenant: Tenant, agentId: AgentId, params: InsightParams) {
      const range = yield* period(params)
      yield* agents.retrieve(tenant, agentId)
      const [conversations, handoffs, replies, unanswered, ratedDown] = yield* Effect.all([
        repo.conversationsPerDay(tenant, agentId, range),
        repo.handoffsPerDay(tenant, agentId, range),
        repo.repliesPerDay(tenant, agentId, range),
        repo.unanswered(tenant, agentId, range, maxUnansweredQuestions + 1),
        repo.ratedDown(tenant, agentId, range, maxRatedDown)
      ])

      const byDay = new Map<string, Tally>()
      for (let i = 0; i < range.days; i++) byDay.set(dayOf(new Date(range.start.getTime() + i * dayMillis)), emptyFigures())
      const totals: Tally = emptyFigures()
      const at = (day: string) => byDay.get(day)
      for (const row of conversations) {
        const tally = at(row.day)
        if (tally !== undefined) tally.conversations += row.n
        totals.conversations += row.n
      }
      for (const row of handoffs) {
        const tally = at(row.day)
        if (tally !== undefined) tally.handoffs += row.n
        totals.handoffs += row.n
      }
      for (const row of replies) {
        for (const tally of [at(row.day), totals]) {
          if (tally === undefined) continue
          tally.replies[row.outcome] += row.n
          tally.ratings.up += row.up
          tally.ratings.down += row.down
        }
      }

      const sampled = unanswered.length > maxUnansweredQuestions
      const groups = groupQuestions(
        unanswered.slice(0, maxUnansweredQuestions).map((r) => ({ question: r.question, conversationId: r.conversation_id, at: r.created_at }))
      )

      const days: Array<InsightDay> = [...byDay.entries()].map(([date, tally]) => ({ date, ...tally }))
      return {
        object: "insights",
        agent_id: agentId,
        from: dayOf(range.start),
        to: dayOf(new Date(range.end.getTime() - dayMillis)),
        totals,
        days,
        unanswered: groups.slice(0, maxUnansweredGroups).map((g) => ({
          question: g.question,
          count: g.count,
          conversation_ids: g.conversationIds.slice(0, maxGroupConversations).map((id) => ConversationId.make(id)),
          last_asked_at: iso(g.lastAskedAt)
        })),
        unanswered_sampled: sampled,
        rated_down: ratedDown.map((r) => ({
          message_id: r.id,
          conversation_id: r.conversation_id,
          question: r.question,
          reply: r.content,
          outcome: r.outcome,
          comment: r.feedback_comment,
          created_at: iso(r.created_at),
          rated_at: iso(r.feedback_updated_at)
        }))
      } satisfies InsightsValue
    })

    return { retrieve } as const
  }),
  dependencies: [InsightsRepo.Default]
}) {}
