/**
 * The widget surface under `/widget/v1/agents/{agent_id}/...`: what a page
 * embedding an agent's widget calls with a `widget_pk_` key. Secret keys are
 * refused here; the edge answers CORS for the agent's `allowed_origins`.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication, RequiredScope, WidgetScope } from "./Auth.js"
import { Envelope } from "./Envelope.js"
import { ApiError, KeyScopeMismatch, OriginNotAllowed, ParameterMissing, ResourceMissing } from "./Errors.js"
import { AgentId } from "./Ids.js"
import { CaptureLead, Lead } from "./Leads.js"

const agentPath = HttpApiSchema.param("agent_id", AgentId)

export class WidgetGroup extends HttpApiGroup.make("widget")
  .add(
    HttpApiEndpoint.post("captureLead")`/widget/v1/agents/${agentPath}/leads`
      .setPayload(CaptureLead)
      .addSuccess(Envelope(Lead), { status: 201 })
      .addError(ApiError(ResourceMissing))
      .addError(ApiError(ParameterMissing))
      .addError(ApiError(KeyScopeMismatch))
      .addError(ApiError(OriginNotAllowed))
      .annotate(RequiredScope, "widget:chat")
      .annotate(WidgetScope, "widget:chat")
      .annotate(OpenApi.Summary, "The visitor leaves contact details; event `lead.captured`")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Widget") {}
