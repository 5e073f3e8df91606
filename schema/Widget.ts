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
import { Authentication, RequiredScope, WidgetScope } from "./Auth.js"
import { Conversation, LastEventId, Message, Metadata, SendMessage, StreamText } from "./Conversations.js"
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
import { CaptureLead, Lead } from "./Leads.js"
import { StrictStruct } from "./Payload.js"
import { Ticket } from "./Tickets.js"

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
  stream: SendMessage.fields.stream
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
  ticket: Ticket.annotations({ description: "Origin `ai_escalation`; its first message is the conversation's transcript" })
}).annotations({ identifier: "Escalation" })
export type Escalation = typeof Escalation.Type

/** The reference of this group, in Markdown: its tag's description in the OpenAPI document and on `/docs`. */
const widgetReference = [
  "Everything a page embedding an agent's widget calls lives under `/widget/v1/agents/{agent_id}/…` and takes a",
  "widget key (`widget_pk_test_…` / `widget_pk_live_…`, scope `widget:chat`):",
  "",
  "- **Keys.** In the OpenAPI document these endpoints name `widget:chat` in both `x-scopes` and",
  "  `x-widget-scopes`. Only widget keys holding `widget:chat` pass: secret keys (whatever their scopes), forms keys and",
  "  widget keys narrowed to `widget:tickets` get `403 key_scope_mismatch`. The agent must belong to the key's",
  "  workspace and environment; any other agent is `404 resource_missing` (`param: \"agent_id\"`).",
  "- **Chat.** A conversation named in a path must be the path's agent's, in the key's workspace and environment;",
  "  any other is `404 resource_missing` (`param: \"conversation_id\"`). The transcript of an escalation is one line",
  "  per final message, oldest first: `Visitor: …` for the visitor's, `Assistant: …` for the agent's replies",
  "  (a reply still being written or stopped is left out); past 20,000 characters the latest part is kept, after",
  "  `[earlier messages left out]`. An escalation before any message creates a ticket without a first message.",
  "  A conversation opened but never written in emits neither `conversation.started` nor `conversation.ended`",
  "  (it still ends after the idle time, or on `end`). A lead captured with the `conversation_id` of one of the",
  "  key's conversations (here or on `/v1/leads`) becomes that conversation's `lead_id` (the latest wins).",
  "- **Origins.** An agent's `allowed_origins` (set with a secret key on `POST`/`PATCH /v1/agents`; at most 20;",
  "  `scheme://host[:port]` with `http` or `https`, no path, query, credentials or wildcard) lists the pages that may",
  "  call its widget surface. Values are stored in normal form, the way a browser sends `Origin`:",
  "  `HTTPS://Shop.Example.com:443/` becomes `https://shop.example.com`; duplicates are dropped; an unlisted",
  "  port is another origin. A new agent allows none.",
  "- **CORS.** The edge answers for the agent named in the path, before the key is checked:",
  "  - a preflight (`OPTIONS`) from a listed origin: `204` with `Access-Control-Allow-Origin: <that origin>`",
  "    (echoed exactly, never `*`), `Access-Control-Allow-Methods` (the methods of that path),",
  "    `Access-Control-Allow-Headers: Authorization, Content-Type, Last-Event-ID, Idempotency-Key`,",
  "    `Access-Control-Max-Age: 600`, `Vary: Origin`; no credentials (the key is a header, not a cookie);",
  "  - a preflight from any other origin: a bare `204` without CORS headers, so the browser refuses the call;",
  "  - a request from a listed origin: the answer (success or error) carries `Access-Control-Allow-Origin`,",
  "    `Access-Control-Expose-Headers` (`Request-Id`, `Idempotent-Replayed`, `Retry-After`, `X-RateLimit-*`) and",
  "    `Vary: Origin`;",
  "  - a request whose `Origin` is not listed: `403 origin_not_allowed` (`param: \"Origin\"`), without CORS headers;",
  "  - a request without `Origin` (a server, curl) is not a browser's, and the key alone decides.",
  "",
  "```sh",
  "# an agent whose widget the page https://shop.example.com may call (set with the secret key)",
  "SHOP=$(curl -s http://127.0.0.1:3000/v1/agents -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' \\",
  "     -d '{\"type\":\"support\",\"name\":\"Shop assistant\",\"allowed_origins\":[\"https://shop.example.com\"]}' | jq -r .data.id)",
  "export WIDGET_KEY=widget_pk_test_…   # the widget key printed on first start",
  "curl -s http://127.0.0.1:3000/widget/v1/agents/$SHOP/leads -H \"Authorization: Bearer $WIDGET_KEY\" \\",
  "     -H 'Origin: https://shop.example.com' -H 'Content-Type: application/json' \\",
  "     -d '{\"email\":\"visitor@example.com\",\"metadata\":{\"page\":\"https://shop.example.com/pricing\"}}'",
  "```",
  "",
  "A whole chat from a page, with the same agent (`-N` shows the events as they come):",
  "",
  "```sh",
  "W=http://127.0.0.1:3000/widget/v1/agents/$SHOP",
  "H=(-H \"Authorization: Bearer $WIDGET_KEY\" -H 'Origin: https://shop.example.com' -H 'Content-Type: application/json')",
  "CNV=$(curl -s \"$W/conversations\" \"${H[@]}\" -d '{\"metadata\":{\"page\":\"/pricing\"}}' | sed 's/.*\"id\":\"\\(cnv_[^\"]*\\)\".*/\\1/')",
  "curl -sN \"$W/conversations/$CNV/messages\" \"${H[@]}\" -d '{\"message\":\"How long does delivery take?\"}'",
  "# id: 1",
  "# data: {\"type\":\"conversation\",\"conversation_id\":\"cnv_…\",\"message_id\":\"msg_…\"}",
  "# … token, sources, done",
  "curl -s \"$W/conversations/$CNV/escalate\" \"${H[@]}\" -d '{\"visitor_email\":\"visitor@example.com\",\"visitor_name\":\"Vera\"}'",
  "# {\"data\":{\"ticket\":{\"public_id\":\"tck_…\",\"origin\":\"ai_escalation\",\"conversation_id\":\"cnv_…\",…}},…}",
  "curl -s -X POST \"$W/conversations/$CNV/end\" \"${H[@]}\"",
  "```",
  "",
  "**Choices** (where the spec leaves one open):",
  "",
  "- Widget surface: CORS is per agent (`allowed_origins`), answered by the edge before the key is checked",
  "  (a browser's preflight carries no key), so a foreign `Origin` is `403 origin_not_allowed` whatever the key;",
  "  requests without `Origin` are not refused (CORS protects browsers; other clients can send any `Origin`).",
  "  Secret keys are refused there even if given a widget scope.",
  "- Widget chat: see the Widget group. A conversation opened by the widget before any",
  "  message waits for it to emit `conversation.started`, and one never written in ends without events (an",
  "  integrator never sees `conversation.ended` without `conversation.started`). A conversation of another agent",
  "  in a path is `404` (not `400` as for `conversation_id` in a `/v1` body): the path names the agent. Opening",
  "  takes a JSON body (`{}`), like every endpoint that accepts one. The leads area links a lead to its",
  "  conversation through a port the conversations area serves (`ConversationLink`), since conversations may not",
  "  be imported by leads."
].join("\n")

export class WidgetGroup extends HttpApiGroup.make("widget")
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
          "opens a new one (same `metadata`), named by the `conversation` event"
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
          "`ai_escalation`, `conversation_id` set, the transcript as its first message; event `ticket.created`"
      )
      .annotate(
        OpenApi.Summary,
        "Hand over to a human: a ticket of origin `ai_escalation` with the transcript as its first message; event `ticket.created`"
      )
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
  // every widget route: widget keys with `widget:chat` only, from the agent's allowed origins
  .addError(ApiError(KeyScopeMismatch))
  .addError(ApiError(OriginNotAllowed))
  .annotateEndpoints(RequiredScope, "widget:chat")
  .annotateEndpoints(WidgetScope, "widget:chat")
  .middleware(Authentication)
  .annotate(OpenApi.Description, widgetReference)
  .annotate(OpenApi.Title, "Widget") {}
