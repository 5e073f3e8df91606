/**
 * Replies and conversations: a message to an agent answered from its knowledge,
 * streamed as server-sent events (or as one JSON message), and the
 * conversations those messages belong to.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, RequiredScope } from "./Auth.js"
import { Envelope, ListEnvelope, PageParams, Timestamp } from "./Envelope.js"
import { AiUnavailable, ApiError, InvalidCursor, InvalidLimit, LimitReached, ParameterInvalid, ResourceMissing, ServiceUnavailable } from "./Errors.js"
import { AgentId, ConversationId, LessonId, MessageId } from "./Ids.js"
import { VisitorLocale } from "./Languages.js"
import { StrictStruct } from "./Payload.js"
import { reference } from "./Reference.js"

/** Longest user message, in characters. */
export const maxMessageChars = 4_000

export const Channel = Schema.Literal("widget", "api").annotations({
  description: "`api`: opened by a secret key; `widget`: by the website widget"
})
export type Channel = typeof Channel.Type

export const ConversationStatus = Schema.Literal("open", "ended").annotations({
  description: "`ended` by the visitor or after the idle timeout; a message to an ended conversation opens a new one"
})
export type ConversationStatus = typeof ConversationStatus.Type

export const MessageRole = Schema.Literal("user", "assistant", "member")
export type MessageRole = typeof MessageRole.Type

export const MessageSource = Schema.Struct({
  type: Schema.Literal("qa", "chunk").annotations({ description: "`qa`: a Q&A item; `chunk`: a passage of a knowledge source" }),
  id: Schema.String.annotations({ description: "The Q&A id (`qa_...`) or the knowledge source id (`src_...`)" }),
  title: Schema.String.annotations({ description: "The Q&A's question, or the source's title" }),
  url: Schema.NullOr(Schema.String).annotations({ description: "The page of a `url` source; null otherwise" }),
  lesson: Schema.optional(
    Schema.Struct({ id: LessonId, title: Schema.String }).annotations({ identifier: "MessageSourceLesson" })
  ).annotations({ description: "A training agent's passage: the lesson whose source it came from" })
}).annotations({ identifier: "MessageSource" })
export type MessageSource = typeof MessageSource.Type

export const Rating = Schema.Literal("up", "down").annotations({ description: "`up`: helpful; `down`: not helpful" })
export type Rating = typeof Rating.Type

/** Longest comment of a rating, in characters. */
export const maxFeedbackCommentChars = 1_000

/** A reader's rating of an assistant reply (the widget's "helpful" / "not helpful"). */
export const MessageFeedback = Schema.Struct({
  rating: Rating,
  comment: Schema.NullOr(Schema.String),
  updated_at: Timestamp
}).annotations({ identifier: "MessageFeedback" })
export type MessageFeedback = typeof MessageFeedback.Type

export const MessageOutcome = Schema.Literal("answered", "fallback", "handed_off").annotations({
  description:
    "What an assistant reply was: `answered` (it drew on the agent's knowledge), `fallback` (nothing relevant was " +
    "found: the fixed fallback offering a person) or `handed_off` (the conversation went to people after it: the " +
    "last reply before the escalation)"
})
export type MessageOutcome = typeof MessageOutcome.Type

export const Message = Schema.Struct({
  id: MessageId,
  object: Schema.Literal("message"),
  conversation_id: ConversationId,
  role: MessageRole.annotations({
    description:
      "`user` (the visitor's or caller's message), `assistant` (the agent's reply) or `member` (a person of the workspace answering on the hand-off's ticket)"
  }),
  content: Schema.String.annotations({ description: "The text; for a reply, the concatenation of its `token` events" }),
  sources: Schema.Array(MessageSource).annotations({ description: "What an assistant reply drew on; empty for user messages" }),
  feedback: Schema.NullOr(MessageFeedback).annotations({
    description: "An assistant reply's rating, once rated (null: none, and always for user messages)"
  }),
  outcome: Schema.NullOr(MessageOutcome).annotations({
    description: "An assistant reply's outcome; null for user and member messages"
  }),
  created_at: Timestamp
}).annotations({ identifier: "Message" })

