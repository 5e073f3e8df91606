/**
 * The widget surface under `/widget/v1/agents/{agent_id}/...`: what a page
 * embedding an agent's widget calls with a `widget_pk_` key. Secret keys are
 * refused here; the edge answers CORS for the agent's `allowed_origins`.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { LauncherPosition, LeadCapture } from "./Agents.js"
import { Authentication, RequiredScope, WidgetScope } from "./Auth.js"
import {
  Conversation,
  ConversationEventsText,
  ConversationWithMessages,
  Handoff,
  LastEventId,
  Message,
  Metadata,
  RateMessage,
  SendMessage,
  StreamText
} from "./Conversations.js"
import { Envelope } from "./Envelope.js"
import {
  AiUnavailable,
  ApiError,
  KeyScopeMismatch,
  LimitReached,
  OriginNotAllowed,
  ParameterInvalid,
  ParameterMissing,
  ResourceMissing,
  ServiceUnavailable
} from "./Errors.js"
import { AgentId, ConversationId, MessageId } from "./Ids.js"
import { VisitorLocale } from "./Languages.js"
import { CaptureLead, Lead } from "./Leads.js"
import { StrictStruct } from "./Payload.js"
import { Ticket } from "./Tickets.js"
import { reference } from "./Reference.js"

const agentPath = HttpApiSchema.param("agent_id", AgentId)
const conversationPath = HttpApiSchema.param("conversation_id", ConversationId)
const messagePath = HttpApiSchema.param("message_id", MessageId)

export const OpenConversation = StrictStruct({
  metadata: Schema.optional(Metadata).annotations({ description: "Kept on the conversation (the page, the visitor's locale, ...)" })
}).annotations({ identifier: "OpenConversation" })
export type OpenConversation = typeof OpenConversation.Type

/** A message on the widget: the conversation is the path's. */
export const WidgetMessage = StrictStruct({
  message: SendMessage.fields.message,
  stream: SendMessage.fields.stream,
  locale: Schema.optional(VisitorLocale).annotations({
    description:
      "The widget's language (`es`, `en`, `es-MX`): the texts the service writes itself (the fallback answer) are in the " +
      "question's language when it can be told, else in this one, else in the agent's, else in English"
  })
}).annotations({ identifier: "WidgetMessage" })
export type WidgetMessage = typeof WidgetMessage.Type

const VisitorEmail = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "visitor_email must not be empty" }),
  Schema.maxLength(320),
  Schema.pattern(/^[^\s@]+@[^\s@]+$/, { message: () => "visitor_email must be an e-mail address" })
)

export const Escalate = StrictStruct({
  visitor_email: VisitorEmail.annotations({ description: "Where the team answers the visitor" }),
  visitor_name: Schema.optional(Schema.Trim.pipe(Schema.maxLength(200))),
  subject: Schema.optional(
    Schema.Trim.pipe(
      Schema.minLength(1, { message: () => "subject must not be empty" }),
      Schema.maxLength(500, { message: () => "subject must be at most 500 characters" })
    )
  ).annotations({ description: "Default: the visitor's first message, shortened" })
}).annotations({ identifier: "Escalate" })
export type Escalate = typeof Escalate.Type

export const Escalation = Schema.Struct({
  ticket: Ticket.annotations({ description: "Origin `ai_escalation`; its first message is the conversation's transcript" }),
  handoff: Schema.NullOr(Handoff).annotations({
    description:
      "The conversation's hand-off to people, `requested` (null when the agent does not hand off): follow it on `GET .../events`"
  })
}).annotations({ identifier: "Escalation" })
export type Escalation = typeof Escalation.Type

/** What the chat widget reads of its agent: how it looks and behaves, never its instructions or origins. */
export const WidgetConfig = Schema.Struct({
  object: Schema.Literal("widget_config"),
  agent_id: AgentId,
  name: Schema.String.annotations({ description: "The agent's `widget.display_name`, or its `name` when that is null" }),
  welcome_message: Schema.NullOr(Schema.String).annotations({ description: "The agent's `welcome_message`" }),
  color: Schema.String.annotations({ description: "`#rrggbb`, lower case" }),
  launcher_position: LauncherPosition,
  lead_capture: LeadCapture.annotations({
    description: "When to ask for the visitor's contact details: `off`, `before_first_message`, `on_escalation`"
  }),
  handoff: Schema.Boolean.annotations({ description: "Whether people answer live in the widget after an escalation" })
}).annotations({ identifier: "WidgetConfig" })
export type WidgetConfig = typeof WidgetConfig.Type

