/**
 * Agents: the assistants a workspace configures. Slugs are derived from the name
 * and unique per workspace and environment; deletion is soft.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { Authentication, RequiredScope } from "./Auth.js"
import { Deleted, Envelope, ListEnvelope, PageParams, Timestamp } from "./Envelope.js"
import { ApiError, InvalidCursor, InvalidLimit, ResourceMissing } from "./Errors.js"
import { AgentId } from "./Ids.js"
import { AgentLanguage, languageTags, textSearchConfig } from "./Languages.js"
import { StrictStruct } from "./Payload.js"
import { reference } from "./Reference.js"

export const AgentType = Schema.Literal("support", "training")
export type AgentType = typeof AgentType.Type

const Name = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(200, { message: () => "name must be at most 200 characters" })
)
const Instructions = Schema.String.pipe(Schema.maxLength(20_000))
const WelcomeMessage = Schema.String.pipe(Schema.maxLength(2_000))

/** Origins an agent's widget may be embedded on, at most this many. */
export const MAX_ALLOWED_ORIGINS = 20

/**
 * A web origin `scheme://host[:port]`, decoded to its normal form (lower-case
 * host, no default port, no trailing slash), so `HTTPS://Shop.Example.com:443/`
 * is stored and matched as `https://shop.example.com`, the way a browser sends
 * `Origin`. No path, query, fragment, credentials or wildcard.
 */
export const WebOrigin = Schema.transformOrFail(Schema.String.pipe(Schema.maxLength(300)), Schema.String, {
  strict: true,
  decode: (raw, _, ast) => {
    const refuse = (why: string) =>
      ParseResult.fail(new ParseResult.Type(ast, raw, `'${raw.slice(0, 80)}' is not an origin (scheme://host[:port]): ${why}`))
    const text = raw.trim()
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return refuse("not a URL")
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") return refuse("the scheme must be http or https")
    if (url.username !== "" || url.password !== "") return refuse("no user or password")
    if (url.pathname !== "/" || url.search !== "" || url.hash !== "" || /[?#]/.test(text)) {
      return refuse("no path, query or fragment")
    }
    if (!/^[a-z]+:\/\/[^/]+\/?$/i.test(text)) return refuse("no path")
    if (url.hostname.includes("*")) return refuse("wildcards are not supported")
    return ParseResult.succeed(url.origin)
  },
  encode: ParseResult.succeed
}).annotations({
  identifier: "WebOrigin",
  description: "`scheme://host[:port]`, e.g. `https://shop.example.com`; stored in normal form",
  jsonSchema: { type: "string", maxLength: 300, examples: ["https://shop.example.com"] }
})

const AllowedOrigins = Schema.Array(WebOrigin).pipe(
  Schema.maxItems(MAX_ALLOWED_ORIGINS, {
    message: () => `allowed_origins holds at most ${MAX_ALLOWED_ORIGINS} origins`
  })
).annotations({
  description:
    "Origins whose pages may call this agent's widget surface (CORS); replaces the whole list. Duplicates are dropped."
})

export const RefreshSchedule = Schema.Literal("off", "daily", "weekly")
export type RefreshSchedule = typeof RefreshSchedule.Type

/** Days a page answering 404 or 410 keeps its knowledge, at most. */
export const MAX_GONE_GRACE_DAYS = 365
/** Days a gone page keeps its knowledge unless the agent says otherwise. */
export const DEFAULT_GONE_GRACE_DAYS = 7

/** How an agent keeps what it learnt from the web up to date. */
export const KnowledgeRefresh = Schema.Struct({
  schedule: RefreshSchedule.annotations({
    description: "`daily` or `weekly`: every indexed `url` source of the agent is refreshed that often; `off`: on demand only"
  }),
  gone_grace_days: Schema.Int.annotations({
    description: "Days a page that answers 404 or 410 keeps its knowledge before it is removed (0: at its next refresh)"
  })
}).annotations({ identifier: "KnowledgeRefresh" })
export type KnowledgeRefresh = typeof KnowledgeRefresh.Type

const KnowledgeRefreshInput = StrictStruct({
  schedule: Schema.optional(RefreshSchedule),
  gone_grace_days: Schema.optional(
    Schema.Int.pipe(
      Schema.between(0, MAX_GONE_GRACE_DAYS, {
        message: () => `knowledge_refresh.gone_grace_days must be an integer from 0 to ${MAX_GONE_GRACE_DAYS}`
      })
    )
  )
}).annotations({
  identifier: "KnowledgeRefreshInput",
  description: "Either field or both; the other keeps its value (defaults: `off`, 7 days)"
})

export const LauncherPosition = Schema.Literal("bottom-right", "bottom-left")
export type LauncherPosition = typeof LauncherPosition.Type

export const LeadCapture = Schema.Literal("off", "before_first_message", "on_escalation")
export type LeadCapture = typeof LeadCapture.Type

/** How the agent's chat widget looks and behaves; the widget reads it from its config. */
export const WidgetSettings = Schema.Struct({
  display_name: Schema.NullOr(Schema.String).annotations({
    description: "The name the widget shows; null: the agent's `name`"
  }),
  color: Schema.String.annotations({ description: "The widget's colour, `#rrggbb` in lower case (default `#2563eb`)" }),
  launcher_position: LauncherPosition.annotations({
    description: "Where the launcher button sits: `bottom-right` (default) or `bottom-left`"
  }),
  lead_capture: LeadCapture.annotations({
    description:
      "When the widget asks for the visitor's contact details: `off` (default), `before_first_message`, `on_escalation`"
  }),
  handoff: Schema.Boolean.annotations({
    description: "Whether people of the workspace answer live in the widget after an escalation (default false)"
  })
}).annotations({ identifier: "WidgetSettings" })
export type WidgetSettings = typeof WidgetSettings.Type

/** What an agent's widget settings are until it is given others. */
export const DEFAULT_WIDGET: WidgetSettings = {
  display_name: null,
  color: "#2563eb",
  launcher_position: "bottom-right",
  lead_capture: "off",
  handoff: false
}

/** `#rrggbb`, stored in lower case. */
const HexColor = Schema.transform(
  Schema.String.pipe(
    Schema.pattern(/^#[0-9a-fA-F]{6}$/, { message: () => "widget.color must be a colour written #rrggbb" })
  ),
  Schema.String,
  { strict: true, decode: (s) => s.toLowerCase(), encode: (s) => s }
).annotations({ jsonSchema: { type: "string", pattern: "^#[0-9a-fA-F]{6}$", examples: ["#2563eb"] } })

const DisplayName = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "widget.display_name must not be empty (null: the agent's name)" }),
  Schema.maxLength(200, { message: () => "widget.display_name must be at most 200 characters" })
)