export const RateMessage = StrictStruct({
  rating: Schema.NullOr(Rating).annotations({ description: "`up`, `down`, or null to clear the rating" }),
  comment: Schema.optional(
    Schema.Trim.pipe(
      Schema.maxLength(maxFeedbackCommentChars, {
        message: () => `comment must be at most ${maxFeedbackCommentChars.toLocaleString("en")} characters`
      })
    )
  ).annotations({ description: "Why (at most 1,000 characters, trimmed; empty or absent: none); ignored when clearing" })
}).annotations({ identifier: "RateMessage" })
export type RateMessage = typeof RateMessage.Type
export type Message = typeof Message.Type

export const Metadata = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const HandoffStatus = Schema.Literal("requested", "active", "closed").annotations({
  description:
    "`requested`: escalated, no person has answered yet; `active`: a member answered on the ticket; `closed`: the ticket was resolved or the conversation released, the agent answers again"
})
export type HandoffStatus = typeof HandoffStatus.Type

export const Handoff = Schema.Struct({
  status: HandoffStatus,
  ticket_public_id: Schema.String.annotations({ description: "The `ai_escalation` ticket the people answer on (`tck_...`)" }),
  requested_at: Timestamp,
  updated_at: Timestamp.annotations({ description: "When `status` last changed" })
}).annotations({
  identifier: "Handoff",
  description:
    "The live hand-off to people: while `requested` or `active` the agent does not reply, the visitor's messages go to the ticket's thread and the members' replies come back as `member` messages"
})
export type Handoff = typeof Handoff.Type

export const Conversation = Schema.Struct({
  id: ConversationId,
  object: Schema.Literal("conversation"),
  agent_id: AgentId,
  channel: Channel.annotations({ description: "`api` (a secret key) or `widget` (a widget key)" }),
  status: ConversationStatus.annotations({
    description: "`ended` after `CONVERSATION_IDLE_MINUTES` without a message, or the widget's `end`"
  }),
  lead_id: Schema.NullOr(Schema.String).annotations({ description: "The lead captured in it (`ldx_...`), if any" }),
  message_count: Schema.Int.annotations({ description: "Final messages: user messages and completed replies" }),
  started_at: Timestamp,
  ended_at: Schema.NullOr(Timestamp),
  metadata: Metadata,
  handoff: Schema.NullOr(Handoff).annotations({ description: "The hand-off to people since an escalation; null: never escalated" })
}).annotations({ identifier: "Conversation" })
export type Conversation = typeof Conversation.Type

export const ConversationWithMessages = Schema.Struct({
  ...Conversation.fields,
  messages: Schema.Array(Message).annotations({ description: "Final messages, oldest first" })
}).annotations({ identifier: "ConversationWithMessages" })
export type ConversationWithMessages = typeof ConversationWithMessages.Type

const MessageText = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "message must not be empty" }),
  Schema.maxLength(maxMessageChars, { message: () => `message must be at most ${maxMessageChars} characters` })
)

export const SendMessage = StrictStruct({
  message: MessageText,
  stream: Schema.optional(Schema.Boolean).annotations({
    description: "Default true: the reply as `text/event-stream`; false: the assistant message as JSON (201)"
  }),
  conversation_id: Schema.optional(ConversationId).annotations({
    description: "Continue this conversation of the agent; absent (or ended): a new one is opened"
  }),
  locale: Schema.optional(VisitorLocale).annotations({
    description:
      "The visitor's language (`es`, `en`, `es-MX`): the texts the service writes itself (the fallback answer, the " +
      "`escalation` event's message) are in the question's language when it can be told, else in this one, else in " +
      "the agent's, else in English"
  })
}).annotations({ identifier: "SendMessage" })
export type SendMessage = typeof SendMessage.Type

export const ConversationListParams = Schema.Struct({
  ...PageParams.fields,
  agent_id: Schema.optional(AgentId),
  status: Schema.optional(ConversationStatus),
  outcome: Schema.optional(MessageOutcome).annotations({
    description: "Only conversations with at least one reply of this outcome (`fallback`: the ones the agent could not answer)"
  })
})
export type ConversationListParams = typeof ConversationListParams.Type

