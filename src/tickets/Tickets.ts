/**
 * Ticket programs. Every change, its thread entries, its events and its e-mail
 * commit in one transaction, with the ticket row locked (`for update`) so
 * concurrent changes to one ticket apply one after the other.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import type { CallerShape, Plan } from "../../schema/Auth.js"
import type { PageParams } from "../../schema/Envelope.js"
import { KeyScopeMismatch, LimitReached, ParameterInvalid, ResourceMissing } from "../../schema/Errors.js"
import {
  type Actor,
  type CreateTicket,
  type ThreadItem,
  type Ticket,
  type TicketEventType,
  type TicketListParams,
  type TicketMessage,
  type TicketOrigin,
  TicketOrigins,
  TicketPriorities,
  type TicketPriority,
  type TicketStatus,
  TicketStatuses,
  type UpdateTicket
} from "../../schema/Tickets.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { AgentsRepo, type Tenant } from "../agents/AgentsRepo.js"
import { Emails } from "../email/Emails.js"
import { Outbox } from "../events/Outbox.js"
import { Paginator, toPage } from "../http/Pagination.js"
import { iso, now } from "../Time.js"
import { type TicketFilters, type TicketRow, type TicketState, TicketsRepo, toEvent, toMessage, toTicket } from "./TicketsRepo.js"

/** Tickets a workspace may create per calendar month (UTC) and environment; null: no cap. */
export const monthlyTicketCap: Record<Plan, number | null> = { free: 20, starter: 200, pro: null, enterprise: null }

/** Who asks: the key, and the member acting through it (`Service-Member-Id`), if any. */
export interface Acting {
  readonly caller: CallerShape
  readonly memberId: Option.Option<string>
}

/** Origins each key kind may create through the API; `form` belongs to form submissions. */
const originsFor: Record<CallerShape["keyKind"], ReadonlyArray<TicketOrigin>> = {
  secret: ["api", "widget_button", "ai_escalation"],
  widget: ["widget_button", "ai_escalation"],
  forms: []
}

export const erasedText = "[deleted]"

const missing = (id: string) => new ResourceMissing({ message: `No such ticket: '${id}'`, param: "public_id" })

const monthOf = (d: Date) => `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, "0")}`

const actorOf = ({ caller, memberId }: Acting): Actor =>
  caller.keyKind === "widget"
    ? { type: "visitor", id: null }
    : Option.isSome(memberId)
      ? { type: "member", id: memberId.value }
      : { type: "api", id: caller.keyId }

const system: Actor = { type: "system", id: null }

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** Values of a repeatable query parameter, each checked against `allowed`. */
const valuesOf = <A extends string>(
  raw: string | ReadonlyArray<string> | undefined,
  allowed: ReadonlyArray<A>,
  param: string
): Effect.Effect<ReadonlyArray<A>, ParameterInvalid> => {
  const values = raw === undefined ? [] : typeof raw === "string" ? [raw] : raw
  const isAllowed = (v: string): v is A => (allowed as ReadonlyArray<string>).includes(v)
  const bad = values.find((v) => !isAllowed(v))
  return bad === undefined
    ? Effect.succeed([...new Set(values.filter(isAllowed))])
    : Effect.fail(new ParameterInvalid({ message: `${param} must be one of ${allowed.join(", ")}; got '${bad}'`, param }))
}

/**
 * A copy of a stored JSON document with this ticket's personal data replaced:
 * the visitor's name and e-mail in every `ticket` object of it, the body of
 * every `ticket_message` of it. Matching by object kind and id, not by value,
 * leaves other tickets and unrelated strings alone.
 */
const scrubDocument = (text: string, publicId: string): Option.Option<string> => {
  let changed = false
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk)
    if (typeof value !== "object" || value === null) return value
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = walk(v)
    const replace = (field: string) => {
      if (typeof out[field] === "string" && out[field] !== erasedText) {
        out[field] = erasedText
        changed = true
      }
    }
    if (out.object === "ticket" && out.public_id === publicId) {
      replace("visitor_name")
      replace("visitor_email")
    }
    if (out.object === "ticket_message" && out.ticket_public_id === publicId) replace("body")
    return out
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return Option.none()
  }
  const scrubbed = walk(parsed)
  return changed ? Option.some(JSON.stringify(scrubbed)) : Option.none()
}

