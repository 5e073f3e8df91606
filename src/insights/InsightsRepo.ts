/**
 * SQL of an agent's insights: reads of the conversations area's tables, each a range of an index by agent and
 * time (`messages_agent_replies`, `conversations_agent_started`, `conversations_agent_handoffs`, migration
 * 0042), so a period's cost is its own rows, never the agent's whole history. Rows decoded with Schema;
 * database failures are defects.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { MessageOutcome, Rating } from "../../schema/Conversations.js"
import { type AgentId, ConversationId, MessageId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { DbDate } from "../db/Columns.js"
import { decodeAll } from "../db/Sql.js"

/** A period: its first instant and the first instant after it. */
export interface Period {
  readonly start: Date
  readonly end: Date
}

const DayCount = Schema.Struct({ day: Schema.String, n: Schema.Int })

export const ReplyCount = Schema.Struct({
  day: Schema.String,
  outcome: MessageOutcome,
  n: Schema.Int,
  up: Schema.Int,
  down: Schema.Int
})
export type ReplyCount = typeof ReplyCount.Type

export const UnansweredRow = Schema.Struct({
  conversation_id: ConversationId,
  created_at: DbDate,
  question: Schema.String
})
export type UnansweredRow = typeof UnansweredRow.Type

export const RatedDownRow = Schema.Struct({
  id: MessageId,
  conversation_id: ConversationId,
  content: Schema.String,
  outcome: MessageOutcome,
  feedback_rating: Rating,
  feedback_comment: Schema.NullOr(Schema.String),
  feedback_updated_at: DbDate,
  created_at: DbDate,
  question: Schema.NullOr(Schema.String)
})
export type RatedDownRow = typeof RatedDownRow.Type

export class InsightsRepo extends Effect.Service<InsightsRepo>()("Insights/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const day = (column: string) => sql.literal(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD')`)
    const tenantIs = (t: Tenant, table: string) =>
      sql`${sql.literal(table)}.workspace_id = ${t.workspaceId} and ${sql.literal(table)}.environment = ${t.environment}`
    // the question a reply answered: the user message before it in its conversation (`messages_conversation`)
    const questionOf = sql.literal(`(
      select u.content from messages u
      where u.conversation_id = r.conversation_id and u.role = 'user' and u.seq < r.seq
      order by u.seq desc limit 1
    )`)

    /** Conversations started per day that had a message. */
    const conversationsPerDay = (tenant: Tenant, agentId: AgentId, period: Period) =>
      decodeAll(
        DayCount,
        sql`select ${day("started_at")} as day, count(*)::integer as n from conversations
          where agent_id = ${agentId} and started_at >= ${period.start} and started_at < ${period.end}
            and ${tenantIs(tenant, "conversations")} and message_count > 0
          group by 1`
      )

    /** Hand-offs asked for per day (each conversation's latest). */
    const handoffsPerDay = (tenant: Tenant, agentId: AgentId, period: Period) =>
      decodeAll(
        DayCount,
        sql`select ${day("handoff_requested_at")} as day, count(*)::integer as n from conversations
          where agent_id = ${agentId} and handoff_requested_at >= ${period.start} and handoff_requested_at < ${period.end}
            and ${tenantIs(tenant, "conversations")}
          group by 1`
      )

    /** Completed replies per day and outcome, with their ratings. */
    const repliesPerDay = (tenant: Tenant, agentId: AgentId, period: Period) =>
      decodeAll(
        ReplyCount,
        sql`select ${day("created_at")} as day, outcome, count(*)::integer as n,
            (count(*) filter (where feedback_rating = 'up'))::integer as up,
            (count(*) filter (where feedback_rating = 'down'))::integer as down
          from messages r
          where agent_id = ${agentId} and created_at >= ${period.start} and created_at < ${period.end}
            and ${tenantIs(tenant, "r")} and outcome is not null
          group by 1, 2`
      )

    /** The latest `limit` questions whose reply was not answered from knowledge, newest first. */
    const unanswered = (tenant: Tenant, agentId: AgentId, period: Period, limit: number) =>
      decodeAll(
        UnansweredRow,
        sql`select * from (
            select r.conversation_id, r.created_at, ${questionOf} as question from messages r
            where r.agent_id = ${agentId} and r.created_at >= ${period.start} and r.created_at < ${period.end}
              and ${tenantIs(tenant, "r")} and r.outcome in ('fallback', 'handed_off')
            order by r.created_at desc, r.seq desc limit ${limit}
          ) q where question is not null`
      )

    /** The latest `limit` replies rated down, newest first. */
    const ratedDown = (tenant: Tenant, agentId: AgentId, period: Period, limit: number) =>
      decodeAll(
        RatedDownRow,
        sql`select r.id, r.conversation_id, r.content, r.outcome, r.feedback_rating, r.feedback_comment,
            r.feedback_updated_at, r.created_at, ${questionOf} as question
          from messages r
          where r.agent_id = ${agentId} and r.created_at >= ${period.start} and r.created_at < ${period.end}
            and ${tenantIs(tenant, "r")} and r.feedback_rating = 'down'
          order by r.created_at desc, r.seq desc limit ${limit}`
      )

    return { conversationsPerDay, handoffsPerDay, repliesPerDay, unanswered, ratedDown } as const
  })
}) {}
