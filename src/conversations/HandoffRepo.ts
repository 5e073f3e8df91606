/**
 * SQL for a conversation's hand-off to people (`Handoff.ts`): its state on the conversation, the stream of events
 * the widget follows, and the wake-up of other instances. The row is locked by the caller's transaction.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { HandoffStatus } from "../../schema/Conversations.js"
import type { ConversationId } from "../../schema/Ids.js"
import { decodeAll, decodeSingle, execute } from "../db/Sql.js"
import { ConversationRow, conversationColumns, EventRow } from "./ConversationsRepo.js"

export class HandoffRepo extends Effect.Service<HandoffRepo>()("Conversations/HandoffRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cCols = sql.literal(conversationColumns)

    /** Starts a hand-off to `ticketPublicId` (`requested`), whatever the conversation had before. */
    const requestHandoff = (id: ConversationId, ticketPublicId: string, at: Date) =>
      decodeSingle(
        ConversationRow,
        sql`update conversations set handoff_status = 'requested', handoff_ticket_public_id = ${ticketPublicId},
          handoff_requested_at = ${at}, handoff_updated_at = ${at}
          where id = ${id} returning ${cCols}`
      )

    /** The conversation's last completed reply was handed off to people (its escalation); in the caller's transaction. */
    const markHandedOff = (id: ConversationId) =>
      execute(sql`update messages set outcome = 'handed_off' where id = (
          select id from messages where conversation_id = ${id} and role = 'assistant' and status = 'complete'
          order by seq desc limit 1
        )`)

    const setHandoffStatus = (id: ConversationId, status: HandoffStatus, at: Date) =>
      decodeSingle(
        ConversationRow,
        sql`update conversations set handoff_status = ${status}, handoff_updated_at = ${at}
          where id = ${id} returning ${cCols}`
      )

    /** The conversation's next stream event (its number one more than the last), in one statement; its number. */
    const appendEvent = (id: ConversationId, data: string, at: Date) =>
      Effect.map(
        decodeSingle(
          Schema.Struct({ seq: Schema.Int }),
          sql`with numbered as (
            update conversations set event_seq = event_seq + 1 where id = ${id} returning event_seq
          )
          insert into conversation_events (conversation_id, seq, data, created_at)
          select ${id}, event_seq, ${data}, ${at} from numbered returning seq`
        ),
        (row) => row.seq
      )

    const conversationEventsAfter = (id: ConversationId, after: number, limit: number) =>
      decodeAll(
        EventRow,
        sql`select seq, data from conversation_events where conversation_id = ${id} and seq > ${after}
          order by seq limit ${limit}`
      )

    /**
     * Drops up to `limit` conversation events written before `cutoff`, oldest first; returns how many.
     * Instances pruning at once skip each other's rows.
     */
    const pruneConversationEvents = (cutoff: Date, limit: number) =>
      Effect.map(
        decodeAll(
          Schema.Struct({ seq: Schema.Int }),
          sql`
            delete from conversation_events where (conversation_id, seq) in (
              select conversation_id, seq from conversation_events
              where created_at < ${cutoff}
              order by created_at limit ${limit}
              for update skip locked
            ) returning seq`
        ),
        (rows) => rows.length
      )

    /** A widget follows the conversation's events at `at`: the visitor is present. */
    const markSeen = (id: ConversationId, at: Date) =>
      execute(sql`update conversations set last_seen_at = greatest(coalesce(last_seen_at, ${at}), ${at}) where id = ${id}`)

    /** Wakes the listeners of `channel` on every instance, when the transaction commits (PostgreSQL). */
    const notify = (channel: string, payload: string) => execute(sql`select pg_notify(${channel}, ${payload})`)

    return {
      requestHandoff, markHandedOff, setHandoffStatus, appendEvent, conversationEventsAfter, pruneConversationEvents,
      markSeen, notify
    } as const
  })
}) {}