export const ConfigHeaders = Schema.Struct({
  "if-none-match": Schema.optional(Schema.String).annotations({
    description: "The `ETag` of a config read before: `304` without a body while it is unchanged"
  })
})

export class WidgetGroup extends HttpApiGroup.make("widget")
  .add(
    HttpApiEndpoint.get("config")`/widget/v1/agents/${agentPath}/config`
      .setHeaders(ConfigHeaders)
      .addSuccess(Envelope(WidgetConfig))
      .addSuccess(Schema.Void, { status: 304 })
      .addError(ApiError(ResourceMissing))
      .annotate(
        OpenApi.Description,
        "Widget keys only (scope `widget:chat`). `200` with `data`: the agent's widget settings, display name " +
          "and welcome message (never its instructions or origins); `ETag`, `Cache-Control: private, max-age=60, " +
          "must-revalidate`, `304` on `If-None-Match` while unchanged"
      )
      .annotate(OpenApi.Summary, "What the chat widget shows: the agent's display name, welcome message and widget settings; `ETag`, `304`")
  )
  .add(
    HttpApiEndpoint.post("captureLead")`/widget/v1/agents/${agentPath}/leads`
      .setPayload(CaptureLead)
      .addSuccess(Envelope(Lead), { status: 201 })
      .addError(ApiError(ResourceMissing))
      .addError(ApiError(ParameterMissing))
      .annotate(
        OpenApi.Description,
        "Widget keys only (scope `widget:chat`). Body `email` and/or `phone`, optional `name`, `metadata`, " +
          "`conversation_id`; `201` with the lead (`metadata.source: \"widget\"` unless given); event " +
          "`lead.captured`"
      )
      .annotate(OpenApi.Summary, "The visitor leaves contact details; event `lead.captured`")
  )
  .add(
    HttpApiEndpoint.post("openConversation")`/widget/v1/agents/${agentPath}/conversations`
      .setPayload(OpenConversation)
      .addSuccess(Envelope(Conversation), { status: 201 })
      .annotate(
        OpenApi.Description,
        "Widget keys only (scope `widget:chat`). Body `{}` or `{\"metadata\": {…}}`; `201` with a conversation " +
          "of `channel: \"widget\"`, `message_count: 0`; `conversation.started` comes with its first message"
      )
      .annotate(OpenApi.Summary, "Open a conversation of channel `widget`; `conversation.started` comes with its first message")
      .addError(ApiError(ResourceMissing))
  )
  .add(
    HttpApiEndpoint.get("retrieveConversation")`/widget/v1/agents/${agentPath}/conversations/${conversationPath}`
      .addSuccess(Envelope(ConversationWithMessages))
      .annotate(
        OpenApi.Description,
        "Widget keys only (scope `widget:chat`). The path's agent's conversation with its final messages, " +
          "oldest first: what the widget draws again after a reload; another agent's conversation is `404 conversation_id`"
      )
      .annotate(OpenApi.Summary, "The conversation with its messages, to draw a chat again after a reload")
      .addError(ApiError(ResourceMissing))
  )
  .add(
    HttpApiEndpoint.post("sendMessage")`/widget/v1/agents/${agentPath}/conversations/${conversationPath}/messages`
      .setPayload(WidgetMessage)
      .addSuccess(StreamText)
      .addSuccess(Envelope(Message), { status: 201 })
      .addError(ApiError(ParameterInvalid))
      .addError(ApiError(ServiceUnavailable))
      .addError(ApiError(AiUnavailable))
      .addError(ApiError(LimitReached))
      .annotate(
        OpenApi.Description,
        "Widget keys only (scope `widget:chat`). Body `message`, `stream` (default `true`): the same event " +
          "stream or JSON message as `POST /v1/agents/{id}/messages`; a message to an `ended` conversation " +
          "opens a new one (same `metadata`), named by the `conversation` event. While the conversation is " +
          "handed off to people (`handoff.status` `requested` or `active`) the agent does not reply: the message " +
          "is stored (role `user`) and added to the ticket's thread as the visitor's; the stream is `conversation`, " +
          "`{\"type\":\"handoff\",\"handoff\":{…}}`, `done` (no token, zero credits), or with `stream: false` `201` " +
          "with the user message; the members' answers arrive on `GET .../events`"
      )
      .annotate(
        OpenApi.Summary,
        "The visitor's message: the reply streamed as server-sent events (or JSON with `stream: false`); an ended conversation is continued in a new one"
      )
      .addError(ApiError(ResourceMissing))
  )
  .add(
    HttpApiEndpoint.get(
      "resumeMessage"
    )`/widget/v1/agents/${agentPath}/conversations/${conversationPath}/messages/${messagePath}/stream`
      .setHeaders(LastEventId)
      .addSuccess(StreamText)
      .addError(ApiError(ParameterInvalid))
      .annotate(
        OpenApi.Description,
        "Widget keys only (scope `widget:chat`). Header `Last-Event-ID`: resume a reply's stream, as on `/v1`"
      )
      .annotate(OpenApi.Summary, "Resume a reply's event stream after `Last-Event-ID`")
      .addError(ApiError(ResourceMissing))
  )
  .add(
    HttpApiEndpoint.post("escalate")`/widget/v1/agents/${agentPath}/conversations/${conversationPath}/escalate`
      .setPayload(Escalate)
      .addSuccess(Envelope(Escalation), { status: 201 })
      .addError(ApiError(ParameterInvalid))
      .addError(ApiError(LimitReached))
      .annotate(
        OpenApi.Description,
        "Widget keys only (scope `widget:chat`). Body `visitor_email` (required), optional `visitor_name`, " +
          "`subject` (default: the visitor's first message, shortened); `201` with `data.ticket`: origin " +
          "`ai_escalation`, `conversation_id` set, the transcript as its first message; event `ticket.created`. " +
          "The conversation is handed off to people (`data.handoff`, `status: \"requested\"`, event " +
          "`conversation.handoff_requested`): the agent stops replying until the ticket is resolved or the " +
          "conversation released. Escalating a conversation already handed off answers its open ticket again"
      )
      .annotate(
        OpenApi.Summary,
        "Hand over to a human: a ticket of origin `ai_escalation` with the transcript as its first message; event `ticket.created`"
      )
      .addError(ApiError(ResourceMissing))
  )
  .add(
    HttpApiEndpoint.get("conversationEvents")`/widget/v1/agents/${agentPath}/conversations/${conversationPath}/events`
      .setHeaders(LastEventId)
      .addSuccess(ConversationEventsText)
      .addError(ApiError(ParameterInvalid))
      .annotate(
        OpenApi.Description,
        "Widget keys only (scope `widget:chat`). The conversation's live events, `text/event-stream`, open until " +
          "the client leaves: `message` (a member's reply on the hand-off's ticket, kept in the conversation as " +
          "role `member`) and `handoff` (it became `active` or `closed`), each with an `id:` increasing per " +
          "conversation and kept, so a reconnect with `Last-Event-ID` (another instance too) gets every later " +
          "one; without it, all from the first. While a stream is connected the visitor counts as present: a " +
          "member's reply with none connected for 30 s is also e-mailed to the escalation's `visitor_email`"
      )
      .annotate(OpenApi.Summary, "Follow the conversation's hand-off: members' replies and hand-off changes, resumable with `Last-Event-ID`")
      .addError(ApiError(ResourceMissing))
  )
  .add(
    HttpApiEndpoint.post("endConversation")`/widget/v1/agents/${agentPath}/conversations/${conversationPath}/end`
      .addSuccess(Envelope(Conversation))
      .annotate(
        OpenApi.Description,
        "Widget keys only (scope `widget:chat`). No body; `200` with the ended conversation; " +
          "`conversation.ended` once, ending again answers the same"
      )
      .annotate(OpenApi.Summary, "The visitor ends the conversation; `conversation.ended` once (ending again answers the same)")
      .addError(ApiError(ResourceMissing))
  )
  .add(
    HttpApiEndpoint.post(
      "rateMessage"
    )`/widget/v1/agents/${agentPath}/conversations/${conversationPath}/messages/${messagePath}/feedback`
      .setPayload(RateMessage)
      .addSuccess(Envelope(Message))
      .addError(ApiError(ParameterInvalid))
      .addError(ApiError(ResourceMissing))
      .annotate(
        OpenApi.Description,
        "Widget keys only (scope `widget:chat`). Body `rating` (`up`, `down`, or null to clear), optional " +
          "`comment` (at most 1,000 characters); the conversation must be one the widget opened with this agent; " +
          "only an assistant reply can be rated; `200` with the message; event `message.feedback` when it changes"
      )
      .annotate(OpenApi.Summary, "The visitor marks a reply helpful or not (null clears); event `message.feedback`")
  )
  // every widget route: widget keys with `widget:chat` only, from the agent's allowed origins
  .addError(ApiError(KeyScopeMismatch))
  .addError(ApiError(OriginNotAllowed))
  .annotateEndpoints(RequiredScope, "widget:chat")
  .annotateEndpoints(WidgetScope, "widget:chat")
  .middleware(Authentication)
  .annotate(OpenApi.Description, reference("widget"))
  .annotate(OpenApi.Title, "Widget") {}
