/**
 * Tickets: support requests from the widget, AI escalation, forms or the API,
 * with a thread of messages and status events. Creation is capped per plan and
 * month; erasure replaces the visitor's personal data with `[deleted]`.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { Authentication, type KeyKind, RequiredScope, WidgetScope } from "./Auth.js"
import { Envelope, ListEnvelope, PageParams, Timestamp } from "./Envelope.js"
import {
  ApiError,
  InvalidCursor,
  InvalidLimit,
  KeyScopeMismatch,
  LimitReached,
  ParameterInvalid,
  ResourceMissing
} from "./Errors.js"
import { AgentId } from "./Ids.js"
import { StrictStruct } from "./Payload.js"
import { reference } from "./Reference.js"

export const TicketPublicId = Schema.String.pipe(
  Schema.pattern(/^tck_[A-Za-z0-9]{8,64}$/, { message: () => "Expected a ticket id (tck_...)" }),
  Schema.brand("TicketPublicId")
)
export type TicketPublicId = typeof TicketPublicId.Type

export const TicketMessageId = Schema.String.pipe(
  Schema.pattern(/^tmsg_[A-Za-z0-9]{8,64}$/, { message: () => "Expected a ticket message id (tmsg_...)" }),
  Schema.brand("TicketMessageId")
)
export type TicketMessageId = typeof TicketMessageId.Type

export const TicketStatus = Schema.Literal("open", "pending_user", "resolved")
export type TicketStatus = typeof TicketStatus.Type
export const TicketStatuses: ReadonlyArray<TicketStatus> = TicketStatus.literals

export const TicketPriority = Schema.Literal("low", "normal", "high", "urgent")
export type TicketPriority = typeof TicketPriority.Type
export const TicketPriorities: ReadonlyArray<TicketPriority> = TicketPriority.literals

export const TicketOrigin = Schema.Literal("api", "widget_button", "ai_escalation", "form")
export type TicketOrigin = typeof TicketOrigin.Type
export const TicketOrigins: ReadonlyArray<TicketOrigin> = TicketOrigin.literals

/**
 * The origins each kind of key may create, the first its default: the rule the server enforces, which every
 * description of it below is written from. The contract ties origins to scopes: `write:tickets` (secret keys) to
 * `api`, `widget:tickets` (widget keys) to the widget's two; `form` belongs to form submissions (a forms key
 * never reaches `POST /v1/tickets`). So the origin always says which surface a ticket came through.
 */
export const originsByKeyKind: Readonly<Record<KeyKind, readonly [TicketOrigin, ...Array<TicketOrigin>]>> = {
  secret: ["api"],
  widget: ["widget_button", "ai_escalation"],
  forms: ["form"]
}

/** `a`, `a` or `b`: the origins of a key kind as the descriptions name them. */
const originsOf = (kind: KeyKind) => originsByKeyKind[kind].map((origin) => `\`${origin}\``).join(" or ")

/** The rule in one sentence, as the descriptions give it. */
const whoCreatesWhich =
  `Secret keys create origin ${originsOf("secret")} only; widget keys create ${originsOf("widget")} (the first by ` +
  "default); `form` comes only from form submissions. Any other origin is `403 key_scope_mismatch` " +
  "(`param: \"origin\"`)."

export const AuthorType = Schema.Literal("visitor", "member")
export type AuthorType = typeof AuthorType.Type

export const ActorType = Schema.Literal("api", "member", "system", "visitor")
export type ActorType = typeof ActorType.Type

export const Actor = Schema.Struct({
  type: ActorType,
  id: Schema.NullOr(Schema.String).annotations({
    description: "The key id (`api`), the member UID (`member`), or null (`system`, `visitor`)"
  })
}).annotations({ identifier: "TicketActor" })
export type Actor = typeof Actor.Type

