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
import { StrictStruct } from "./Payload.js"

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

export const MessageRole = Schema.Literal("user", "assistant")
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

export const Message = Schema.Struct({
  id: MessageId,
  object: Schema.Literal("message"),
  conversation_id: ConversationId,
  role: MessageRole.annotations({ description: "`user` (the question) or `assistant` (the reply)" }),
  content: Schema.String.annotations({ description: "The text; for a reply, the concatenation of its `token` events" }),
  sources: Schema.Array(MessageSource).annotations({ description: "What an assistant reply drew on; empty for user messages" }),
  created_at: Timestamp
}).annotations({ identifier: "Message" })
export type Message = typeof Message.Type

export const Metadata = Schema.Record({ key: Schema.String, value: Schema.Unknown })

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
  metadata: Metadata
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
  })
}).annotations({ identifier: "SendMessage" })
export type SendMessage = typeof SendMessage.Type

export const ConversationListParams = Schema.Struct({
  ...PageParams.fields,
  agent_id: Schema.optional(AgentId),
  status: Schema.optional(ConversationStatus)
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
  message: Schema.String.annotations({ description: "An offer of a human, for when the knowledge had nothing relevant" })
})
export const DoneEvent = Schema.Struct({
  type: Schema.Literal("done"),
  message_id: MessageId,
  conversation_id: ConversationId,
  usage: Usage
})
export const ErrorEvent = Schema.Struct({
  type: Schema.Literal("error"),
  code: Schema.String.annotations({
    description: "`ai_unavailable` or `service_unavailable` (retry) or `internal_error`"
  }),
  message: Schema.String
})
export const StreamEvent = Schema.Union(ConversationEvent, TokenEvent, SourcesEvent, EscalationEvent, DoneEvent, ErrorEvent).annotations({
  identifier: "StreamEvent"
})
export type StreamEvent = typeof StreamEvent.Type

export const StreamText = HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
  description:
    "Server-sent events `id: n` / `data: {json}` in the order conversation, token..., sources, [escalation], done (or error); `: ping` comments every 15 s of silence"
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

