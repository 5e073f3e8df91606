/**
 * Leads: a visitor's contact details, left in the widget or sent by an
 * integration. A lead needs an e-mail or a phone; deleting one is idempotent.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, RequiredScope } from "./Auth.js"
import { Deleted, Envelope, ListEnvelope, PageParams, Timestamp } from "./Envelope.js"
import { ApiError, InvalidCursor, InvalidLimit, ParameterMissing, ResourceMissing } from "./Errors.js"
import { AgentId, ConversationId, LeadId } from "./Ids.js"
import { StrictStruct } from "./Payload.js"
import { reference } from "./Reference.js"

/** Free keys; `source` (`widget`, `api`, or the integrator's own) and `page` are the usual ones. */
export const LeadMetadata = Schema.Record({ key: Schema.String.pipe(Schema.maxLength(100)), value: Schema.Unknown }).pipe(
  Schema.filter((m) => Object.keys(m).length <= 50, { message: () => "metadata holds at most 50 keys" })
)

export const Lead = Schema.Struct({
  id: LeadId,
  object: Schema.Literal("lead"),
  agent_id: AgentId,
  email: Schema.NullOr(Schema.String).annotations({ description: "Personal data: cleared when the lead is deleted" }),
  name: Schema.NullOr(Schema.String).annotations({ description: "Personal data: cleared when the lead is deleted" }),
  phone: Schema.NullOr(Schema.String).annotations({ description: "Personal data: cleared when the lead is deleted" }),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description: "Free keys; `source` is `widget` or `api` unless the caller set it, `page` the page it came from"
  }),
  conversation_id: Schema.NullOr(Schema.String).annotations({ description: "The conversation it was captured in (cnv_...)" }),
  created_at: Timestamp
}).annotations({ identifier: "Lead" })
export type Lead = typeof Lead.Type

const Email = Schema.Trim.pipe(
  Schema.maxLength(320, { message: () => "email must be at most 320 characters" }),
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "email must be an e-mail address (name@example.com)" })
)
const Name = Schema.Trim.pipe(Schema.maxLength(200, { message: () => "name must be at most 200 characters" }))
/** Digits with the usual separators and an optional leading `+`; at least 5 digits. */
const Phone = Schema.Trim.pipe(
  Schema.maxLength(40, { message: () => "phone must be at most 40 characters" }),
  Schema.pattern(/^\+?[0-9][0-9 ().-]*$/, { message: () => "phone must be digits, with an optional leading + and spaces, dots, dashes or parentheses" }),
  Schema.filter((s) => s.replace(/[^0-9]/g, "").length >= 5, { message: () => "phone must hold at least 5 digits" })
)

/** What a visitor leaves: an e-mail or a phone (at least one; checked by the program so the error names `email`). */
const contactFields = {
  email: Schema.optional(Schema.NullOr(Email)),
  name: Schema.optional(Schema.NullOr(Name)),
  phone: Schema.optional(Schema.NullOr(Phone)),
  metadata: Schema.optional(LeadMetadata),
  conversation_id: Schema.optional(Schema.NullOr(ConversationId)).annotations({
    description: "The conversation the lead was captured in, if any"
  })
}

export const CreateLead = StrictStruct({ agent_id: AgentId, ...contactFields }).annotations({ identifier: "CreateLead" })
export type CreateLead = typeof CreateLead.Type

/** The widget's form: the agent is in the path. */
export const CaptureLead = StrictStruct(contactFields).annotations({ identifier: "CaptureLead" })
export type CaptureLead = typeof CaptureLead.Type

export const LeadListParams = Schema.Struct({
  ...PageParams.fields,
  agent_id: Schema.optional(Schema.String).annotations({ description: "Leads of this agent" }),
  email: Schema.optional(Schema.String).annotations({ description: "Leads with this e-mail, ignoring case" }),
  conversation_id: Schema.optional(Schema.String).annotations({ description: "Leads captured in this conversation" })
})
export type LeadListParams = typeof LeadListParams.Type

const idPath = HttpApiSchema.param("id", LeadId)


export class LeadsGroup extends HttpApiGroup.make("leads")
  .add(
    HttpApiEndpoint.post("create", "/v1/leads")
      .setPayload(CreateLead)
      .addSuccess(Envelope(Lead), { status: 201 })
      .addError(ApiError(ResourceMissing))
      .addError(ApiError(ParameterMissing))
      .annotate(RequiredScope, "write:leads")
      .annotate(
        OpenApi.Description,
        "Body `agent_id`, `email` and/or `phone` (at least one), optional `name`, `metadata`, " +
          "`conversation_id`; `201`; event `lead.captured`"
      )
      .annotate(OpenApi.Summary, "Record a lead for an agent; event `lead.captured`")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/leads")
      .setUrlParams(LeadListParams)
      .addSuccess(ListEnvelope(Lead))
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:leads")
      .annotate(
        OpenApi.Description,
        "Paginated, newest first; filters `agent_id`, `email` (ignoring case), `conversation_id`"
      )
      .annotate(OpenApi.Summary, "List leads, newest first; filters `agent_id`, `email`, `conversation_id`")
  )
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/leads/${idPath}`
      .addSuccess(Envelope(Lead))
      .addError(ApiError(ResourceMissing))
      .annotate(RequiredScope, "read:leads")
      .annotate(OpenApi.Summary, "Retrieve a lead")
  )
  .add(
    HttpApiEndpoint.del("delete")`/v1/leads/${idPath}`
      .addSuccess(Envelope(Deleted(LeadId, "lead")))
      .addError(ApiError(ResourceMissing))
      .annotate(RequiredScope, "write:leads")
      .annotate(
        OpenApi.Description,
        "Removes the lead and its personal data; `{id, object: \"lead\", deleted: true}`, the same answer when " +
          "deleted again"
      )
      .annotate(OpenApi.Summary, "Delete a lead and its personal data; deleting again answers the same")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, reference("leads"))
  .annotate(OpenApi.Title, "Leads") {}