export const Metadata = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const Ticket = Schema.Struct({
  id: Schema.UUID.annotations({ description: "Internal identifier; paths use `public_id`" }),
  public_id: TicketPublicId,
  object: Schema.Literal("ticket"),
  agent_id: AgentId,
  status: TicketStatus.annotations({
    description: "`open`; `pending_user` after a member's message; `resolved` (a visitor's message reopens it)"
  }),
  priority: TicketPriority.annotations({ description: "`normal` unless set" }),
  origin: TicketOrigin.annotations({
    description: "Where it came from: `api`, `widget_button`, `ai_escalation` (a chat handed over) or `form`"
  }),
  visitor_name: Schema.NullOr(Schema.String).annotations({ description: "Personal data: `[deleted]` after erasure" }),
  visitor_email: Schema.NullOr(Schema.String).annotations({ description: "Personal data: `[deleted]` after erasure" }),
  subject: Schema.String,
  assigned_to: Schema.NullOr(Schema.String).annotations({ description: "Member UID" }),
  tags: Schema.Array(Schema.String),
  metadata: Metadata.annotations({ description: "Free keys; a `PATCH` merges them, a key set to null is removed" }),
  conversation_id: Schema.NullOr(Schema.String).annotations({ description: "The conversation it was escalated from" }),
  created_at: Timestamp,
  updated_at: Timestamp,
  resolved_at: Schema.NullOr(Timestamp).annotations({ description: "Set on entering `resolved`, cleared on leaving it" }),
  first_response_at: Schema.NullOr(Timestamp).annotations({ description: "The first member message, set once" })
}).annotations({ identifier: "Ticket" })
export type Ticket = typeof Ticket.Type

export const TicketMessage = Schema.Struct({
  id: TicketMessageId,
  object: Schema.Literal("ticket_message"),
  ticket_public_id: TicketPublicId,
  author_type: AuthorType,
  author_id: Schema.NullOr(Schema.String).annotations({
    description: "The member UID (`Service-Member-Id`) of a member message; null otherwise"
  }),
  body: Schema.String.annotations({ description: "Personal data: `[deleted]` after erasure" }),
  created_at: Timestamp
}).annotations({ identifier: "TicketMessage" })
export type TicketMessage = typeof TicketMessage.Type

export const TicketEventType = Schema.Literal(
  "created",
  "status_changed",
  "resolved",
  "reopened",
  "message_added",
  "assigned",
  "erased"
)
export type TicketEventType = typeof TicketEventType.Type

export const TicketEvent = Schema.Struct({
  id: Schema.String.annotations({ description: "tev_..." }),
  object: Schema.Literal("ticket_event"),
  type: TicketEventType,
  from: Schema.NullOr(Schema.String).annotations({ description: "The value before the change (a status, an assignee)" }),
  to: Schema.NullOr(Schema.String).annotations({ description: "The value after the change" }),
  actor: Actor.annotations({ description: "Who made the change" }),
  created_at: Timestamp
}).annotations({ identifier: "TicketEvent" })
export type TicketEvent = typeof TicketEvent.Type

export const ThreadItem = Schema.Union(TicketMessage, TicketEvent)
export type ThreadItem = typeof ThreadItem.Type

export const TicketWithThread = Schema.Struct({
  ...Ticket.fields,
  thread: Schema.Array(ThreadItem).annotations({ description: "Messages and events, oldest first" })
}).annotations({ identifier: "TicketWithThread" })
export type TicketWithThread = typeof TicketWithThread.Type

const Subject = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "subject must not be empty" }),
  Schema.maxLength(500, { message: () => "subject must be at most 500 characters" })
)
const Body = Schema.String.pipe(
  Schema.filter((s) => s.trim().length > 0, { message: () => "body must not be empty" }),
  Schema.maxLength(20_000, { message: () => "body must be at most 20000 characters" })
)
const VisitorName = Schema.Trim.pipe(Schema.maxLength(200))
const VisitorEmail = Schema.Trim.pipe(
  Schema.maxLength(320),
  Schema.pattern(/^[^\s@]+@[^\s@]+$/, { message: () => "visitor_email must be an e-mail address" })
)
const Tag = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(100))
const Tags = Schema.Array(Tag).pipe(Schema.maxItems(50))
const MemberUid = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200))

export const CreateTicket = StrictStruct({
  agent_id: AgentId,
  subject: Subject,
  body: Schema.optional(Body).annotations({ description: "First message of the thread, from the visitor" }),
  origin: Schema.optional(TicketOrigin).annotations({
    description: whoCreatesWhich
  }),
  visitor_name: Schema.optional(Schema.NullOr(VisitorName)),
  visitor_email: Schema.optional(Schema.NullOr(VisitorEmail)),
  priority: Schema.optional(TicketPriority),
  tags: Schema.optional(Tags),
  metadata: Schema.optional(Metadata),
  conversation_id: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(100))))
}).annotations({ identifier: "CreateTicket" })
export type CreateTicket = typeof CreateTicket.Type

