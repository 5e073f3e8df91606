/**
 * Agents: the assistants a workspace configures. Slugs are derived from the name
 * and unique per workspace and environment; deletion is soft.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, RequiredScope } from "./Auth.js"
import { Deleted, Envelope, ListEnvelope, PageParams, Timestamp } from "./Envelope.js"
import { ApiError, InvalidCursor, InvalidLimit, ResourceMissing } from "./Errors.js"
import { AgentId } from "./Ids.js"
import { StrictStruct } from "./Payload.js"

export const AgentType = Schema.Literal("support", "training")
export type AgentType = typeof AgentType.Type

const Name = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(200, { message: () => "name must be at most 200 characters" })
)
const Instructions = Schema.String.pipe(Schema.maxLength(20_000))
const WelcomeMessage = Schema.String.pipe(Schema.maxLength(2_000))

export const Agent = Schema.Struct({
  id: AgentId,
  object: Schema.Literal("agent"),
  type: AgentType,
  name: Schema.String,
  slug: Schema.String.annotations({ description: "Derived from the name; unique in the workspace and environment" }),
  instructions: Schema.NullOr(Schema.String),
  welcome_message: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Agent" })
export type Agent = typeof Agent.Type

export const CreateAgent = StrictStruct({
  type: AgentType,
  name: Name,
  instructions: Schema.optional(Instructions),
  welcome_message: Schema.optional(WelcomeMessage)
}).annotations({ identifier: "CreateAgent" })
export type CreateAgent = typeof CreateAgent.Type

export const UpdateAgent = StrictStruct({
  name: Schema.optional(Name),
  instructions: Schema.optional(Schema.NullOr(Instructions)),
  welcome_message: Schema.optional(Schema.NullOr(WelcomeMessage))
}).annotations({ identifier: "UpdateAgent" })
export type UpdateAgent = typeof UpdateAgent.Type

const idPath = HttpApiSchema.param("id", AgentId)

export class AgentsGroup extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.post("create", "/v1/agents")
      .setPayload(CreateAgent)
      .addSuccess(Envelope(Agent), { status: 201 })
      .annotate(RequiredScope, "write:agents")
      .annotate(OpenApi.Summary, "Create an agent")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/agents")
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(Agent))
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:agents")
      .annotate(OpenApi.Summary, "List agents, newest first")
  )
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/agents/${idPath}`
      .addSuccess(Envelope(Agent))
      .addError(ApiError(ResourceMissing))
      .annotate(RequiredScope, "read:agents")
      .annotate(OpenApi.Summary, "Retrieve an agent")
  )
  .add(
    HttpApiEndpoint.patch("update")`/v1/agents/${idPath}`
      .setPayload(UpdateAgent)
      .addSuccess(Envelope(Agent))
      .addError(ApiError(ResourceMissing))
      .annotate(RequiredScope, "write:agents")
      .annotate(OpenApi.Summary, "Update an agent; the slug follows the name")
  )
  .add(
    HttpApiEndpoint.del("delete")`/v1/agents/${idPath}`
      .addSuccess(Envelope(Deleted(AgentId, "agent")))
      .addError(ApiError(ResourceMissing))
      .annotate(RequiredScope, "write:agents")
      .annotate(OpenApi.Summary, "Delete an agent (soft delete)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Agents") {}