/** The reference of this group, in Markdown: its tag's description in the OpenAPI document and on `/docs`. */
const conversationsReference = [
  "A message to an agent gets a reply grounded in the agent's knowledge, streamed as server-sent events (or as JSON",
  "with `stream: false`); messages group into conversations that end after an idle time.",
  "",
  "Widget and forms keys are refused on these (`403 key_scope_mismatch`); the widget chat surface reaches the",
  "same programs with its own routes (see the Widget group).",
  "",
  "A message without `conversation_id` opens a conversation (`channel: \"api\"` for secret keys) and emits",
  "`conversation.started` with `conversation`. A message naming an `ended` conversation opens a new one, whose id",
  "the `conversation` event (and the JSON reply's `conversation_id`) gives. A conversation with no message for",
  "`CONVERSATION_IDLE_MINUTES` (30) is ended and `conversation.ended` is emitted, once. A widget conversation can be",
  "opened before its first message; `conversation.started` is then emitted by that message.",
  "",
  "A conversation: `id` (`cnv_…`), `object: \"conversation\"`, `agent_id`, `channel` (`api`, `widget`), `status`",
  "(`open`, `ended`), `lead_id` (null until a lead is captured, and again once that lead is deleted), `message_count` (user messages and completed",
  "replies), `started_at`, `ended_at`, `metadata`. A message: `id` (`msg_…`), `object: \"message\"`,",
  "`conversation_id`, `role` (`user`, `assistant`), `content`, `sources`, `created_at`. A source: `type` (`qa` or",
  "`chunk`), `id` (the `qa_…` id, or the knowledge source's `src_…` id), `title` (the question, or the source's",
  "title), `url` (a `url` source's page, else null), and, for a passage of a training agent's lesson source,",
  "`lesson` (`{id, title}`: the lesson it belongs to; absent otherwise).",
  "",
  "### The event stream",
  "",
  "Each event is `id: n` (1, 2, 3, … within the reply) and `data:` one line of JSON with a `type`, in this order:",
  "",
  "| `type` | Fields | When |",
  "|---|---|---|",
  "| `conversation` | `conversation_id`, `message_id` | first; `message_id` is the reply's id, for a resume |",
  "| `token` | `content` | one or more: the reply in pieces; their concatenation is the message's `content` |",
  "| `sources` | `sources` | what the reply drew on (empty when nothing relevant was found) |",
  "| `escalation` | `message` | only when nothing relevant was found: the reply is a fallback offering a person (create a ticket with origin `ai_escalation`) |",
  "| `done` | `message_id`, `conversation_id`, `usage` (`input_tokens`, `output_tokens`, `credits`) | last, once the reply is stored; `credits` is 1 on a live key, 0 on a sandbox key |",
  "| `error` | `code`, `message` | last, instead of `done`: `service_unavailable` (the AI provider failed or the reply was stopped: send the message again) or `internal_error` |",
  "",
  "```",
  "id: 1",
  "data: {\"type\":\"conversation\",\"conversation_id\":\"cnv_…\",\"message_id\":\"msg_…\"}",
  "",
  "id: 2",
  "data: {\"type\":\"token\",\"content\":\"Orders\"}",
  "",
  "id: 3",
  "data: {\"type\":\"token\",\"content\":\" arrive within five business days.\"}",
  "",
  "id: 4",
  "data: {\"type\":\"sources\",\"sources\":[{\"type\":\"qa\",\"id\":\"qa_…\",\"title\":\"How long does delivery take?\",\"url\":null}]}",
  "",
  "id: 5",
  "data: {\"type\":\"done\",\"message_id\":\"msg_…\",\"conversation_id\":\"cnv_…\",\"usage\":{\"input_tokens\":23,\"output_tokens\":6,\"credits\":0}}",
  "```",
  "",
  "Responses carry `Cache-Control: no-cache` and `X-Accel-Buffering: no` (so nginx does not buffer them), and",
  "`Conversation-Id` / `Message-Id` headers. While the model is silent for 15 seconds a comment line `: ping` is",
  "sent. Failures found before the stream starts (unknown agent `404`, a `conversation_id` that is not this",
  "agent's `400 parameter_invalid`, a bad body `400`) are the usual error envelope with their status; after it",
  "started they are an `error` event.",
  "",
  "```sh",
  "curl -N http://127.0.0.1:3000/v1/agents/$AGENT/messages \\",
  "  -H \"Authorization: Bearer $KEY\" -H \"Content-Type: application/json\" \\",
  "  -d '{\"message\":\"How long does delivery take?\"}'",
  "",
  "curl -s http://127.0.0.1:3000/v1/agents/$AGENT/messages \\",
  "  -H \"Authorization: Bearer $KEY\" -H \"Content-Type: application/json\" \\",
  "  -d '{\"message\":\"How long does delivery take?\",\"stream\":false}' | jq .data.content",
  "```",
  "",
  "**Resume.** The reply is generated apart from the request that asked for it. A client that lost the",
  "connection asks for `GET /v1/conversations/{conversation_id}/messages/{message_id}/stream` with the",
  "`Last-Event-ID` of the last event it received (any standard `EventSource` does this by itself) and gets the",
  "events after it, with no repeat and no gap, following the reply while it is still being written, to `done` or",
  "`error`. Events are kept in the database, so the resume may reach any instance (another instance's reply in",
  "progress is followed by polling every 250 ms). Without `Last-Event-ID` every event is sent. A reply's events",
  "are kept for 7 days after it ends (an hourly pass drops older ones, on every instance); after that the",
  "reply is still in its conversation, and resuming its stream answers `404 resource_missing` (`param:",
  "\"message_id\"`) saying the stream is no longer kept.",
  "",
  "```sh",
  "curl -N http://127.0.0.1:3000/v1/conversations/$CONVERSATION/messages/$MESSAGE/stream \\",
  "  -H \"Authorization: Bearer $KEY\" -H \"Last-Event-ID: 3\"",
  "```",
  "",
  "**Disconnects.** A reply with no reader keeps being generated for `REPLY_RESUME_GRACE_SECONDS` (30) so that a",
  "resume can pick it up; if no reader comes back in that time, generation is interrupted, the half reply is",
  "marked interrupted and never listed (the conversation holds only the user message), and a late resume ends",
  "with an `error` event.",
  "",
  "**Grounding.** The question goes through retrieval (Q&A and chunks of the agent, glossary synonyms applied);",
  "hits scoring at least 0.3 are relevant (the score is absolute: part embedding cosine, part the share of the",
  "question's words the hit holds, rare words weighing more; see the knowledge reference). With none, the reply is",
  "a fixed fallback offering a person and an `escalation` event, and the model is not asked. Otherwise the `Ai`",
  "layer answers from the relevant hits, the agent's `instructions` and the conversation's last ten messages:",
  "the `local` provider composes an extractive answer (the best Q&A answer, plus an excerpt of the best chunk",
  "when it scores close) and streams it word by word; the `openai` provider streams the chat model's tokens",
  "(`/chat/completions` with `stream: true`).",
  "",
  "**Idempotency.** `Idempotency-Key` works on messages as on every `POST` (24 hours, per workspace and",
  "environment), on the API and the widget surface alike. With `stream: false` the JSON reply is stored and",
  "replayed. A streamed reply is kept as the reply it streams, not as bytes: the same key and body again send no",
  "second message and answer `200` with `Idempotent-Replayed: true`, the same `Conversation-Id` and `Message-Id`,",
  "and the reply's events from the first (`id: 1`), exactly as a resume without `Last-Event-ID`; while the reply",
  "is still being generated the replay follows it live to its end. So a client whose connection dropped before or",
  "during the stream can simply send the request again. The key with another body (another message, or",
  "`stream: false` instead of `true`) is `422 idempotency_key_mismatch`. A replay carries what the reply became:",
  "a reply that failed, or was stopped for want of a reader, replays its events up to the `error` event, and the",
  "message must then be sent again with a new key.",
  "",
  "**Choices** (where the spec leaves one open):",
  "",
  "- Replies: see the Conversations group — the `conversation` event also carries",
  "  the reply's `message_id` (a client needs it to resume before `done`); the JSON reply answers `201` (a message",
  "  was created); `escalation` comes after `sources`, before `done`; `Idempotency-Key` with `stream: true`",
  "  replays the reply's events from the first (`Idempotent-Replayed: true`), live while it is generated; a reply interrupted for want of a reader is kept out of every list; only completed messages",
  "  count in `message_count`. The relevance threshold is 0.35 of retrieval's score."
].join("\n")

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
    HttpApiEndpoint.get("list", "/v1/conversations")
      .setUrlParams(ConversationListParams)
      .addSuccess(ListEnvelope(Conversation))
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:conversations")
      .annotate(OpenApi.Description, "Filters `agent_id`, `status` (`open`, `ended`); paginated, newest first")
      .annotate(OpenApi.Summary, "List conversations, newest first; filters `agent_id`, `status`")
  )
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/conversations/${conversationPath}`
      .addSuccess(Envelope(ConversationWithMessages))
      .addError(missing)
      .annotate(RequiredScope, "read:conversations")
      .annotate(OpenApi.Description, "The conversation with `messages`: its final messages, oldest first")
      .annotate(OpenApi.Summary, "A conversation with its final messages, oldest first")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, conversationsReference)
  .annotate(OpenApi.Title, "Conversations and replies") {}