const WidgetSettingsInput = StrictStruct({
  display_name: Schema.optional(Schema.NullOr(DisplayName)),
  color: Schema.optional(HexColor),
  launcher_position: Schema.optional(LauncherPosition),
  lead_capture: Schema.optional(LeadCapture),
  handoff: Schema.optional(Schema.Boolean)
}).annotations({
  identifier: "WidgetSettingsInput",
  description: "Any of the fields; the others keep their values (defaults: agent's name, `#2563eb`, `bottom-right`, `off`, false)"
})

export const Agent = Schema.Struct({
  id: AgentId,
  object: Schema.Literal("agent"),
  type: AgentType,
  name: Schema.String,
  slug: Schema.String.annotations({ description: "Derived from the name; unique in the workspace and environment" }),
  instructions: Schema.NullOr(Schema.String),
  welcome_message: Schema.NullOr(Schema.String),
  allowed_origins: Schema.Array(Schema.String).annotations({
    description: "Origins allowed to call the widget surface for this agent (CORS), in normal form"
  }),
  knowledge_refresh: KnowledgeRefresh,
  widget: WidgetSettings,
  language: AgentLanguage.annotations({
    description:
      "The language of the agent's knowledge and visitors: `auto` (default; each source's and each question's own " +
      "language, as detected) or a language tag, which a text too short to tell is taken to be in. The supported " +
      "tags are listed in the Agents group's reference (Languages)"
  }),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Agent" })
export type Agent = typeof Agent.Type

export const CreateAgent = StrictStruct({
  type: AgentType,
  name: Name,
  instructions: Schema.optional(Instructions),
  welcome_message: Schema.optional(WelcomeMessage),
  allowed_origins: Schema.optional(AllowedOrigins),
  knowledge_refresh: Schema.optional(KnowledgeRefreshInput),
  widget: Schema.optional(WidgetSettingsInput),
  language: Schema.optional(AgentLanguage)
}).annotations({ identifier: "CreateAgent" })
export type CreateAgent = typeof CreateAgent.Type

export const UpdateAgent = StrictStruct({
  name: Schema.optional(Name),
  instructions: Schema.optional(Schema.NullOr(Instructions)),
  welcome_message: Schema.optional(Schema.NullOr(WelcomeMessage)),
  allowed_origins: Schema.optional(AllowedOrigins),
  knowledge_refresh: Schema.optional(KnowledgeRefreshInput),
  widget: Schema.optional(WidgetSettingsInput),
  language: Schema.optional(AgentLanguage)
}).annotations({ identifier: "UpdateAgent" })
export type UpdateAgent = typeof UpdateAgent.Type

const idPath = HttpApiSchema.param("id", AgentId)


export class AgentsGroup extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.post("create", "/v1/agents")
      .setPayload(CreateAgent)
      .addSuccess(Envelope(Agent), { status: 201 })
      .annotate(RequiredScope, "write:agents")
      .annotate(
        OpenApi.Description,
        "Body `type` (`support` or `training`), `name`, optional `instructions`, `welcome_message`, " +
          "`allowed_origins`, `knowledge_refresh`, `widget`; `201`; event `agent.created`"
      )
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
      .annotate(
        OpenApi.Description,
        "`name`, `instructions`, `welcome_message` (null clears), `allowed_origins` (replaces the list), " +
          "`knowledge_refresh` and `widget` (the fields given replace theirs, the others are kept); " +
          "event `agent.updated` with `changes` = `{field: {from, to}}`; no event when nothing changed"
      )
      .annotate(OpenApi.Summary, "Update an agent; the slug follows the name")
  )
  .add(
    HttpApiEndpoint.del("delete")`/v1/agents/${idPath}`
      .addSuccess(Envelope(Deleted(AgentId, "agent")))
      .addError(ApiError(ResourceMissing))
      .annotate(RequiredScope, "write:agents")
      .annotate(OpenApi.Description, "Soft delete; event `agent.deleted` with `agent_id`")
      .annotate(OpenApi.Summary, "Delete an agent (soft delete)")
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    reference("agents", {
      stemmedLanguages: languageTags.filter((tag) => textSearchConfig(tag) !== "simple").map((tag) => `\`${tag}\``).join(", "),
      otherLanguages: languageTags.filter((tag) => textSearchConfig(tag) === "simple").map((tag) => `\`${tag}\``).join(", ")
    })
  )
  .annotate(OpenApi.Title, "Agents") {}
