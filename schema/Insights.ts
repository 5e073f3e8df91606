/**
 * An agent's insights over a period of days (UTC): its conversations, its replies by outcome, their ratings
 * and hand-offs, in total and per day; the questions it could not answer, similar ones grouped; and the
 * replies rated down with their comments.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, RequiredScope } from "./Auth.js"
import { MessageOutcome } from "./Conversations.js"
import { Envelope, Timestamp } from "./Envelope.js"
import { ApiError, ParameterInvalid, ResourceMissing } from "./Errors.js"
import { AgentId, ConversationId, MessageId } from "./Ids.js"
import { reference } from "./Reference.js"

/** The longest period, in days (both ends included). */
export const maxInsightDays = 90
/** The period without `from`: this many days, ending with `to`. */
export const defaultInsightDays = 30
/** The latest unanswered questions of the period that are grouped. */
export const maxUnansweredQuestions = 1_000
/** The largest groups shown. */
export const maxUnansweredGroups = 50
/** The conversations named per group, newest first. */
export const maxGroupConversations = 20
/** The latest replies rated down that are shown. */
export const maxRatedDown = 50

export const Day = Schema.String.annotations({
  description: "A day, `YYYY-MM-DD` (UTC)",
  jsonSchema: { type: "string", format: "date" }
})

export const InsightParams = Schema.Struct({
  from: Schema.optional(Day).annotations({
    description: `First day (UTC, included); default: ${defaultInsightDays - 1} days before \`to\``
  }),
  to: Schema.optional(Day).annotations({ description: "Last day (UTC, included); default: today" })
})
export type InsightParams = typeof InsightParams.Type

const count = (description: string) => Schema.Int.annotations({ description })

export const OutcomeCounts = Schema.Struct({
  answered: count("Replies that drew on knowledge"),
  fallback: count("Replies that found nothing relevant (the fallback)"),
  handed_off: count("Replies after which the conversation went to people")
}).annotations({ identifier: "OutcomeCounts" })

export const InsightFigures = Schema.Struct({
  conversations: count("Conversations started (with at least one message)"),
  replies: OutcomeCounts,
  ratings: Schema.Struct({
    up: count("Replies of the period rated helpful"),
    down: count("Replies of the period rated not helpful")
  }).annotations({ identifier: "RatingCounts" }),
  handoffs: count("Conversations handed off to people (by the day the hand-off was asked for)")
}).annotations({ identifier: "InsightFigures" })
export type InsightFigures = typeof InsightFigures.Type

export const InsightDay = Schema.Struct({
  date: Day,
  ...InsightFigures.fields
}).annotations({ identifier: "InsightDay" })
export type InsightDay = typeof InsightDay.Type

export const UnansweredGroup = Schema.Struct({
  question: Schema.String.annotations({ description: "The group's most asked wording (the latest of equals), as a visitor wrote it" }),
  count: count("Times a question of the group was asked in the period"),
  conversation_ids: Schema.Array(ConversationId).annotations({
    description: `Its conversations, newest first (at most ${maxGroupConversations})`
  }),
  last_asked_at: Timestamp
}).annotations({
  identifier: "UnansweredGroup",
  description:
    "Questions whose reply was `fallback` or `handed_off`, grouped by the words they share (folded, stemmed, stop words out)"
})
export type UnansweredGroup = typeof UnansweredGroup.Type

export const RatedDown = Schema.Struct({
  message_id: MessageId,
  conversation_id: ConversationId,
  question: Schema.NullOr(Schema.String).annotations({ description: "The visitor's message the reply answered" }),
  reply: Schema.String.annotations({ description: "The reply's text" }),
  outcome: MessageOutcome,
  comment: Schema.NullOr(Schema.String).annotations({ description: "The rating's comment; null: none" }),
  created_at: Timestamp.annotations({ description: "When the question was asked" }),
  rated_at: Timestamp
}).annotations({ identifier: "RatedDown" })
export type RatedDown = typeof RatedDown.Type

export const Insights = Schema.Struct({
  object: Schema.Literal("insights"),
  agent_id: AgentId,
  from: Day,
  to: Day,
  totals: InsightFigures,
  days: Schema.Array(InsightDay).annotations({ description: "One per day of the period, oldest first, zeros included" }),
  unanswered: Schema.Array(UnansweredGroup).annotations({
    description: `The groups, largest first (at most ${maxUnansweredGroups})`
  }),
  unanswered_sampled: Schema.Boolean.annotations({
    description: `True when the period had more unanswered questions than the ${maxUnansweredQuestions.toLocaleString("en")} latest grouped`
  }),
  rated_down: Schema.Array(RatedDown).annotations({
    description: `Replies of the period rated not helpful, newest first (at most ${maxRatedDown})`
  })
}).annotations({ identifier: "Insights" })
export type Insights = typeof Insights.Type

const agentPath = HttpApiSchema.param("id", AgentId)

export class InsightsGroup extends HttpApiGroup.make("insights")
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/agents/${agentPath}/insights`
      .setUrlParams(InsightParams)
      .addSuccess(Envelope(Insights))
      .addError(ApiError(ResourceMissing))
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "read:conversations")
      .annotate(
        OpenApi.Description,
        `Query \`from\`, \`to\` (days \`YYYY-MM-DD\`, UTC, both included; default the last ${defaultInsightDays} days ` +
          `to today; at most ${maxInsightDays} days; else \`400 parameter_invalid\` on the day's name). The agent's ` +
          "conversations, replies by outcome, ratings and hand-offs, in `totals` and per day in `days`; the unanswered " +
          "questions grouped in `unanswered`; the replies rated down in `rated_down`"
      )
      .annotate(
        OpenApi.Summary,
        "What an agent did over a period: replies by outcome, ratings, hand-offs per day, unanswered questions grouped"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, reference("insights", { maxInsightDays, defaultInsightDays, maxUnansweredQuestions, maxUnansweredGroups, maxGroupConversations, maxRatedDown }))
  .annotate(OpenApi.Title, "Insights") {}
