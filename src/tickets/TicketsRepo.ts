/** SQL for tickets, their threads and the monthly creation counter. Scoped to one workspace and environment. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Plan } from "../../schema/Auth.js"
import type { AgentId } from "../../schema/Ids.js"
import type {
  ActorType,
  AuthorType,
  Ticket,
  TicketEvent,
  TicketEventType,
  TicketMessage,
  TicketMessageId,
  TicketOrigin,
  TicketPriority,
  TicketPublicId,
  TicketStatus
} from "../../schema/Tickets.js"
import type { Tenant } from "../../schema/Tenant.js"
import type { PageRequest } from "../../schema/Envelope.js"
import { iso, isoOrNull } from "../Time.js"

export interface TicketRow {
  readonly seq: string
  readonly id: string
  readonly public_id: string
  readonly agent_id: string
  readonly status: TicketStatus
  readonly priority: TicketPriority
  readonly origin: TicketOrigin
  readonly visitor_name: string | null
  readonly visitor_email: string | null
  readonly subject: string
  readonly assigned_to: string | null
  readonly tags: unknown
  readonly metadata: unknown
  readonly conversation_id: string | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly resolved_at: Date | null
  readonly first_response_at: Date | null
  readonly erased_at: Date | null
}

export interface MessageRow {
  readonly seq: string
  readonly id: string
  readonly ticket_public_id: string
  readonly author_type: AuthorType
  readonly author_id: string | null
  readonly body: string
  readonly created_at: Date
}

export interface EventRow {
  readonly seq: string
  readonly id: string
  readonly type: TicketEventType
  readonly from_value: string | null
  readonly to_value: string | null
  readonly actor_type: ActorType
  readonly actor_id: string | null
  readonly created_at: Date
}

/** The fields a change may set; the row is rewritten whole. */
export type TicketState = Pick<
  Ticket,
  "status" | "priority" | "assigned_to" | "tags" | "metadata"
> & {
  readonly updated_at: Date
  readonly resolved_at: Date | null
  readonly first_response_at: Date | null
}

/** Filters of the list, already validated. */
export interface TicketFilters {
  readonly statuses: ReadonlyArray<TicketStatus>
  readonly priorities: ReadonlyArray<TicketPriority>
  readonly assignedTo: Option.Option<string>
  readonly agentId: Option.Option<string>
  readonly origin: Option.Option<TicketOrigin>
  readonly tag: Option.Option<string>
}

// PGlite and node-postgres both parse jsonb, but a text value is tolerated
const json = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

export const toTicket = (row: TicketRow): Ticket => ({
  id: row.id,
  public_id: row.public_id as TicketPublicId,
  object: "ticket",
  agent_id: row.agent_id as AgentId,
  status: row.status,
  priority: row.priority,
  origin: row.origin,
  visitor_name: row.visitor_name,
  visitor_email: row.visitor_email,
  subject: row.subject,
  assigned_to: row.assigned_to,
  tags: json(row.tags) as ReadonlyArray<string>,
  metadata: json(row.metadata) as Record<string, unknown>,
  conversation_id: row.conversation_id,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
  resolved_at: isoOrNull(row.resolved_at),
  first_response_at: isoOrNull(row.first_response_at)
})

export const toMessage = (row: MessageRow): TicketMessage => ({
  id: row.id as TicketMessageId,
  object: "ticket_message",
  ticket_public_id: row.ticket_public_id as TicketPublicId,
  author_type: row.author_type,
  author_id: row.author_id,
  body: row.body,
  created_at: iso(row.created_at)
})

export const toEvent = (row: EventRow): TicketEvent => ({
  id: row.id,
  object: "ticket_event",
  type: row.type,
  from: row.from_value,
  to: row.to_value,
  actor: { type: row.actor_type, id: row.actor_id },
  created_at: iso(row.created_at)
})

// `seq` is read as text (a bigint); queries order by the table column, not the alias
const ticketColumns = `tickets.seq::text as seq, tickets.id::text as id, public_id, agent_id, status, priority, origin,
  visitor_name, visitor_email, subject, assigned_to, tags, metadata, conversation_id, created_at, updated_at,
  resolved_at, first_response_at, erased_at`
const messageColumns = `m.seq::text as seq, m.id, t.public_id as ticket_public_id, m.author_type, m.author_id, m.body,
  m.created_at`

