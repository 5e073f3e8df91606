/** SQL for tickets, their threads and the monthly creation counter. Scoped to one workspace and environment; rows decoded. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Plan } from "../../schema/Auth.js"
import type { PageRequest } from "../../schema/Envelope.js"
import { AgentId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import {
  ActorType,
  AuthorType,
  Metadata,
  type Ticket,
  type TicketEvent,
  TicketEventType,
  type TicketMessage,
  TicketMessageId,
  TicketOrigin,
  TicketPriority,
  TicketPublicId,
  TicketStatus
} from "../../schema/Tickets.js"
import { DbDate, DbJson } from "../db/Columns.js"
import { decodeAll, decodeOne, decodeSingle, execute } from "../db/Sql.js"
import { iso, isoOrNull } from "../Time.js"

/** What erasure leaves in place of personal data. */
export const erasedText = "[deleted]"

export const TicketRow = Schema.Struct({
  seq: Schema.String,
  id: Schema.UUID,
  public_id: TicketPublicId,
  agent_id: AgentId,
  status: TicketStatus,
  priority: TicketPriority,
  origin: TicketOrigin,
  visitor_name: Schema.NullOr(Schema.String),
  visitor_email: Schema.NullOr(Schema.String),
  subject: Schema.String,
  assigned_to: Schema.NullOr(Schema.String),
  tags: DbJson(Schema.Array(Schema.String)),
  metadata: DbJson(Metadata),
  conversation_id: Schema.NullOr(Schema.String),
  created_at: DbDate,
  updated_at: DbDate,
  resolved_at: Schema.NullOr(DbDate),
  first_response_at: Schema.NullOr(DbDate),
  erased_at: Schema.NullOr(DbDate)
})
export type TicketRow = typeof TicketRow.Type

export const MessageRow = Schema.Struct({
  seq: Schema.String,
  id: TicketMessageId,
  ticket_public_id: TicketPublicId,
  author_type: AuthorType,
  author_id: Schema.NullOr(Schema.String),
  body: Schema.String,
  created_at: DbDate
})
export type MessageRow = typeof MessageRow.Type

export const EventRow = Schema.Struct({
  seq: Schema.String,
  id: Schema.String,
  type: TicketEventType,
  from_value: Schema.NullOr(Schema.String),
  to_value: Schema.NullOr(Schema.String),
  actor_type: ActorType,
  actor_id: Schema.NullOr(Schema.String),
  created_at: DbDate
})
export type EventRow = typeof EventRow.Type

/** A ticket with its thread: its messages and its events, each in `seq` order. */
export const TicketWithThreadRow = Schema.Struct({
  ...TicketRow.fields,
  messages: DbJson(Schema.Array(MessageRow)),
  events: DbJson(Schema.Array(EventRow))
})
export type TicketWithThreadRow = typeof TicketWithThreadRow.Type

const WorkspaceRow = Schema.Struct({ plan: Plan, owner_email: Schema.String })
const CountRow = Schema.Struct({ count: Schema.Number })
const TotalRow = Schema.Struct({ n: Schema.NumberFromString })