export const Usage = Schema.Struct({
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  credits: Schema.Int.annotations({ description: "1 for a reply on a live key, 0 on a sandbox key" })
})
export type Usage = typeof Usage.Type

// stream events: each is the JSON `data:` of one server-sent event, with an `id:` (1, 2, ... per reply)

export const ConversationEvent = Schema.Struct({
  type: Schema.Literal("conversation"),
  conversation_id: ConversationId,
  message_id: MessageId.annotations({ description: "The reply's id: resume its stream with it" })
})
export const TokenEvent = Schema.Struct({ type: Schema.Literal("token"), content: Schema.String })
export const SourcesEvent = Schema.Struct({ type: Schema.Literal("sources"), sources: Schema.Array(MessageSource) })
export const EscalationEvent = Schema.Struct({
  type: Schema.Literal("escalation"),
  message: Schema.String.annotations({
    description: "An offer of a human, for when the knowledge had nothing relevant: the visitor's, in the fallback's language"
  })
})
export const HandoffEvent = Schema.Struct({
  type: Schema.Literal("handoff"),
  handoff: Handoff
}).annotations({
  identifier: "HandoffEvent",
  description: "The conversation is handed off to people: the agent did not reply (a send), or the hand-off changed (the events stream)"
})
export const DoneEvent = Schema.Struct({
  type: Schema.Literal("done"),
  message_id: MessageId.annotations({ description: "The reply's id; in a hand-off, the stored user message's" }),
  conversation_id: ConversationId,
  usage: Usage,
  outcome: Schema.optional(MessageOutcome).annotations({
    description: "The reply's outcome (`answered` or `fallback`); in a hand-off, `handed_off`: people have the chat"
  })
})
export const ErrorEvent = Schema.Struct({
  type: Schema.Literal("error"),
  code: Schema.String.annotations({
    description: "`ai_unavailable` or `service_unavailable` (retry) or `internal_error`"
  }),
  message: Schema.String,
  retry_after: Schema.optional(Schema.Int).annotations({
    description:
      "When the AI provider did not answer: the seconds to wait before sending the message again (the 503's `Retry-After`)"
  })
})
export const StreamEvent = Schema.Union(ConversationEvent, TokenEvent, SourcesEvent, EscalationEvent, HandoffEvent, DoneEvent, ErrorEvent).annotations({
  identifier: "StreamEvent"
})
export type StreamEvent = typeof StreamEvent.Type

export const StreamText = HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
  description:
    "Server-sent events `id: n` / `data: {json}` in the order conversation, token..., sources, [escalation], done (or error); " +
    "while the conversation is handed off to people (`handoff.status` `requested` or `active`): conversation, handoff, done (no token, " +
    "`usage` zero, `message_id` the stored user message's); `: ping` comments every 15 s of silence"
})

// the conversation's own event stream (the widget's `GET .../events`): `id:` 1, 2, ... per conversation, kept

export const MessageEvent = Schema.Struct({
  type: Schema.Literal("message"),
  message: Message
}).annotations({ identifier: "ConversationMessageEvent", description: "A member's message on the hand-off's ticket, as kept in the conversation" })

export const ConversationStreamEvent = Schema.Union(MessageEvent, HandoffEvent).annotations({
  identifier: "ConversationStreamEvent"
})
export type ConversationStreamEvent = typeof ConversationStreamEvent.Type

export const ConversationEventsText = HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
  description:
    "Server-sent events `id: n` / `data: {json}`, `n` increasing per conversation and kept: `{\"type\":\"message\",\"message\":{…}}` " +
    "(a member's reply, role `member`) and `{\"type\":\"handoff\",\"handoff\":{…}}` (the hand-off changed); the stream stays open, " +
    "`: ping` comments every 15 s of silence; reconnect with `Last-Event-ID` to get only later events"
})

export const LastEventId = Schema.Struct({
  "last-event-id": Schema.optional(Schema.String).annotations({
    description: "The `id:` of the last event received: only later events are sent (none or 0: all of them)"
  })
})

