/**
 * Where a submission of a form whose target is `lead` goes. The forms area
 * builds the lead's details; the leads area captures it (`leads/Area.ts` serves
 * this port from `Leads`, so the forms area does not import the leads area).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { AgentId } from "../../schema/Ids.js"
import type { FormId } from "../../schema/Forms.js"
import type { LimitReached, ResourceMissing, ServiceUnavailable, ValidationFailed } from "../../schema/Errors.js"
import type { Tenant } from "../../schema/Tenant.js"

/** The lead a submission describes, checked and with any verified identity applied. */
export interface LeadFromForm {
  readonly tenant: Tenant
  readonly formId: FormId
  readonly agentId: AgentId
  readonly email: string | null
  readonly name: string | null
  /** Other field values by field id (hidden fields included). */
  readonly fields: Readonly<Record<string, string | boolean>>
  /** The page's origin, when the browser sent one (`metadata.page` of the lead). */
  readonly page: string | null
  readonly identityVerified: boolean
}

export interface LeadTargetShape {
  /** Captures the lead (and its `lead.captured` event); answers the new lead's id. */
  readonly captureLeadFromForm: (lead: LeadFromForm) => Effect.Effect<
    { readonly id: string },
    LimitReached | ServiceUnavailable | ResourceMissing | ValidationFailed
  >
}

export class LeadTarget extends Context.Tag("Forms/LeadTarget")<LeadTarget, LeadTargetShape>() {}
