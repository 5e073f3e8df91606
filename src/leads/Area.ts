/**
 * The leads area as the composition root uses it: its programs (over the `ConversationLink` port, which the
 * conversations area serves), its API group, and the forms area's `LeadTarget` port it serves.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import { ValidationFailed } from "../../schema/Errors.js"
import { type LeadFromForm, LeadTarget } from "../forms/LeadTarget.js"
import { LeadsHttp } from "./Http.js"
import { Leads } from "./Leads.js"

export const Live = Leads.Default

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = LeadsHttp
export const ApiServices = [Authentication, Leads] as const

/**
 * Lead-target forms capture their leads here. A lead needs an e-mail or a phone: a form that asked for
 * neither gets it as a field error.
 */
export const LeadTargetLive = Layer.effect(
  LeadTarget,
  Effect.map(Leads, (leads) => ({
    captureLeadFromForm: (lead: LeadFromForm) =>
      leads
        .capture(
          lead.tenant,
          lead.agentId,
          {
            email: lead.email,
            name: lead.name,
            metadata: {
              form_id: lead.formId,
              identity_verified: lead.identityVerified,
              ...(lead.page === null ? {} : { page: lead.page }),
              fields: lead.fields
            }
          },
          { channel: "form", agentParam: "form" }
        )
        .pipe(
          Effect.map((captured) => ({ id: captured.id })),
          Effect.catchTag("ParameterMissing", (missing) =>
            Effect.fail(
              new ValidationFailed({
                message: "The submission has errors; see `error.field_errors`",
                field_errors: [{ field: "email", message: missing.message }]
              })
            )
          )
        )
  }))
).pipe(Layer.provide(Live))