export class Tickets extends Effect.Service<Tickets>()("Tickets/Programs", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* TicketsRepo
    const agents = yield* AgentsRepo
    const outbox = yield* Outbox
    const emails = yield* Emails
    const ids = yield* IdGenerator
    const pages = yield* Paginator

    const locked = (tenant: Tenant, publicId: string) =>
      Effect.flatMap(repo.find(tenant, publicId, { forUpdate: true }), (row) =>
        Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(missing(publicId))
      )

    const threadEvent = (ticketId: string, type: TicketEventType, from: string | null, to: string | null, actor: Actor, at: Date) =>
      Effect.flatMap(ids.make("tev"), (id) =>
        repo.insertEvent({ id, ticketId, type, from, to, actor, created_at: at })
      )

    /** The thread entry and the events of a status change (already written to the row). */
    const recordStatus = (tenant: Tenant, ticket: Ticket, from: TicketStatus, actor: Actor, at: Date) =>
      Effect.gen(function* () {
        const to = ticket.status
        const type: TicketEventType = to === "resolved" ? "resolved" : from === "resolved" ? "reopened" : "status_changed"
        yield* threadEvent(ticket.id, type, from, to, actor, at)
        yield* outbox.emit({
          ...tenant,
          type: "ticket.status.changed",
          data: { ticket_public_id: ticket.public_id, from, to, actor, changed_at: iso(at) }
        })
        if (to === "resolved") yield* outbox.emit({ ...tenant, type: "ticket.resolved", data: { ticket } })
      })

    const stateOf = (row: TicketRow): TicketState => {
      const t = toTicket(row)
      return {
        status: t.status,
        priority: t.priority,
        assigned_to: t.assigned_to,
        tags: t.tags,
        metadata: t.metadata,
        updated_at: row.updated_at,
        resolved_at: row.resolved_at,
        first_response_at: row.first_response_at
      }
    }

    const create = Effect.fn("Tickets.create")(function* (acting: Acting, input: CreateTicket) {
      const tenant: Tenant = acting.caller
      const origin = input.origin ?? (acting.caller.keyKind === "widget" ? "widget_button" : "api")
      if (!originsFor[acting.caller.keyKind].includes(origin)) {
        return yield* new KeyScopeMismatch({
          message:
            origin === "form"
              ? "Tickets of origin `form` are created by form submissions only."
              : `A ${acting.caller.keyKind} key cannot create tickets of origin \`${origin}\`.`,
          param: "origin"
        })
      }
      const publicId = yield* ids.make("tck")
      const ticketId = randomUUID()
      return yield* Effect.gen(function* () {
        if (Option.isNone(yield* agents.find(tenant, input.agent_id))) {
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
          const messageId = yield* ids.make("tmsg")
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
            seq: "0",
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
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
    })

    const list = Effect.fn("Tickets.list")(function* (tenant: Tenant, params: TicketListParams) {
      const page = yield* pages.parse("tickets", params, {
        status: params.status,
        priority: params.priority,
        assigned_to: params.assigned_to,
        agent_id: params.agent_id,
        origin: params.origin,
        tag: params.tag
      })
      const origin = yield* valuesOf(params.origin, TicketOrigins, "origin")
      const filters: TicketFilters = {
        statuses: yield* valuesOf(params.status, TicketStatuses, "status"),
        priorities: yield* valuesOf<TicketPriority>(params.priority, TicketPriorities, "priority"),
        assignedTo: Option.fromNullable(params.assigned_to),
        agentId: Option.fromNullable(params.agent_id),
        origin: Option.fromNullable(origin[0]),
        tag: Option.fromNullable(params.tag)
      }
      if (params.include !== undefined && params.include !== "total_count") {
        return yield* new ParameterInvalid({ message: "include accepts only `total_count`", param: "include" })
      }
      const { rows, pagination } = toPage(yield* Effect.orDie(repo.page(tenant, filters, page)), page)
      const total = params.include === "total_count" ? { total_count: yield* Effect.orDie(repo.count(tenant, filters)) } : {}
      return { tickets: rows.map(toTicket), pagination: { ...pagination, ...total } }
    })

    const retrieve = Effect.fn("Tickets.retrieve")(function* (tenant: Tenant, publicId: string) {
      const found = yield* Effect.orDie(repo.find(tenant, publicId))
      if (Option.isNone(found)) return yield* missing(publicId)
      const [messages, events] = yield* Effect.orDie(
        Effect.all([repo.messages(found.value.id, Option.none()), repo.events(found.value.id)])
      )
      const thread: Array<{ readonly seq: bigint; readonly item: ThreadItem }> = [
        ...messages.map((m) => ({ seq: BigInt(m.seq), item: toMessage(m) as ThreadItem })),
        ...events.map((e) => ({ seq: BigInt(e.seq), item: toEvent(e) as ThreadItem }))
      ]
      thread.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0))
      return { ...toTicket(found.value), thread: thread.map((t) => t.item) }
    })

    const messages = Effect.fn("Tickets.messages")(function* (tenant: Tenant, publicId: string, params: PageParams) {
      const page = yield* pages.parse(`tickets/${publicId}/messages`, params)
      const found = yield* Effect.orDie(repo.find(tenant, publicId))
      if (Option.isNone(found)) return yield* missing(publicId)
      const { rows, pagination } = toPage(yield* Effect.orDie(repo.messages(found.value.id, Option.some(page))), page)
      return { messages: rows.map(toMessage), pagination }
    })

    /** Applies `change` to the locked ticket; writes nothing when it changes nothing. */
    const change = (acting: Acting, publicId: string, change: (row: TicketRow) => UpdateTicket) =>
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
        return ticket
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const update = Effect.fn("Tickets.update")(function* (acting: Acting, publicId: string, input: UpdateTicket) {
      return yield* change(acting, publicId, () => input)
    })

    const resolve = Effect.fn("Tickets.resolve")(function* (acting: Acting, publicId: string) {
      return yield* change(acting, publicId, () => ({ status: "resolved" }))
    })

    const reopen = Effect.fn("Tickets.reopen")(function* (acting: Acting, publicId: string) {
      return yield* change(acting, publicId, (row) => (row.status === "resolved" ? { status: "open" } : {}))
    })

    const addMessage = Effect.fn("Tickets.addMessage")(function* (acting: Acting, publicId: string, body: string) {
      const tenant: Tenant = acting.caller
      return yield* Effect.gen(function* () {
        const row = yield* locked(tenant, publicId)
        const at = yield* now
        const author_type = acting.caller.keyKind === "widget" ? "visitor" : "member"
        const author_id = author_type === "member" ? Option.getOrNull(acting.memberId) : null
        const id = yield* ids.make("tmsg")
        yield* repo.insertMessage({ id, ticketId: row.id, author_type, author_id, body, created_at: at })
        yield* threadEvent(row.id, "message_added", null, id, actorOf(acting), at)
        const message = toMessage({ seq: "0", id, ticket_public_id: publicId, author_type, author_id, body, created_at: at })
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
        return message
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
    })

    const erase = Effect.fn("Tickets.erase")(function* (acting: Acting, publicId: string) {
      const tenant: Tenant = acting.caller
      return yield* Effect.gen(function* () {
        const row = yield* locked(tenant, publicId)
        const at = yield* now
        if (row.erased_at === null) yield* threadEvent(row.id, "erased", null, null, actorOf(acting), at)
        const erased = yield* repo.erase(row.id, at)
        // events keep their place and type; only the personal values in their bodies change,
        // and pending webhook deliveries send the event body as it is at send time
        const { events, responses } = yield* repo.documentsMentioning(tenant, publicId)
        for (const e of events) {
          const scrubbed = scrubDocument(e.body, publicId)
          if (Option.isSome(scrubbed)) yield* repo.rewriteEvent(e.id, scrubbed.value)
        }
        for (const r of responses) {
          const scrubbed = scrubDocument(r.body, publicId)
          if (Option.isSome(scrubbed)) yield* repo.rewriteResponse(tenant, r.key, scrubbed.value)
        }
        return toTicket(erased)
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
    })

    return { create, list, retrieve, messages, update, resolve, reopen, addMessage, erase } as const
  })
}) {}
