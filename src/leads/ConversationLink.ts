/**
 * The conversation a lead was captured in learns its lead: the conversations
 * area implements this port (its `Area.ts` exports the adapter), so the leads area does
 * not import the conversations area, which imports usage and agents.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { ConversationId, LeadId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"

export interface ConversationLinkShape {
  /**
   * Sets `lead_id` of the tenant's conversation `conversationId`, if there is
   * one (an unknown id links nothing); runs in the capture's transaction.
   */
  readonly linkLead: (tenant: Tenant, conversationId: ConversationId, leadId: LeadId) => Effect.Effect<void>
  /** Clears `lead_id` wherever it is `leadId` (the lead was deleted); runs in the deletion's transaction. */
  readonly unlinkLead: (tenant: Tenant, leadId: LeadId) => Effect.Effect<void>
}

export class ConversationLink extends Context.Tag("Leads/ConversationLink")<ConversationLink, ConversationLinkShape>() {}
