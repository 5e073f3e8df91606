/**
 * Ticket programs. Every change, its thread entries, its events and its e-mail
 * commit in one transaction, with the ticket row locked (`for update`) so
 * concurrent changes to one ticket apply one after the other.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { PageParams } from "../../schema/Envelope.js"
import { KeyScopeMismatch, LimitReached, ResourceMissing } from "../../schema/Errors.js"
import { ConversationId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import {
  type CreateTicket,
  originsByKeyKind,
  type ThreadItem,
  type TicketListParams,
  type TicketMessage,
  TicketMessageId,
  type TicketPublicId,
  TicketPublicId as TicketPublicIdSchema,
  type TicketStatus,
  type UpdateTicket
} from "../../schema/Tickets.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { Agents } from "../agents/Agents.js"
import { transaction } from "../db/Sql.js"
import { Emails } from "../email/Emails.js"
import { Outbox } from "../events/Outbox.js"
import { Paginator, toPage } from "../http/Pagination.js"
import { now } from "../Time.js"
import { ConversationHandoff, type HandoffTicket } from "./ConversationHandoff.js"
import { type Acting, actorOf, missingTicket as missing, monthlyTicketCap, monthOf, systemActor as system } from "./Rules.js"
import { stateOf, TicketThread } from "./Thread.js"
import { type TicketFilters, type TicketRow, TicketsRepo, toEvent, toMessage, toTicket } from "./TicketsRepo.js"

export type { Acting } from "./Rules.js"
export { monthlyTicketCap } from "./Rules.js"

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

export class Tickets extends Effect.Service<Tickets>()("Tickets/Programs", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* TicketsRepo
    const agents = yield* Agents
    const outbox = yield* Outbox
    const emails = yield* Emails
    const ids = yield* IdGenerator
    const pages = yield* Paginator
    const thread = yield* TicketThread
    const tx = transaction(sql)
    const locked = thread.locked
    const threadEvent = thread.entry
    const recordStatus = thread.recordStatus
    const handoff = yield* ConversationHandoff

    /** The conversation a ticket was escalated from, as the hand-off port names it; none for other tickets. */
    const handoffTicket = (row: TicketRow): Option.Option<HandoffTicket> =>
      row.conversation_id === null
        ? Option.none()
        : Option.some({
            conversationId: ConversationId.make(row.conversation_id),
            ticketPublicId: row.public_id,
            visitorEmail: row.visitor_email
          })

    const create = Effect.fn("Tickets.create")(function* (acting: Acting, input: CreateTicket) {
      const tenant: Tenant = acting.caller
      const origin = input.origin ?? originsByKeyKind[acting.caller.keyKind][0]
      if (!originsByKeyKind[acting.caller.keyKind].includes(origin)) {
        return yield* new KeyScopeMismatch({
          message:
            origin === "form"
              ? "Tickets of origin `form` are created by form submissions only."
              : acting.caller.keyKind === "secret"
                ? `A secret key (write:tickets) creates tickets of origin \`api\` only; \`${origin}\` needs a widget key (widget:tickets).`
                : `A ${acting.caller.keyKind} key cannot create tickets of origin \`${origin}\`.`,
          param: "origin"
        })
      }
      const publicId = TicketPublicIdSchema.make(yield* ids.make("tck"))
      const ticketId = yield* ids.uuid
      return yield* Effect.gen(function* () {
        if (!(yield* agents.exists(tenant, input.agent_id))) {
          return yield* new ResourceMissing({ message: `No such agent: '${input.agent_id}'`, param: "agent_id" })
        }
        const at = yield* now
        const workspace = yield* repo.workspace(tenant)
        const cap = monthlyTicketCap[workspace.plan]
        if (Option.isNone(yield* repo.countCreation(tenant, monthOf(at), cap))) {
          return yield* new LimitReached({
            message: `The ${workspace.plan} plan allows ${cap} tickets per month; this month's are used up.`
          })
        }
        const actor = actorOf(acting)
        const ticket = toTicket(
          yield* repo.insert({
            ...tenant,
            id: ticketId,
            public_id: publicId,
            agent_id: input.agent_id,
            status: "open",
            priority: input.priority ?? "normal",
            origin,
            visitor_name: input.visitor_name ?? null,
            visitor_email: input.visitor_email ?? null,
            subject: input.subject,
            assigned_to: null,
            tags: [...new Set(input.tags ?? [])],
            metadata: input.metadata ?? {},
            conversation_id: input.conversation_id ?? null,
            created_at: at,
            updated_at: at,
            resolved_at: null,
            first_response_at: null
          })
        )
        yield* threadEvent(ticketId, "created", null, "open", actor, at)
        let firstMessage: TicketMessage | null = null
        if (input.body !== undefined) {
          const messageId = TicketMessageId.make(yield* ids.make("tmsg"))
          yield* repo.insertMessage({
            id: messageId,
            ticketId,
            author_type: "visitor",
            author_id: null,
            body: input.body,
            created_at: at
          })
          yield* threadEvent(ticketId, "message_added", null, messageId, { type: "visitor", id: null }, at)
          firstMessage = toMessage({
            id: messageId,
            ticket_public_id: publicId,
            author_type: "visitor",
            author_id: null,
            body: input.body,
            created_at: at
          })
        }
        yield* outbox.emit({ ...tenant, type: "ticket.created", data: { ticket, first_message: firstMessage } })
        // no visitor data in the e-mail: a sent message cannot be erased later
        yield* emails.enqueue({
          to: workspace.owner_email,
          workspaceId: tenant.workspaceId,
          subject: `New ticket ${publicId}: ${ticket.subject}`,
          text: [
            `A new ${ticket.priority}-priority ticket was opened (origin: ${origin}, environment: ${tenant.environment}).`,
            "",
            `Ticket: ${publicId}`,
            `Subject: ${ticket.subject}`,
            `Agent: ${ticket.agent_id}`
          ].join("\n")
        })
        return ticket
      }).pipe(tx)
    })

    /** The filters arrive validated by `TicketListParams`: only known statuses, priorities, origins and includes. */
    const list = Effect.fn("Tickets.list")(function* (tenant: Tenant, params: TicketListParams) {
      const page = yield* pages.parse("tickets", params, {
        status: params.status,
        priority: params.priority,
        assigned_to: params.assigned_to,
        agent_id: params.agent_id,
        origin: params.origin,
        tag: params.tag
      })
      const filters: TicketFilters = {
        statuses: params.status ?? [],
        priorities: params.priority ?? [],
        assignedTo: Option.fromNullable(params.assigned_to),
        agentId: Option.fromNullable(params.agent_id),
        origin: Option.fromNullable(params.origin),
        tag: Option.fromNullable(params.tag)
      }
      const { rows, pagination } = toPage(yield* repo.page(tenant, filters, page), page)
      const total = params.include === "total_count" ? { total_count: yield* repo.count(tenant, filters) } : {}
      return { tickets: rows.map(toTicket), pagination: { ...pagination, ...total } }
    })

    const retrieve = Effect.fn("Tickets.retrieve")(function* (tenant: Tenant, publicId: TicketPublicId) {
      const found = yield* repo.findWithThread(tenant, publicId)
      if (Option.isNone(found)) return yield* missing(publicId)
      const { messages, events } = found.value
      const thread: Array<{ readonly seq: bigint; readonly item: ThreadItem }> = [
        ...messages.map((m) => ({ seq: BigInt(m.seq), item: toMessage(m) as ThreadItem })),
        ...events.map((e) => ({ seq: BigInt(e.seq), item: toEvent(e) as ThreadItem }))
      ]
      thread.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0))
      return { ...toTicket(found.value), thread: thread.map((t) => t.item) }
    })

    const messages = Effect.fn("Tickets.messages")(function* (tenant: Tenant, publicId: TicketPublicId, params: PageParams) {
      const page = yield* pages.parse(`tickets/${publicId}/messages`, params)
      const found = yield* repo.find(tenant, publicId)
      if (Option.isNone(found)) return yield* missing(publicId)
      const { rows, pagination } = toPage(yield* repo.messages(found.value.id, Option.some(page)), page)
      return { messages: rows.map(toMessage), pagination }
    })

    /** Applies `change` to the locked ticket; writes nothing when it changes nothing. */
    const change = (acting: Acting, publicId: TicketPublicId, change: (row: TicketRow) => UpdateTicket) =>
      Effect.gen(function* () {
        const tenant: Tenant = acting.caller
        const row = yield* locked(tenant, publicId)
        const input = change(row)
        const before = stateOf(row)
        const metadata: Record<string, unknown> = { ...before.metadata }
        for (const [k, v] of Object.entries(input.metadata ?? {})) {
          if (v === null) delete metadata[k]
          else metadata[k] = v
        }
        const wanted = {
          status: input.status ?? before.status,
          priority: input.priority ?? before.priority,
          assigned_to: input.assigned_to !== undefined ? input.assigned_to : before.assigned_to,
          tags: input.tags !== undefined ? [...new Set(input.tags)] : before.tags,
          metadata
        }
        const unchanged =
          wanted.status === before.status &&
          wanted.priority === before.priority &&
          wanted.assigned_to === before.assigned_to &&
          sameJson(wanted.tags, before.tags) &&
          sameJson(wanted.metadata, before.metadata)
        if (unchanged) return toTicket(row)
        const at = yield* now
        const statusChanged = wanted.status !== before.status
        const ticket = toTicket(
          yield* repo.update(row.id, {
            ...before,
            ...wanted,
            updated_at: at,
            resolved_at: statusChanged ? (wanted.status === "resolved" ? at : null) : before.resolved_at
          })
        )
        const actor = actorOf(acting)
        if (wanted.assigned_to !== before.assigned_to) {
          yield* threadEvent(row.id, "assigned", before.assigned_to, wanted.assigned_to, actor, at)
        }
        if (statusChanged) yield* recordStatus(tenant, ticket, before.status, actor, at)
        // resolving gives the chat back to the agent (a reopened ticket does not take it again)
        const linked = handoffTicket(row)
        if (statusChanged && wanted.status === "resolved" && Option.isSome(linked)) {
          yield* handoff.ticketClosed(tenant, linked.value)
        }
        return ticket
      }).pipe(tx)

    const update = Effect.fn("Tickets.update")(function* (acting: Acting, publicId: TicketPublicId, input: UpdateTicket) {
      return yield* change(acting, publicId, () => input)
    })

    const resolve = Effect.fn("Tickets.resolve")(function* (acting: Acting, publicId: TicketPublicId) {
      return yield* change(acting, publicId, () => ({ status: "resolved" }))
    })

    const reopen = Effect.fn("Tickets.reopen")(function* (acting: Acting, publicId: TicketPublicId) {
      return yield* change(acting, publicId, (row) => (row.status === "resolved" ? { status: "open" } : {}))
    })

    /** A message on the locked ticket by `author_type`, its thread entry and event, and the status it moves the ticket to. */
    const append = (
      tenant: Tenant,
      publicId: TicketPublicId,
      author: { readonly type: "visitor" | "member"; readonly id: string | null },
      actor: ReturnType<typeof actorOf>,
      body: string
    ) =>
      Effect.gen(function* () {
        const row = yield* locked(tenant, publicId)
        const at = yield* now
        const author_type = author.type
        const author_id = author.id
        const id = TicketMessageId.make(yield* ids.make("tmsg"))
        yield* repo.insertMessage({ id, ticketId: row.id, author_type, author_id, body, created_at: at })
        yield* threadEvent(row.id, "message_added", null, id, actor, at)
        const message = toMessage({ id, ticket_public_id: publicId, author_type, author_id, body, created_at: at })
        yield* outbox.emit({ ...tenant, type: "ticket.message.created", data: { ticket_public_id: publicId, message } })

        const before = stateOf(row)
        const status: TicketStatus =
          author_type === "member" && before.status === "open"
            ? "pending_user"
            : author_type === "visitor" && before.status !== "open"
              ? "open"
              : before.status
        const ticket = toTicket(
          yield* repo.update(row.id, {
            ...before,
            status,
            updated_at: at,
            resolved_at: status === before.status ? before.resolved_at : null,
            first_response_at: author_type === "member" ? (before.first_response_at ?? at) : before.first_response_at
          })
        )
        if (status !== before.status) yield* recordStatus(tenant, ticket, before.status, system, at)
        // a member's answer on an escalated ticket goes to the conversation's hand-off (when it is open on it)
        const linked = handoffTicket(row)
        if (author_type === "member" && Option.isSome(linked)) yield* handoff.memberReplied(tenant, linked.value, message)
        return message
      })

    const addMessage = Effect.fn("Tickets.addMessage")(function* (acting: Acting, publicId: TicketPublicId, body: string) {
      const author_type = acting.caller.keyKind === "widget" ? "visitor" : "member"
      const author = { type: author_type, id: author_type === "member" ? Option.getOrNull(acting.memberId) : null } as const
      return yield* append(acting.caller, publicId, author, actorOf(acting), body).pipe(tx)
    })

    /**
     * The visitor's message on a ticket, written for them by the conversations area (a message sent in the
     * widget while the conversation is handed off to this ticket).
     */
    const addVisitorMessage = Effect.fn("Tickets.addVisitorMessage")(function* (
      tenant: Tenant,
      publicId: TicketPublicId,
      body: string
    ) {
      return yield* append(tenant, publicId, { type: "visitor", id: null }, { type: "visitor", id: null }, body).pipe(tx)
    })

    /** Tickets the tenant created in `month` (`YYYY-MM`): what the plan's cap counts, and the usage report shows. */
    const monthCount = (tenant: Tenant, month: string) => repo.monthCount(tenant, month)

    return { create, list, retrieve, messages, update, resolve, reopen, addMessage, addVisitorMessage, monthCount } as const
  }),
  dependencies: [TicketsRepo.Default, Agents.Default, TicketThread.Default]
}) {}