const agentPath = HttpApiSchema.param("id", AgentId)
const conversationPath = HttpApiSchema.param("id", ConversationId)
const messagePath = HttpApiSchema.param("message_id", MessageId)
const missing = ApiError(ResourceMissing)


export class ConversationsGroup extends HttpApiGroup.make("conversations")
  .add(
    HttpApiEndpoint.post("send")`/v1/agents/${agentPath}/messages`
      .setPayload(SendMessage)
      .addSuccess(StreamText)
      .addSuccess(Envelope(Message), { status: 201 })
      .addError(missing)
      .addError(ApiError(ParameterInvalid))
      .addError(ApiError(ServiceUnavailable))
      .addError(ApiError(AiUnavailable))
      .addError(ApiError(LimitReached))
      .annotate(RequiredScope, "write:conversations")
      .annotate(
        OpenApi.Description,
        "Body `message` (1 to 4,000 characters, trimmed), `stream` (default `true`), optional " +
          "`conversation_id`; `200 text/event-stream`, or with `stream: false` `201` and `data` = the assistant " +
          "message"
      )
      .annotate(
        OpenApi.Summary,
        "Send a message to an agent: the reply streamed as server-sent events, or as JSON with `stream: false`"
      )
  )
  .add(
    HttpApiEndpoint.get("resume")`/v1/conversations/${conversationPath}/messages/${messagePath}/stream`
      .setHeaders(LastEventId)
      .addSuccess(StreamText)
      .addError(missing)
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "read:conversations")
      .annotate(
        OpenApi.Description,
        "Header `Last-Event-ID`: the reply's events after it, following the reply to its end"
      )
      .annotate(OpenApi.Summary, "Resume a reply's event stream after `Last-Event-ID`, following it to its end")
  )
  .add(
    HttpApiEndpoint.post("release")`/v1/conversations/${conversationPath}/release`
      .addSuccess(Envelope(Conversation))
      .addError(missing)
      .annotate(RequiredScope, "write:conversations")
      .annotate(
        OpenApi.Description,
        "No body. Ends the conversation's hand-off to people (`handoff.status` becomes `closed`, event " +
          "`conversation.handoff_closed`): the agent replies to the next message again. The ticket stays as it is. " +
          "A conversation with no open hand-off is answered as it is"
      )
      .annotate(OpenApi.Summary, "Give a handed-off conversation back to the agent; event `conversation.handoff_closed`")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/conversations")
      .setUrlParams(ConversationListParams)
      .addSuccess(ListEnvelope(Conversation))
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:conversations")
      .annotate(
        OpenApi.Description,
        "Filters `agent_id`, `status` (`open`, `ended`), `outcome` (`answered`, `fallback`, `handed_off`: conversations " +
          "with at least one reply of it); paginated, newest first"
      )
      .annotate(OpenApi.Summary, "List conversations, newest first; filters `agent_id`, `status`, `outcome`")
  )
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/conversations/${conversationPath}`
      .addSuccess(Envelope(ConversationWithMessages))
      .addError(missing)
      .annotate(RequiredScope, "read:conversations")
      .annotate(OpenApi.Description, "The conversation with `messages`: its final messages, oldest first")
      .annotate(OpenApi.Summary, "A conversation with its final messages, oldest first")
  )
  .add(
    HttpApiEndpoint.post("rateMessage")`/v1/conversations/${conversationPath}/messages/${messagePath}/feedback`
      .setPayload(RateMessage)
      .addSuccess(Envelope(Message))
      .addError(missing)
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "write:conversations")
      .annotate(
        OpenApi.Description,
        "Body `rating` (`up`, `down`, or null to clear), optional `comment` (at most 1,000 characters); only an " +
          "assistant reply can be rated (else `400 parameter_invalid`); `200` with the message; event " +
          "`message.feedback` when the rating changes"
      )
      .annotate(OpenApi.Summary, "Rate a reply helpful or not (null clears); event `message.feedback`")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, reference("conversations"))
  .annotate(OpenApi.Title, "Conversations and replies") {}