export class TicketsRepo extends Effect.Service<TicketsRepo>()("Tickets/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(ticketColumns)
    const msgCols = sql.literal(messageColumns)
    const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullable(rows[0])
    const jsonb = (value: unknown) => sql`${JSON.stringify(value)}::text::jsonb`

    const workspace = (tenant: Tenant) =>
      sql<{ readonly plan: Plan; readonly owner_email: string }>`
        select plan, owner_email from workspaces where id = ${tenant.workspaceId}`.pipe(Effect.map((rows) => rows[0]!))

    /**
     * Counts one creation in this month, unless the count already reached `cap`
     * (then none: `Option.none()`). The upsert locks the counter row until the
     * transaction ends, so concurrent creations queue on it and the cap is exact.
     */
    const countCreation = (tenant: Tenant, month: string, cap: number | null) =>
      sql<{ readonly count: number }>`
        insert into ticket_usage (workspace_id, environment, month, count)
        values (${tenant.workspaceId}, ${tenant.environment}, ${month}, 1)
        on conflict (workspace_id, environment, month) do update set count = ticket_usage.count + 1
        ${cap === null ? sql.literal("") : sql`where ticket_usage.count < ${cap}`}
        returning count`.pipe(Effect.map(first))

    const insert = (
      row: Tenant & Omit<TicketRow, "seq" | "erased_at" | "tags" | "metadata"> & {
        readonly tags: ReadonlyArray<string>
        readonly metadata: Record<string, unknown>
      }
    ) =>
      sql<TicketRow>`
        insert into tickets (id, public_id, workspace_id, environment, agent_id, status, priority, origin,
          visitor_name, visitor_email, subject, assigned_to, tags, metadata, conversation_id, created_at, updated_at,
          resolved_at, first_response_at)
        values (${row.id}::uuid, ${row.public_id}, ${row.workspaceId}, ${row.environment}, ${row.agent_id},
          ${row.status}, ${row.priority}, ${row.origin}, ${row.visitor_name}, ${row.visitor_email}, ${row.subject},
          ${row.assigned_to}, ${jsonb(row.tags)}, ${jsonb(row.metadata)}, ${row.conversation_id}, ${row.created_at},
          ${row.updated_at}, ${row.resolved_at}, ${row.first_response_at})
        returning ${cols}`.pipe(Effect.map((rows) => rows[0]!))

    const find = (tenant: Tenant, publicId: string, options?: { readonly forUpdate?: boolean }) =>
      sql<TicketRow>`
        select ${cols} from tickets
        where public_id = ${publicId} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
        ${options?.forUpdate ? sql.literal("for update") : sql.literal("")}`.pipe(Effect.map(first))

    const where = (tenant: Tenant, filters: TicketFilters) =>
      sql.and([
        sql`tickets.workspace_id = ${tenant.workspaceId}`,
        sql`tickets.environment = ${tenant.environment}`,
        ...(filters.statuses.length > 0 ? [sql`tickets.status in ${sql.in(filters.statuses)}`] : []),
        ...(filters.priorities.length > 0 ? [sql`tickets.priority in ${sql.in(filters.priorities)}`] : []),
        ...Option.match(filters.assignedTo, { onNone: () => [], onSome: (a) => [sql`tickets.assigned_to = ${a}`] }),
        ...Option.match(filters.agentId, { onNone: () => [], onSome: (a) => [sql`tickets.agent_id = ${a}`] }),
        ...Option.match(filters.origin, { onNone: () => [], onSome: (o) => [sql`tickets.origin = ${o}`] }),
        ...Option.match(filters.tag, { onNone: () => [], onSome: (t) => [sql`tickets.tags @> ${jsonb([t])}`] })
      ])

    const page = (tenant: Tenant, filters: TicketFilters, page: PageRequest) =>
      sql<TicketRow>`
        select ${cols} from tickets
        where ${where(tenant, filters)}
          ${Option.isSome(page.after) ? sql`and tickets.seq < ${page.after.value}::bigint` : sql.literal("")}
        order by tickets.seq desc
        limit ${page.limit + 1}`

    const count = (tenant: Tenant, filters: TicketFilters) =>
      sql<{ readonly n: string }>`select count(*) as n from tickets where ${where(tenant, filters)}`.pipe(
        Effect.map((rows) => Number(rows[0]!.n))
      )

    const update = (id: string, state: TicketState) =>
      sql<TicketRow>`
        update tickets set status = ${state.status}, priority = ${state.priority}, assigned_to = ${state.assigned_to},
          tags = ${jsonb(state.tags)}, metadata = ${jsonb(state.metadata)}, updated_at = ${state.updated_at},
          resolved_at = ${state.resolved_at}, first_response_at = ${state.first_response_at}
        where id = ${id}::uuid
        returning ${cols}`.pipe(Effect.map((rows) => rows[0]!))

    const insertMessage = (row: {
      readonly id: string
      readonly ticketId: string
      readonly author_type: AuthorType
      readonly author_id: string | null
      readonly body: string
      readonly created_at: Date
    }) =>
      sql`
        insert into ticket_messages (id, ticket_id, author_type, author_id, body, created_at)
        values (${row.id}, ${row.ticketId}::uuid, ${row.author_type}, ${row.author_id}, ${row.body}, ${row.created_at})`

    const insertEvent = (row: {
      readonly id: string
      readonly ticketId: string
      readonly type: TicketEventType
      readonly from: string | null
      readonly to: string | null
      readonly actor: { readonly type: ActorType; readonly id: string | null }
      readonly created_at: Date
    }) =>
      sql`
        insert into ticket_events (id, ticket_id, type, from_value, to_value, actor_type, actor_id, created_at)
        values (${row.id}, ${row.ticketId}::uuid, ${row.type}, ${row.from}, ${row.to}, ${row.actor.type},
          ${row.actor.id}, ${row.created_at})`

    const messages = (ticketId: string, page: Option.Option<PageRequest>) =>
      sql<MessageRow>`
        select ${msgCols} from ticket_messages m join tickets t on t.id = m.ticket_id
        where m.ticket_id = ${ticketId}::uuid
          ${Option.isSome(page) && Option.isSome(page.value.after) ? sql`and m.seq > ${page.value.after.value}::bigint` : sql.literal("")}
        order by m.seq
        ${Option.isSome(page) ? sql`limit ${page.value.limit + 1}` : sql.literal("")}`

    const events = (ticketId: string) =>
      sql<EventRow>`
        select seq::text as seq, id, type, from_value, to_value, actor_type, actor_id, created_at
        from ticket_events where ticket_id = ${ticketId}::uuid order by seq`

    /** Replaces the personal data of the ticket and its messages; the row, its events and its times stay. */
    const erase = (ticketId: string, at: Date) =>
      Effect.zipRight(
        sql`update ticket_messages set body = '[deleted]' where ticket_id = ${ticketId}::uuid`,
        sql<TicketRow>`
          update tickets set
            visitor_name = case when visitor_name is null then null else '[deleted]' end,
            visitor_email = case when visitor_email is null then null else '[deleted]' end,
            updated_at = case when erased_at is null then ${at} else updated_at end,
            erased_at = coalesce(erased_at, ${at})
          where id = ${ticketId}::uuid
          returning ${cols}`.pipe(Effect.map((rows) => rows[0]!))
      )

    /** Stored JSON documents of this tenant that mention `publicId`: event bodies and replayable responses. */
    const documentsMentioning = (tenant: Tenant, publicId: string) =>
      Effect.all({
        events: sql<{ readonly id: string; readonly body: string }>`
          select id, body from events
          where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
            and type like 'ticket.%' and strpos(body, ${publicId}) > 0
          for update`,
        responses: sql<{ readonly key: string; readonly body: string }>`
          select key, response_body as body from idempotency_keys
          where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
            and response_body is not null and strpos(response_body, ${publicId}) > 0
          for update`
      })

    const rewriteEvent = (id: string, body: string) => sql`update events set body = ${body} where id = ${id}`
    const rewriteResponse = (tenant: Tenant, key: string, body: string) =>
      sql`
        update idempotency_keys set response_body = ${body}
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and key = ${key}`

    return {
      workspace,
      countCreation,
      insert,
      find,
      page,
      count,
      update,
      insertMessage,
      insertEvent,
      messages,
      events,
      erase,
      documentsMentioning,
      rewriteEvent,
      rewriteResponse
    } as const
  })
}) {}
