/**
 * SQL for conversations, messages and reply events, rows decoded with Schema;
 * database failures are defects from here on. A conversation's hand-off state and its own event stream are
 * `HandoffRepo.ts`'s. Reads of a caller are scoped to
 * one workspace and environment; the reply generator and the idle job, which
 * act on rows they were handed, address them by id.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Environment } from "../../schema/Auth.js"
import { Channel, type Conversation, ConversationStatus, type Handoff, HandoffStatus, type Message, MessageOutcome } from "../../schema/Conversations.js"
import { MessageRole, MessageSource, Metadata, Rating } from "../../schema/Conversations.js"
import { AgentId, ConversationId, type LeadId, MessageId, WorkspaceId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { DbDate, DbJson } from "../db/Columns.js"
import { decodeAll, decodeOne, decodeSingle, execute, transaction } from "../db/Sql.js"
import type { PageRequest } from "../http/Pagination.js"
import { iso, isoOrNull } from "../Time.js"

export const ConversationRow = Schema.Struct({
  seq: Schema.String,
  id: ConversationId,
  workspace_id: WorkspaceId,
  environment: Environment,
  agent_id: AgentId,
  channel: Channel,
  status: ConversationStatus,
  lead_id: Schema.NullOr(Schema.String),
  message_count: Schema.Int,
  metadata: DbJson(Metadata),
  started_at: DbDate,
  ended_at: Schema.NullOr(DbDate),
  last_activity_at: DbDate,
  handoff_status: Schema.NullOr(HandoffStatus),
  handoff_ticket_public_id: Schema.NullOr(Schema.String),
  handoff_requested_at: Schema.NullOr(DbDate),
  handoff_updated_at: Schema.NullOr(DbDate),
  /** When a widget last followed the conversation's events (`Handoff.follow`); null: never. */
  last_seen_at: Schema.NullOr(DbDate)
})
export type ConversationRow = typeof ConversationRow.Type

export const MessageStatus = Schema.Literal("generating", "complete", "interrupted", "failed")
export type MessageStatus = typeof MessageStatus.Type

export const MessageRow = Schema.Struct({
  id: MessageId,
  conversation_id: ConversationId,
  role: MessageRole,
  status: MessageStatus,
  content: Schema.String,
  sources: DbJson(Schema.Array(MessageSource)),
  created_at: DbDate,
  /** When the reply's stream events were dropped (`pruneEvents`); null while they are kept. */
  events_pruned_at: Schema.NullOr(DbDate),
  /** Its rating (assistant replies only); the three are null together. */
  feedback_rating: Schema.NullOr(Rating),
  feedback_comment: Schema.NullOr(Schema.String),
  feedback_updated_at: Schema.NullOr(DbDate),
  /** A completed assistant reply's outcome; null on every other message. */
  outcome: Schema.NullOr(MessageOutcome)
})
export type MessageRow = typeof MessageRow.Type

export const EventRow = Schema.Struct({ seq: Schema.Int, data: Schema.String })
export type EventRow = typeof EventRow.Type

export const handoffOf = (row: ConversationRow): Handoff | null =>
  row.handoff_status === null ||
  row.handoff_ticket_public_id === null ||
  row.handoff_requested_at === null ||
  row.handoff_updated_at === null
    ? null
    : {
        status: row.handoff_status,
        ticket_public_id: row.handoff_ticket_public_id,
        requested_at: iso(row.handoff_requested_at),
        updated_at: iso(row.handoff_updated_at)
      }

/** The hand-off is open: people answer, the agent does not. */
export const inHandoff = (row: ConversationRow): boolean =>
  row.handoff_status === "requested" || row.handoff_status === "active"

export const toConversation = (row: ConversationRow): Conversation => ({
  id: row.id,
  object: "conversation",
  agent_id: row.agent_id,
  channel: row.channel,
  status: row.status,
  lead_id: row.lead_id,
  message_count: row.message_count,
  started_at: iso(row.started_at),
  ended_at: isoOrNull(row.ended_at),
  metadata: row.metadata,
  handoff: handoffOf(row)
})

export const toMessage = (row: MessageRow): Message => ({
  id: row.id,
  object: "message",
  conversation_id: row.conversation_id,
  role: row.role,
  content: row.content,
  sources: row.sources,
  feedback:
    row.role === "assistant" && row.feedback_rating !== null && row.feedback_updated_at !== null
      ? { rating: row.feedback_rating, comment: row.feedback_comment, updated_at: iso(row.feedback_updated_at) }
      : null,
  outcome: row.role === "assistant" ? row.outcome : null,
  created_at: iso(row.created_at)
})

export const conversationColumns = `conversations.seq::text as seq, id, workspace_id, environment, agent_id, channel, status,
  lead_id, message_count, metadata, started_at, ended_at, last_activity_at, handoff_status, handoff_ticket_public_id,
  handoff_requested_at, handoff_updated_at, last_seen_at`
const messageColumns =
  "id, conversation_id, role, status, content, sources, created_at, events_pruned_at, feedback_rating, feedback_comment, " +
  "feedback_updated_at, outcome"