/** The fields a change may set; the row is rewritten whole. */
export type TicketState = Pick<Ticket, "status" | "priority" | "assigned_to" | "tags" | "metadata"> & {
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

export const toTicket = (row: TicketRow): Ticket => ({
  id: row.id,
  public_id: row.public_id,
  object: "ticket",
  agent_id: row.agent_id,
  status: row.status,
  priority: row.priority,
  origin: row.origin,
  visitor_name: row.visitor_name,
  visitor_email: row.visitor_email,
  subject: row.subject,
  assigned_to: row.assigned_to,
  tags: row.tags,
  metadata: row.metadata,
  conversation_id: row.conversation_id,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
  resolved_at: isoOrNull(row.resolved_at),
  first_response_at: isoOrNull(row.first_response_at)
})

export const toMessage = (row: Omit<MessageRow, "seq">): TicketMessage => ({
  id: row.id,
  object: "ticket_message",
  ticket_public_id: row.ticket_public_id,
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
    const jsonb = (value: unknown) => sql`${JSON.stringify(value)}::text::jsonb`

    const workspace = (tenant: Tenant) =>
      decodeSingle(WorkspaceRow, sql`select plan, owner_email from workspaces where id = ${tenant.workspaceId}`)

    /**
     * Counts one creation in this month, unless the count already reached `cap`
     * (then none: `Option.none()`). The upsert locks the counter row until the
     * transaction ends, so concurrent creations queue on it and the cap is exact.
     */
    const countCreation = (tenant: Tenant, month: string, cap: number | null) =>
      decodeOne(CountRow, sql`
        insert into ticket_usage (workspace_id, environment, month, count)
        values (${tenant.workspaceId}, ${tenant.environment}, ${month}, 1)
        on conflict (workspace_id, environment, month) do update set count = ticket_usage.count + 1
        ${cap === null ? sql.literal("") : sql`where ticket_usage.count < ${cap}`}
        returning count`)

    /** Tickets counted this `month` (`YYYY-MM`) for the tenant: what usage reports against the cap. */
    const monthCount = (tenant: Tenant, month: string) =>
      decodeOne(CountRow, sql`
        select count from ticket_usage
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and month = ${month}`).pipe(
        Effect.map(Option.match({ onNone: () => 0, onSome: (r) => r.count }))
      )

    const insert = (
      row: Tenant & Omit<TicketRow, "seq" | "erased_at" | "tags" | "metadata"> & {
        readonly tags: ReadonlyArray<string>
        readonly metadata: Record<string, unknown>
      }
    ) =>
      decodeSingle(TicketRow, sql`
        insert into tickets (id, public_id, workspace_id, environment, agent_id, status, priority, origin,
          visitor_name, visitor_email, subject, assigned_to, tags, metadata, conversation_id, created_at, updated_at,
          resolved_at, first_response_at)
        values (${row.id}::uuid, ${row.public_id}, ${row.workspaceId}, ${row.environment}, ${row.agent_id},
          ${row.status}, ${row.priority}, ${row.origin}, ${row.visitor_name}, ${row.visitor_email}, ${row.subject},
          ${row.assigned_to}, ${jsonb(row.tags)}, ${jsonb(row.metadata)}, ${row.conversation_id}, ${row.created_at},
          ${row.updated_at}, ${row.resolved_at}, ${row.first_response_at})
        returning ${cols}`)

    const find = (tenant: Tenant, publicId: TicketPublicId, options?: { readonly forUpdate?: boolean }) =>
      decodeOne(TicketRow, sql`
        select ${cols} from tickets
        where public_id = ${publicId} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
        ${options?.forUpdate ? sql.literal("for update") : sql.literal("")}`)

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
      decodeAll(TicketRow, sql`
        select ${cols} from tickets
        where ${where(tenant, filters)}
          ${Option.isSome(page.after) ? sql`and tickets.seq < ${page.after.value}::bigint` : sql.literal("")}
        order by tickets.seq desc
        limit ${page.limit + 1}`)

    const count = (tenant: Tenant, filters: TicketFilters) =>
      decodeSingle(TotalRow, sql`select count(*)::text as n from tickets where ${where(tenant, filters)}`).pipe(
        Effect.map((row) => row.n)
      )

    const update = (id: string, state: TicketState) =>
      decodeSingle(TicketRow, sql`
        update tickets set status = ${state.status}, priority = ${state.priority}, assigned_to = ${state.assigned_to},
          tags = ${jsonb(state.tags)}, metadata = ${jsonb(state.metadata)}, updated_at = ${state.updated_at},
          resolved_at = ${state.resolved_at}, first_response_at = ${state.first_response_at}
        where id = ${id}::uuid
        returning ${cols}`)

    const insertMessage = (row: {
      readonly id: string
      readonly ticketId: string
      readonly author_type: AuthorType
      readonly author_id: string | null
      readonly body: string
      readonly created_at: Date
    }) =>
      execute(sql`
        insert into ticket_messages (id, ticket_id, author_type, author_id, body, created_at)
        values (${row.id}, ${row.ticketId}::uuid, ${row.author_type}, ${row.author_id}, ${row.body}, ${row.created_at})`)

    const insertEvent = (row: {
      readonly id: string
      readonly ticketId: string
      readonly type: TicketEventType
      readonly from: string | null
      readonly to: string | null
      readonly actor: { readonly type: ActorType; readonly id: string | null }
      readonly created_at: Date
    }) =>
      execute(sql`
        insert into ticket_events (id, ticket_id, type, from_value, to_value, actor_type, actor_id, created_at)
        values (${row.id}, ${row.ticketId}::uuid, ${row.type}, ${row.from}, ${row.to}, ${row.actor.type},
          ${row.actor.id}, ${row.created_at})`)

    const messages = (ticketId: string, page: Option.Option<PageRequest>) =>
      decodeAll(MessageRow, sql`
        select ${msgCols} from ticket_messages m join tickets t on t.id = m.ticket_id
        where m.ticket_id = ${ticketId}::uuid
          ${Option.isSome(page) && Option.isSome(page.value.after) ? sql`and m.seq > ${page.value.after.value}::bigint` : sql.literal("")}
        order by m.seq
        ${Option.isSome(page) ? sql`limit ${page.value.limit + 1}` : sql.literal("")}`)

    /**
     * The ticket with its whole thread in one statement (a `GET` reads it on every call): the messages and the
     * events come as JSON arrays, decoded by the same row schemas as `messages` and `events` rows.
     */
    const findWithThread = (tenant: Tenant, publicId: TicketPublicId) =>
      decodeOne(TicketWithThreadRow, sql`
        select ${cols},
          (select coalesce(json_agg(json_build_object(
              'seq', m.seq::text, 'id', m.id, 'ticket_public_id', tickets.public_id, 'author_type', m.author_type,
              'author_id', m.author_id, 'body', m.body, 'created_at', m.created_at) order by m.seq), '[]'::json)
            from ticket_messages m where m.ticket_id = tickets.id) as messages,
          (select coalesce(json_agg(json_build_object(
              'seq', e.seq::text, 'id', e.id, 'type', e.type, 'from_value', e.from_value, 'to_value', e.to_value,
              'actor_type', e.actor_type, 'actor_id', e.actor_id, 'created_at', e.created_at) order by e.seq), '[]'::json)
            from ticket_events e where e.ticket_id = tickets.id) as events
        from tickets
        where public_id = ${publicId} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}`)

    /** Replaces the personal data of the ticket and its messages; the row, its events and its times stay. */
    const erase = (ticketId: string, at: Date) =>
      Effect.zipRight(
        execute(sql`update ticket_messages set body = ${erasedText} where ticket_id = ${ticketId}::uuid`),
        decodeSingle(TicketRow, sql`
          update tickets set
            visitor_name = case when visitor_name is null then null else ${erasedText}::text end,
            visitor_email = case when visitor_email is null then null else ${erasedText}::text end,
            updated_at = case when erased_at is null then ${at} else updated_at end,
            erased_at = coalesce(erased_at, ${at})
          where id = ${ticketId}::uuid
          returning ${cols}`)
      )

    return {
      workspace,
      countCreation,
      monthCount,
      insert,
      find,
      page,
      count,
      update,
      insertMessage,
      insertEvent,
      messages,
      findWithThread,
      erase
    } as const
  })
}) {}
