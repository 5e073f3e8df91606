/**
 * A ticket escalated from a conversation carries the conversation's live hand-off: a member's message on it is
 * the conversation's too, and resolving it gives the chat back to the agent. The conversations area implements
 * this port (its `Area.ts` exports the adapter), so the tickets area does not import the conversations area,
 * which imports it (a visitor's message during a hand-off is added to the ticket's thread).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { ConversationId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import type { TicketMessage } from "../../schema/Tickets.js"

export interface HandoffTicket {
  readonly conversationId: ConversationId
  readonly ticketPublicId: string
  /** Where a member's reply is e-mailed when no widget is open. */
  readonly visitorEmail: string | null
}

export interface ConversationHandoffShape {
  /**
   * A member wrote `message` on the ticket: if the conversation is in hand-off to this ticket, it is kept there as
   * a `member` message (the hand-off becomes `active`) and sent to the widget; runs in the message's transaction.
   */
  readonly memberReplied: (tenant: Tenant, ticket: HandoffTicket, message: TicketMessage) => Effect.Effect<void>
  /** The ticket was resolved: its conversation's hand-off, if open on it, is closed; in the change's transaction. */
  readonly ticketClosed: (tenant: Tenant, ticket: HandoffTicket) => Effect.Effect<void>
}

export class ConversationHandoff extends Context.Tag("Tickets/ConversationHandoff")<
  ConversationHandoff,
  ConversationHandoffShape
>() {}