export interface NewConversation {
  readonly id: ConversationId
  readonly agentId: AgentId
  readonly channel: Channel
  readonly metadata: Readonly<Record<string, unknown>>
  readonly at: Date
}

export interface NewMessage {
  readonly id: MessageId
  readonly conversationId: ConversationId
  readonly role: MessageRole
  readonly status: MessageStatus
  readonly content: string
  readonly at: Date
}

export interface ConversationFilters {
  readonly agentId: Option.Option<AgentId>
  readonly status: Option.Option<ConversationStatus>
  readonly outcome: Option.Option<MessageOutcome>
}

export class ConversationsRepo extends Effect.Service<ConversationsRepo>()("Conversations/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cCols = sql.literal(conversationColumns)
    const mCols = sql.literal(messageColumns)
    const tenantIs = (t: Tenant) => sql`workspace_id = ${t.workspaceId} and environment = ${t.environment}`

    const insertConversation = (tenant: Tenant, c: NewConversation) =>
      decodeSingle(
        ConversationRow,
        sql`insert into conversations ${sql.insert({
          id: c.id,
          workspace_id: tenant.workspaceId,
          environment: tenant.environment,
          agent_id: c.agentId,
          channel: c.channel,
          status: "open",
          lead_id: null,
          message_count: 0,
          metadata: JSON.stringify(c.metadata),
          started_at: c.at,
          ended_at: null,
          last_activity_at: c.at
        })} returning ${cCols}`
      )

    const findConversation = (tenant: Tenant, id: ConversationId, options: { readonly forUpdate?: boolean } = {}) =>
      decodeOne(
        ConversationRow,
        sql`select ${cCols} from conversations where id = ${id} and ${tenantIs(tenant)}
          ${options.forUpdate === true ? sql.literal("for update") : sql.literal("")}`
      )

    const conversationById = (id: ConversationId) =>
      decodeOne(ConversationRow, sql`select ${cCols} from conversations where id = ${id}`)

    const page = (tenant: Tenant, filters: ConversationFilters, request: PageRequest) =>
      decodeAll(
        ConversationRow,
        sql`select ${cCols} from conversations
          where ${tenantIs(tenant)}
          ${filters.agentId._tag === "Some" ? sql`and agent_id = ${filters.agentId.value}` : sql.literal("")}
          ${filters.status._tag === "Some" ? sql`and status = ${filters.status.value}` : sql.literal("")}
          ${filters.outcome._tag === "Some"
            ? sql`and exists (select 1 from messages where messages.conversation_id = conversations.id
                and messages.outcome = ${filters.outcome.value})`
            : sql.literal("")}
          ${request.after._tag === "Some" ? sql`and conversations.seq < ${request.after.value}` : sql.literal("")}
          order by conversations.seq desc limit ${request.limit + 1}`
      )

    /** The lead captured in it: the latest capture wins. */
    const setLead = (tenant: Tenant, id: ConversationId, leadId: LeadId) =>
      execute(sql`update conversations set lead_id = ${leadId} where id = ${id} and ${tenantIs(tenant)}`)

    /** A deleted lead is no conversation's lead any more. */
    const clearLead = (tenant: Tenant, leadId: LeadId) =>
      execute(sql`update conversations set lead_id = null where lead_id = ${leadId} and ${tenantIs(tenant)}`)

    /** Counts `added` final messages and marks the conversation active at `at`. */

    const touch = (id: ConversationId, added: number, at: Date) =>
      execute(sql`update conversations set message_count = message_count + ${added},
        last_activity_at = greatest(last_activity_at, ${at}) where id = ${id}`)

    /**
     * Ends the conversation if it is still open and, when `idleSince` is given,
     * has had no activity after it: the one conditional update that makes
     * `conversation.ended` happen once.
     */
    const end = (id: ConversationId, at: Date, idleSince?: Date) =>
      decodeOne(
        ConversationRow,
        sql`update conversations set status = 'ended', ended_at = ${at}
          where id = ${id} and status = 'open'
          ${idleSince === undefined ? sql.literal("") : sql`and last_activity_at <= ${idleSince}`}
          returning ${cCols}`
      )

    /**
     * The messages, in this order, and the conversation's count raised by `counted` (its last activity `at`):
     * one statement, so a transaction holds the session one round trip less.
     */
    const addMessages = (tenant: Tenant, conversationId: ConversationId, messages: ReadonlyArray<NewMessage>, counted: number, at: Date) =>
      execute(
        sql`with inserted as (
          insert into messages ${sql.insert(
            messages.map((m) => ({
              id: m.id,
              workspace_id: tenant.workspaceId,
              environment: tenant.environment,
              conversation_id: m.conversationId,
              role: m.role,
              status: m.status,
              content: m.content,
              sources: "[]",
              created_at: m.at,
              completed_at: m.status === "complete" ? m.at : null
            }))
          )} returning id
        )
        update conversations set message_count = message_count + ${counted},
          last_activity_at = greatest(last_activity_at, ${at})
        where id = ${conversationId} and exists (select 1 from inserted)`
      )

    const findMessage = (
      tenant: Tenant,
      conversationId: ConversationId,
      id: MessageId,
      options: { readonly forUpdate?: boolean } = {}
    ) =>
      decodeOne(
        MessageRow,
        sql`select ${mCols} from messages where id = ${id} and conversation_id = ${conversationId} and ${tenantIs(tenant)}
          ${options.forUpdate === true ? sql.literal("for update") : sql.literal("")}`
      )

    /** A message's rating set (or cleared: all null), locked by the caller's transaction's read before. */
    const setFeedback = (
      id: MessageId,
      feedback: { readonly rating: Rating; readonly comment: string | null; readonly at: Date } | null
    ) =>
      decodeSingle(
        MessageRow,
        sql`update messages set feedback_rating = ${feedback?.rating ?? null},
          feedback_comment = ${feedback?.comment ?? null}, feedback_updated_at = ${feedback?.at ?? null}
          where id = ${id} returning ${mCols}`
      )

    const messageStatus = (id: MessageId) =>
      Effect.map(
        decodeOne(Schema.Struct({ status: MessageStatus }), sql`select status from messages where id = ${id}`),
        (row) => (row._tag === "Some" ? row.value.status : null)
      )

    /** Final messages of a conversation, oldest first. */
    const finalMessages = (conversationId: ConversationId) =>
      decodeAll(
        MessageRow,
        sql`select ${mCols} from messages where conversation_id = ${conversationId} and status = 'complete' order by seq`
      )

    /** Marks a generating reply final; false when it was no longer generating. */
    const eventValues = (messageId: MessageId, events: ReadonlyArray<EventRow>) =>
      sql.insert(events.map((e) => ({ message_id: messageId, seq: e.seq, data: e.data })))

    /**
     * Completes a generating reply (its content and sources; its conversation counts one message more) and
     * writes its last `events` (at least one), in one statement: atomic without a transaction, one round
     * trip. True when this completed it (it was still generating).
     */
    const completeReply = (
      id: MessageId,
      content: string,
      sources: ReadonlyArray<MessageSource>,
      at: Date,
      events: ReadonlyArray<EventRow>,
      reply: { readonly agentId: AgentId; readonly outcome: MessageOutcome }
    ) =>
      Effect.map(
        decodeAll(
          Schema.Struct({ completed: Schema.Number }),
          sql`with completed as (
            update messages set status = 'complete', content = ${content}, sources = ${JSON.stringify(sources)},
              completed_at = ${at}, outcome = ${reply.outcome}, agent_id = ${reply.agentId} where id = ${id} and status = 'generating' returning conversation_id
          ), touched as (
            update conversations set message_count = message_count + 1, last_activity_at = greatest(last_activity_at, ${at})
            where id in (select conversation_id from completed)
          ), written as (
            insert into message_events ${eventValues(id, events)} on conflict do nothing
          )
          select count(*)::integer as completed from completed`
        ),
        (rows) => (rows[0]?.completed ?? 0) === 1
      )

    /**
     * Stops a generating reply short (`interrupted`, `failed`), keeping what it said out of every list, and
     * writes its last `events` (at least one), in one statement.
     */
    const stopReply = (
      id: MessageId,
      status: "interrupted" | "failed",
      content: string,
      at: Date,
      events: ReadonlyArray<EventRow>
    ) =>
      execute(sql`with stopped as (
          update messages set status = ${status}, content = ${content}, completed_at = ${at}
          where id = ${id} and status = 'generating'
        )
        insert into message_events ${eventValues(id, events)} on conflict do nothing`)

    const insertEvents = (messageId: MessageId, events: ReadonlyArray<EventRow>) =>
      events.length === 0
        ? Effect.void
        : execute(
            sql`insert into message_events ${eventValues(messageId, events)} on conflict do nothing`
          )

    const eventsAfter = (messageId: MessageId, after: number) =>
      decodeAll(EventRow, sql`select seq, data from message_events where message_id = ${messageId} and seq > ${after} order by seq`)

    /**
     * Drops the stream events of up to `limit` replies that ended before `cutoff`, oldest first, and marks
     * them; returns how many. Instances pruning at once skip each other's rows.
     */
    const pruneEvents = (cutoff: Date, at: Date, limit: number) =>
      Effect.map(
        decodeAll(
          Schema.Struct({ id: MessageId }),
          sql`
            with batch as (
              select id from messages
              where completed_at is not null and events_pruned_at is null and completed_at < ${cutoff}
              order by completed_at limit ${limit}
              for update skip locked
            ), gone as (
              delete from message_events where message_id in (select id from batch)
            )
            update messages set events_pruned_at = ${at} where id in (select id from batch) returning id`
        ),
        (rows) => rows.length
      )

    return {
      transaction: transaction(sql),
      insertConversation,
      findConversation,
      conversationById,
      page,
      setLead,
      clearLead,
      touch,
      end,
      addMessages,
      findMessage,
      setFeedback,
      messageStatus,
      finalMessages,
      completeReply,
      stopReply,
      insertEvents,
      eventsAfter,
      pruneEvents
    } as const
  })
}) {}