export const UpdateTicket = StrictStruct({
  status: Schema.optional(TicketStatus),
  priority: Schema.optional(TicketPriority),
  assigned_to: Schema.optional(Schema.NullOr(MemberUid)),
  tags: Schema.optional(Tags).annotations({ description: "Replaces the whole list" }),
  metadata: Schema.optional(Metadata).annotations({
    description: "Shallow merge into the stored metadata; a key set to null is removed"
  })
}).annotations({ identifier: "UpdateTicket" })
export type UpdateTicket = typeof UpdateTicket.Type

export const CreateTicketMessage = StrictStruct({ body: Body }).annotations({ identifier: "CreateTicketMessage" })
export type CreateTicketMessage = typeof CreateTicketMessage.Type

/**
 * A query parameter that may be repeated (`?status=open&status=resolved` means
 * either), decoded to the distinct values, each one of `literal`. A wrong value
 * fails the whole parameter, so the error names `status`, not `status[1]`.
 */
const Repeatable = <L extends string>(literal: Schema.Literal<[L, ...Array<L>]>, name: string) =>
  Schema.transformOrFail(Schema.Union(Schema.String, Schema.Array(Schema.String)), Schema.Array(Schema.typeSchema(literal)), {
    strict: true,
    decode: (raw, _, ast) => {
      const values = typeof raw === "string" ? [raw] : raw
      const allowed: ReadonlyArray<string> = literal.literals
      const isAllowed = (v: string): v is L => allowed.includes(v)
      const bad = values.find((v) => !isAllowed(v))
      return bad === undefined
        ? ParseResult.succeed([...new Set(values.filter(isAllowed))])
        : ParseResult.fail(new ParseResult.Type(ast, raw, `${name} must be one of ${allowed.join(", ")}; got '${bad}'`))
    },
    encode: (values) => ParseResult.succeed(values)
  })

const OneOf = <L extends string>(literal: Schema.Literal<[L, ...Array<L>]>, name: string) =>
  literal.annotations({
    message: (issue) => ({
      message: `${name} must be one of ${literal.literals.join(", ")}; got '${String(issue.actual)}'`,
      override: true
    })
  })

/** The document shows the accepted values of a repeatable filter, one or many. */
const oneOf = (values: ReadonlyArray<string>) => ({ type: "string", enum: [...values] }) as const
const documented = (values: ReadonlyArray<string>) => ({
  jsonSchema: { anyOf: [oneOf(values), { type: "array", items: oneOf(values) }] }
})

export const TicketListParams = Schema.Struct({
  ...PageParams.fields,
  status: Schema.optional(Repeatable(TicketStatus, "status").annotations(documented(TicketStatuses))).annotations({
    description: "Repeat for OR: open, pending_user, resolved"
  }),
  priority: Schema.optional(Repeatable(TicketPriority, "priority").annotations(documented(TicketPriorities))).annotations({
    description: "Repeat for OR: low, normal, high, urgent"
  }),
  assigned_to: Schema.optional(Schema.String),
  agent_id: Schema.optional(Schema.String),
  origin: Schema.optional(OneOf(TicketOrigin, "origin")),
  tag: Schema.optional(Schema.String).annotations({ description: "Tickets carrying this tag" }),
  include: Schema.optional(
    Schema.Literal("total_count").annotations({
      message: () => ({ message: "include accepts only `total_count`", override: true })
    })
  ).annotations({ description: "`total_count` adds meta.pagination.total_count" })
})
export type TicketListParams = typeof TicketListParams.Type

/** Sent by a dashboard acting for a member: the change is then attributed to that member. */
export const ActingHeaders = Schema.Struct({
  "service-member-id": Schema.optional(
    MemberUid.annotations({ description: "Member UID the change is attributed to (actor `member`)" })
  )
})

const id = HttpApiSchema.param("public_id", TicketPublicId)
const missing = ApiError(ResourceMissing)


export class TicketsGroup extends HttpApiGroup.make("tickets")
  .add(
    HttpApiEndpoint.post("create", "/v1/tickets")
      .setHeaders(ActingHeaders)
      .setPayload(CreateTicket)
      .addSuccess(Envelope(Ticket), { status: 201 })
      .addError(ApiError(LimitReached))
      .addError(missing)
      .addError(ApiError(KeyScopeMismatch))
      .annotate(RequiredScope, "write:tickets")
      .annotate(WidgetScope, "widget:tickets")
      .annotate(
        OpenApi.Description,
        "Body `agent_id`, `subject`, optional `body` (first message), `origin`, `visitor_name`, " +
          "`visitor_email`, `priority`, `tags`, `metadata`, `conversation_id`; `201`; event `ticket.created` " +
          "(`ticket`, `first_message` or null); e-mails the owner; plan cap"
      )
      .annotate(OpenApi.Summary, "Open a ticket; notifies the owner; capped per plan and month")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/tickets")
      .setUrlParams(TicketListParams)
      .addSuccess(ListEnvelope(Ticket))
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "read:tickets")
      .annotate(
        OpenApi.Description,
        "Paginated, newest first; `status` and `priority` may repeat (OR); `assigned_to`, `agent_id`, " +
          "`origin`, `tag`; `include=total_count` adds `meta.pagination.total_count`"
      )
      .annotate(OpenApi.Summary, "List tickets, newest first, with filters")
  )
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/tickets/${id}`
      .addSuccess(Envelope(TicketWithThread))
      .addError(missing)
      .annotate(RequiredScope, "read:tickets")
      .annotate(OpenApi.Description, "The ticket plus `thread`: its messages and ticket events, oldest first")
      .annotate(OpenApi.Summary, "Retrieve a ticket with its thread of messages and events")
  )
  .add(
    HttpApiEndpoint.get("messages")`/v1/tickets/${id}/messages`
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(TicketMessage))
      .addError(missing)
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:tickets")
      .annotate(OpenApi.Description, "Paginated, **oldest first** (reading order of a thread)")
      .annotate(OpenApi.Summary, "List a ticket's messages, oldest first")
  )
  .add(
    HttpApiEndpoint.patch("update")`/v1/tickets/${id}`
      .setHeaders(ActingHeaders)
      .setPayload(UpdateTicket)
      .addSuccess(Envelope(Ticket))
      .addError(missing)
      .annotate(RequiredScope, "write:tickets")
      .annotate(
        OpenApi.Description,
        "`status`, `priority`, `assigned_to` (member UID or null), `tags` (replaces the list), `metadata` " +
          "(shallow merge; a key set to null is removed)"
      )
      .annotate(OpenApi.Summary, "Change status, priority, assignee, tags (replace) or metadata (merge)")
  )
  .add(
    HttpApiEndpoint.post("resolve")`/v1/tickets/${id}/resolve`
      .setHeaders(ActingHeaders)
      .addSuccess(Envelope(Ticket))
      .addError(missing)
      .annotate(RequiredScope, "write:tickets")
      .annotate(
        OpenApi.Description,
        "Status `resolved`; an already resolved ticket is returned unchanged, with no event"
      )
      .annotate(OpenApi.Summary, "Resolve a ticket; a resolved ticket is left as it is")
  )
  .add(
    HttpApiEndpoint.post("reopen")`/v1/tickets/${id}/reopen`
      .setHeaders(ActingHeaders)
      .addSuccess(Envelope(Ticket))
      .addError(missing)
      .annotate(RequiredScope, "write:tickets")
      .annotate(OpenApi.Description, "`resolved` → `open`; any other ticket is returned unchanged (`200`, no event)")
      .annotate(OpenApi.Summary, "Reopen a resolved ticket; any other ticket is left as it is")
  )
  .add(
    HttpApiEndpoint.post("addMessage")`/v1/tickets/${id}/messages`
      .setHeaders(ActingHeaders)
      .setPayload(CreateTicketMessage)
      .addSuccess(Envelope(TicketMessage), { status: 201 })
      .addError(missing)
      .annotate(RequiredScope, "write:tickets")
      .annotate(WidgetScope, "widget:tickets")
      .annotate(
        OpenApi.Description,
        "Body `body`; `201`; a secret key writes as a `member`, a widget key as the `visitor`; event " +
          "`ticket.message.created`"
      )
      .annotate(OpenApi.Summary, "Add a message: from a member with a secret key, from the visitor with a widget key")
  )
  .add(
    HttpApiEndpoint.del("erase")`/v1/tickets/${id}`
      .setHeaders(ActingHeaders)
      .addSuccess(Envelope(Ticket))
      .addError(missing)
      .annotate(RequiredScope, "write:tickets")
      .annotate(OpenApi.Description, "Erasure (see the group's description); returns the erased ticket; idempotent")
      .annotate(OpenApi.Summary, "Erase the visitor's personal data (name, e-mail, message bodies); idempotent")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, reference("tickets", { whoCreatesWhich }))
  .annotate(OpenApi.Title, "Tickets") {}
