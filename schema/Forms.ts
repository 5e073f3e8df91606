/**
 * Forms: managed with secret keys (`/v1/forms`), read by the embeddable
 * component as a public config (`/v1/forms/{form_id}/config` with a forms key
 * in `Service-Api-Key`) and submitted to `/api/forms/{form_id}/submit`, where a
 * submission becomes a ticket (or a lead). Private settings (allowed origins,
 * identity mode, rate limit, honeypot) never appear in the public config.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, Environment, RequiredScope } from "./Auth.js"
import { Deleted, Envelope, ListEnvelope, PageParams, Timestamp } from "./Envelope.js"
import { FormEndpoint, ShowsSecret } from "./Endpoint.js"
import {
  ApiError,
  IdentityInvalid,
  IdentityRequired,
  InvalidApiKey,
  InvalidCursor,
  InvalidLimit,
  KeyScopeMismatch,
  LimitReached,
  MissingAuthorization,
  OriginNotAllowed,
  ParameterInvalid,
  RateLimited,
  ResourceMissing,
  ServiceUnavailable,
  ValidationFailed
} from "./Errors.js"
import { AgentId } from "./Ids.js"
import { StrictStruct } from "./Payload.js"

export const FormId = Schema.String.pipe(
  Schema.pattern(/^frm_[A-Za-z0-9]{8,64}$/, { message: () => "Expected a form id (frm_...)" }),
  Schema.brand("FormId")
)
export type FormId = typeof FormId.Type

/** Most fields one form holds, options one select holds, and origins one form allows. */
export const maxFields = 50
export const maxOptions = 200
export const maxOrigins = 50
/** Longest `pattern` accepted, and longest value a pattern is ever run on. */
export const maxPatternLength = 200
export const maxPatternInput = 2_000
/** Longest value any field accepts (a field's own `max_length` may only lower it). */
export const maxValueLength = 20_000

/** CSS custom properties of the `<service-form>` component that branding may set (SPEC.md section 4). */
export const BrandingProperties = [
  "--service-accent",
  "--service-text",
  "--service-button-bg",
  "--service-button-text",
  "--service-border",
  "--service-radius",
  "--service-max-width",
  "--service-font",
  "--service-bg",
  "--service-padding",
  "--service-shadow",
  "--service-label",
  "--service-help"
] as const

const Text = (max: number) =>
  Schema.Trim.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  )

/** Text in Spanish and English; at least one of the two. */
const Localized = (max: number) =>
  StrictStruct({ es: Schema.optional(Text(max)), en: Schema.optional(Text(max)) }).pipe(
    Schema.filter((t) => t.es !== undefined || t.en !== undefined, {
      message: () => "give the text in `es`, `en` or both"
    })
  )
const LocalizedOut = Schema.Struct({ es: Schema.optional(Schema.String), en: Schema.optional(Schema.String) }).annotations({
  identifier: "LocalizedText"
})
export type LocalizedText = typeof LocalizedOut.Type

export const FieldType = Schema.Literal("text", "email", "textarea", "select", "checkbox", "hidden")
export type FieldType = typeof FieldType.Type

const FieldKey = Schema.String.pipe(
  Schema.pattern(/^[a-z][a-z0-9_]{0,63}$/, {
    message: () => "a field id is 1 to 64 lower-case letters, digits or `_`, starting with a letter"
  })
)

const FieldOptionIn = StrictStruct({
  value: Text(200),
  label: Localized(200)
})

export const FormFieldInput = StrictStruct({
  id: FieldKey,
  type: FieldType,
  label: Localized(200),
  help: Schema.optional(Localized(500)),
  placeholder: Schema.optional(Localized(200)),
  required: Schema.optional(Schema.Boolean).annotations({ description: "Default: false" }),
  min_length: Schema.optional(Schema.Int.pipe(Schema.between(0, maxValueLength))),
  max_length: Schema.optional(Schema.Int.pipe(Schema.between(1, maxValueLength))),
  pattern: Schema.optional(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(maxPatternLength)).annotations({
      description: `A JavaScript regular expression (Unicode sets, flag \`v\`) the whole value must match; at most ${maxPatternLength} characters; checked at write time`
    })
  ),
  options: Schema.optional(
    Schema.Array(FieldOptionIn).pipe(Schema.minItems(1), Schema.maxItems(maxOptions))
  ).annotations({ description: "`select` only: the values offered" }),
  default_value: Schema.optional(Schema.Union(Schema.String.pipe(Schema.maxLength(maxValueLength)), Schema.Boolean)).annotations({
    description: "`hidden` fields: the value submitted when the page gives none"
  })
}).annotations({ identifier: "FormFieldInput" })
export type FormFieldInput = typeof FormFieldInput.Type

export const FormField = Schema.Struct({
  id: Schema.String,
  type: FieldType,
  label: LocalizedOut,
  help: Schema.NullOr(LocalizedOut),
  placeholder: Schema.NullOr(LocalizedOut),
  required: Schema.Boolean,
  min_length: Schema.NullOr(Schema.Int),
  max_length: Schema.NullOr(Schema.Int),
  pattern: Schema.NullOr(Schema.String),
  options: Schema.NullOr(Schema.Array(Schema.Struct({ value: Schema.String, label: LocalizedOut }))),
  default_value: Schema.NullOr(Schema.Union(Schema.String, Schema.Boolean))
}).annotations({ identifier: "FormField" })
export type FormField = typeof FormField.Type

/** A CSS value of safe characters only: no `;`, braces, angle brackets, backslashes, `url(` or `expression(`. */
const BrandingValue = Schema.String.pipe(
  Schema.maxLength(200),
  Schema.pattern(/^[A-Za-z0-9#%.,()\s'"/+*-]{1,200}$/, {
    message: () => "a branding value may hold letters, digits, spaces and # % . , ( ) ' \" / + * - only"
  }),
  Schema.filter((v) => !/(url|expression|image-set|var)\s*\(/i.test(v), {
    message: () => "url(), image-set(), var() and expression() are not allowed in branding values"
  })
)
/** One optional value per CSS property; any other key is refused by name (`branding.--service-colour`). */
export const Branding = StrictStruct(
  Object.fromEntries(BrandingProperties.map((p) => [p, Schema.optional(BrandingValue)])) as {
    [K in (typeof BrandingProperties)[number]]: Schema.optional<typeof BrandingValue>
  }
).annotations({
  identifier: "FormBranding",
  description: "Values for the component's CSS custom properties; page CSS still wins"
})
const BrandingOut = Schema.Record({ key: Schema.String, value: Schema.String })

/** `fluid` (same as `full` or `100%`), a number of pixels, or a CSS length. */
export const Width = Schema.Union(
  Schema.Int.pipe(Schema.between(1, 10_000)),
  Schema.String.pipe(
    Schema.pattern(/^(fluid|full|100%|[0-9]{1,5}(\.[0-9]{1,3})?(px|rem|em|%|vw|ch))$/, {
      message: () => "width is `fluid`, `full`, `100%`, a number of pixels or a CSS length such as `480px` or `30rem`"
    })
  )
)
export const Appearance = Schema.Literal("card", "bare")

export const IdentityMode = Schema.Literal("none", "optional", "required")
export type IdentityMode = typeof IdentityMode.Type

export const TargetInput = Schema.Union(
  StrictStruct({ type: Schema.Literal("ticket"), agent_id: AgentId }),
  StrictStruct({ type: Schema.Literal("lead"), agent_id: AgentId.annotations({ description: "The agent the captured leads belong to" }) })
).annotations({ identifier: "FormTargetInput" })
export type TargetInput = typeof TargetInput.Type

export const Target = Schema.Struct({
  type: Schema.Literal("ticket", "lead"),
  agent_id: Schema.NullOr(AgentId)
}).annotations({ identifier: "FormTarget" })
export type Target = typeof Target.Type

const Origin = Schema.String.pipe(
  Schema.maxLength(300),
  Schema.pattern(/^https?:\/\/[a-z0-9.-]+(:[0-9]{1,5})?\/?$/i, {
    message: () => "an origin is a scheme, host and optional port, such as https://www.example.com"
  })
)

export const RateLimitSetting = StrictStruct({
  max: Schema.Int.pipe(Schema.between(1, 10_000)).annotations({ description: "Submissions per IP address and window" }),
  window_seconds: Schema.Int.pipe(Schema.between(1, 86_400))
}).annotations({ identifier: "FormRateLimit" })

export const SettingsInput = StrictStruct({
  allowed_origins: Schema.optional(Schema.Array(Origin).pipe(Schema.maxItems(maxOrigins))).annotations({
    description: "Origins whose pages may load and submit the form; empty (the default): any origin"
  }),
  identity_mode: Schema.optional(IdentityMode).annotations({
    description: "`none` (default), `optional` or `required`; plans below Pro always act as `none`"
  }),
  rate_limit: Schema.optional(RateLimitSetting).annotations({ description: "Default: 10 submissions per IP per 600 s" }),
  honeypot_field: Schema.optional(Schema.NullOr(FieldKey)).annotations({
    description: "A field name real people leave empty; a submission that fills it is answered 204 and dropped"
  })
}).annotations({ identifier: "FormSettingsInput" })
export type SettingsInput = typeof SettingsInput.Type

export const Settings = Schema.Struct({
  allowed_origins: Schema.Array(Schema.String).annotations({
    description: "Origins whose pages may submit (any, when empty); a request without `Origin` passes"
  }),
  identity_mode: IdentityMode.annotations({ description: "Applied as `none` on plans below Pro" }),
  rate_limit: Schema.Struct({ max: Schema.Int, window_seconds: Schema.Int }).annotations({
    description: "Submissions per IP address and form per window (a fixed window, on the service clock)"
  }),
  honeypot_field: Schema.NullOr(Schema.String).annotations({
    description: "A field bots fill: a submission with it filled is answered `204` and dropped"
  })
}).annotations({ identifier: "FormSettings" })
export type Settings = typeof Settings.Type

const Fields = Schema.Array(FormFieldInput).pipe(Schema.minItems(1), Schema.maxItems(maxFields))

export const CreateForm = StrictStruct({
  title: Localized(200),
  fields: Fields,
  submit_label: Schema.optional(Localized(100)),
  success_message: Schema.optional(Localized(1000)),
  branding: Schema.optional(Branding),
  width: Schema.optional(Width).annotations({ description: "Default: `fluid`" }),
  appearance: Schema.optional(Appearance).annotations({ description: "Default: `card`" }),
  target: TargetInput,
  settings: Schema.optional(SettingsInput)
}).annotations({ identifier: "CreateForm" })
export type CreateForm = typeof CreateForm.Type

export const UpdateForm = StrictStruct({
  title: Schema.optional(Localized(200)),
  fields: Schema.optional(Fields).annotations({ description: "Replaces the whole list" }),
  submit_label: Schema.optional(Schema.NullOr(Localized(100))),
  success_message: Schema.optional(Schema.NullOr(Localized(1000))),
  branding: Schema.optional(Branding).annotations({ description: "Replaces the whole map" }),
  width: Schema.optional(Width),
  appearance: Schema.optional(Appearance),
  target: Schema.optional(TargetInput),
  settings: Schema.optional(SettingsInput).annotations({ description: "Each given setting replaces its value" })
}).annotations({ identifier: "UpdateForm" })
export type UpdateForm = typeof UpdateForm.Type

export const Form = Schema.Struct({
  id: FormId,
  object: Schema.Literal("form"),
  title: LocalizedOut,
  fields: Schema.Array(FormField),
  submit_label: Schema.NullOr(LocalizedOut),
  success_message: Schema.NullOr(LocalizedOut),
  branding: BrandingOut,
  width: Schema.Union(Schema.Int, Schema.String),
  appearance: Appearance,
  target: Target,
  settings: Settings,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Form" })
export type Form = typeof Form.Type

/** What the component loads: everything but the target and the private settings. */
export const FormConfig = Schema.Struct({
  id: FormId,
  object: Schema.Literal("form_config"),
  livemode: Schema.Boolean,
  title: LocalizedOut,
  fields: Schema.Array(FormField),
  submit_label: Schema.NullOr(LocalizedOut),
  success_message: Schema.NullOr(LocalizedOut),
  branding: BrandingOut,
  width: Schema.Union(Schema.Int, Schema.String),
  appearance: Appearance
}).annotations({ identifier: "FormConfig" })
export type FormConfig = typeof FormConfig.Type

/** Returned once by rotation: the workspace's identity secret for this environment. */
export const IdentitySecret = Schema.Struct({
  object: Schema.Literal("identity_secret"),
  environment: Environment,
  secret: Schema.String.annotations({ description: "idsec_...; shown only now. Sign HS256 identity tokens with it" }),
  rotated_at: Timestamp
}).annotations({ identifier: "IdentitySecret" })
export type IdentitySecret = typeof IdentitySecret.Type

/**
 * The submit body. Declared loosely here on purpose: its checks run in the
 * order of the submit pipeline (key, form, origin, rate limit, honeypot,
 * identity, validation), so a bad body is a `validation_failed` only after the
 * earlier checks passed. The document still shows its shape.
 */
export const SubmitBody = Schema.Unknown.annotations({
  identifier: "FormSubmission",
  jsonSchema: {
    type: "object",
    required: ["fields"],
    additionalProperties: false,
    properties: {
      fields: {
        type: "object",
        description: "Field id to value: a string, or a boolean for checkboxes",
        additionalProperties: { anyOf: [{ type: "string" }, { type: "boolean" }] }
      },
      identity_token: { type: "string", description: "JWT signed HS256 with the workspace's identity secret" }
    }
  }
})

/** The submit body as the validation step decodes it. */
export const Submission = Schema.Struct({
  fields: Schema.Record({
    key: Schema.String.pipe(Schema.maxLength(100)),
    value: Schema.Union(Schema.String, Schema.Boolean, Schema.Null)
  }),
  identity_token: Schema.optional(Schema.Unknown)
}).annotations({ parseOptions: { onExcessProperty: "error" } })
export type Submission = typeof Submission.Type

export const SubmitResult = Schema.Struct({
  object: Schema.Literal("form_submission"),
  form_id: FormId,
  ticket: Schema.optional(Schema.Struct({ public_id: Schema.String })).annotations({
    description: "Forms whose target is `ticket`"
  }),
  lead: Schema.optional(Schema.Struct({ id: Schema.String })).annotations({ description: "Forms whose target is `lead`" })
}).annotations({ identifier: "FormSubmissionResult" })
export type SubmitResult = typeof SubmitResult.Type

/** The forms public key, as the two form endpoints read it. */
export const FormsKeyHeaders = Schema.Struct({
  "service-api-key": Schema.optional(
    Schema.String.annotations({ description: "Forms public key: `pk_live_...` or `pk_test_...`" })
  ),
  origin: Schema.optional(Schema.String),
  "if-none-match": Schema.optional(Schema.String)
})

const idPath = HttpApiSchema.param("id", FormId)
const formIdPath = HttpApiSchema.param("form_id", FormId)
const missing = ApiError(ResourceMissing)

/** The reference of this group, in Markdown: its tag's description in the OpenAPI document and on `/docs`. */
const formsReference = [
  "A form is a definition (fields, texts, branding) that the embeddable `<service-form>` component loads and",
  "submits; each submission becomes a ticket (origin `form`) or a lead. Management uses secret keys; the two",
  "endpoints the page calls use the forms public key (`pk_test_…` / `pk_live_…`) in the `Service-Api-Key` header.",
  "A site shows a form with the `<service-form>` component (the Forms (public) group).",
  "",
  "**A form** (`frm_…`, `object: \"form\"`): `title`, `submit_label`, `success_message` (texts as `{\"es\": …, \"en\": …}`,",
  "at least one language), `fields`, `branding`, `width` (`fluid` — the default —, `full`, `100%`, a number of",
  "pixels or a CSS length such as `30rem`), `appearance` (`card` — the default — or `bare`), `target`",
  "(`{\"type\": \"ticket\", \"agent_id\": \"agt_…\"}` or `{\"type\": \"lead\", \"agent_id\": \"agt_…\"}`: leads belong to an agent), `settings`",
  "(private: `allowed_origins`, `identity_mode` `none`|`optional`|`required`, `rate_limit`",
  "`{max, window_seconds}` — default 10 per 600 s per IP address —, `honeypot_field`), `created_at`, `updated_at`.",
  "",
  "**A field**: `id` (lower-case letters, digits and `_`, unique in the form), `type` (`text`, `email`,",
  "`textarea`, `select`, `checkbox`, `hidden`), `label`, `help`, `placeholder` (texts in `es`/`en`),",
  "`required`, and by type: `min_length`, `max_length` and `pattern` (text-like types), `options`",
  "(`[{value, label}]`, selects only), `default_value` (hidden fields only: sent when the page gives none).",
  "A form holds 1 to 50 fields. Everything is checked when the form is written, and a refusal names the",
  "parameter (`fields[3].pattern`): a `pattern` is a JavaScript regular expression of at most 200 characters,",
  "compiled with the `v` flag, that the whole value must match; nested quantifiers (`(a+)+`, `(a|aa)*`) and",
  "back-references are refused, and at submit a pattern never runs on a value over 2,000 characters. `branding`",
  "keys are the component's CSS properties (`--service-accent`, `--service-text`, `--service-button-bg`,",
  "`--service-button-text`, `--service-border`, `--service-radius`, `--service-max-width`, `--service-font`,",
  "`--service-bg`, `--service-padding`, `--service-shadow`, `--service-label`, `--service-help`); values use",
  "letters, digits, spaces and `# % . , ( ) ' \" / + * -` only, and no `url()`, `var()`, `image-set()` or",
  "`expression()`. An origin is scheme, host and port (`https://shop.example.com`), compared ignoring case.",
  "",
  "```sh",
  "AGENT=$(curl -s http://127.0.0.1:3000/v1/agents -H \"Authorization: Bearer $KEY\" \\",
  "  -H 'Content-Type: application/json' -d '{\"type\":\"support\",\"name\":\"Help desk\"}' | jq -r .data.id)",
  "FORM=$(curl -s http://127.0.0.1:3000/v1/forms -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' -d '{",
  "  \"title\": {\"en\": \"Contact us\", \"es\": \"Contáctanos\"},",
  "  \"fields\": [",
  "    {\"id\": \"name\", \"type\": \"text\", \"label\": {\"en\": \"Name\", \"es\": \"Nombre\"}, \"required\": true},",
  "    {\"id\": \"email\", \"type\": \"email\", \"label\": {\"en\": \"E-mail\", \"es\": \"Correo\"}, \"required\": true},",
  "    {\"id\": \"body\", \"type\": \"textarea\", \"label\": {\"en\": \"Message\", \"es\": \"Mensaje\"}, \"required\": true, \"min_length\": 5}",
  "  ],",
  "  \"branding\": {\"--service-accent\": \"#0055ff\"},",
  "  \"target\": {\"type\": \"ticket\", \"agent_id\": \"'\"$AGENT\"'\"},",
  "  \"settings\": {\"allowed_origins\": [\"https://shop.example.com\"], \"honeypot_field\": \"website\"}",
  "}' | jq -r .data.id)",
  "export FORMS_KEY=pk_test_…   # the forms key printed on first start",
  "curl -si http://127.0.0.1:3000/v1/forms/$FORM/config -H \"Service-Api-Key: $FORMS_KEY\"",
  "curl -s http://127.0.0.1:3000/api/forms/$FORM/submit -H \"Service-Api-Key: $FORMS_KEY\" \\",
  "  -H 'Origin: https://shop.example.com' -H 'Content-Type: application/json' \\",
  "  -d '{\"fields\": {\"name\": \"Ana\", \"email\": \"ana@example.com\", \"body\": \"Where is my order?\"}}'",
  "```",
  "",
  "Signed identity, in the Forms group (Pro and Enterprise; on other plans every form acts as `identity_mode: none`). Rotate to",
  "get the workspace's identity secret for the key's environment — it is shown once and stored encrypted",
  "(AES-256-GCM under `SECRET_KEY`):",
  "",
  "```sh",
  "curl -s -X POST http://127.0.0.1:3000/v1/identity_secret/rotate -H \"Authorization: Bearer $KEY\"",
  "# {\"data\":{\"object\":\"identity_secret\",\"environment\":\"test\",\"secret\":\"idsec_…\",\"rotated_at\":\"…\"},…}",
  "```",
  "",
  "Your backend signs an HS256 JWT with it — claims `email` (required), `name`, `sub`, `iat` and `exp`",
  "(required; keep it under an hour) — and the page sends it as `identity_token`:",
  "",
  "```ts",
  "import { signIdentityToken } from \"./src/sdk/index.js\"",
  "const token = await signIdentityToken(process.env.IDENTITY_SECRET!, { email: \"ana@example.com\", name: \"Ana\", sub: \"user-42\" })",
  "```",
  "",
  "Only HS256 is accepted (`alg: none`, HS512, RS256 are refused), verified by `jose` in constant time. With",
  "`required`, a missing token is `401 identity_required` and a malformed, expired, wrongly signed or",
  "`email`-less one `401 identity_invalid`; with `optional`, a valid token is applied and any other is ignored",
  "(the submission passes unverified); with `none` tokens are not read. A valid token's `email` and `name`",
  "replace the submitted ones; a valid token without `name` leaves the name empty (the page's `name` is not",
  "used). Each instance caches the secret for at most 5 minutes (by the service clock), so",
  "after a rotation old tokens fail at once on the instance that rotated and within 5 minutes everywhere else.",
  "",
  "**Choices** (where the spec leaves one open):",
  "",
  "- Forms: see the sections above. The submit body is checked inside the pipeline (not at the edge), so a malformed",
  "  body is `400 validation_failed` only after the key, form, origin, rate-limit, honeypot and identity checks.",
  "  `allowed_origins` protects pages: an `Origin` outside it is refused, a request without `Origin` (a server, a",
  "  script) passes, as on the widget surface, since such a client can send any `Origin`; an empty list allows any.",
  "  The identity secret is one per workspace and environment. `identity_mode` is stored as set and applied as",
  "  `none` on plans below Pro, so an upgrade turns it on without editing forms. A disallowed origin still gets",
  "  the config (it is public) but no CORS headers. Rate limits count per IP address as the server sees it",
  "  (`X-Forwarded-For` is not read). `SECRET_KEY` is checked on first use rather than at start, so a deployment",
  "  on PostgreSQL without it runs everything else: rotation answers `503 service_unavailable` and tokens are",
  "  treated as invalid until it is set."
].join("\n")

export class FormsGroup extends HttpApiGroup.make("forms")
  .add(
    HttpApiEndpoint.post("create", "/v1/forms")
      .setPayload(CreateForm)
      .addSuccess(Envelope(Form), { status: 201 })
      .addError(missing)
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "write:forms")
      .annotate(OpenApi.Description, "Body: the form (see the group's description); `201`")
      .annotate(OpenApi.Summary, "Create a form")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/forms")
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(Form))
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:forms")
      .annotate(OpenApi.Summary, "List forms, newest first")
  )
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/forms/${idPath}`
      .addSuccess(Envelope(Form))
      .addError(missing)
      .annotate(RequiredScope, "read:forms")
      .annotate(OpenApi.Summary, "Retrieve a form, private settings included")
  )
  .add(
    HttpApiEndpoint.patch("update")`/v1/forms/${idPath}`
      .setPayload(UpdateForm)
      .addSuccess(Envelope(Form))
      .addError(missing)
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "write:forms")
      .annotate(
        OpenApi.Description,
        "Any top-level field; `fields` and `branding` replace the stored ones, each given `settings` key " +
          "replaces its value, `submit_label`/`success_message` null clears"
      )
      .annotate(OpenApi.Summary, "Change a form; lists and maps given replace the stored ones")
  )
  .add(
    HttpApiEndpoint.del("delete")`/v1/forms/${idPath}`
      .addSuccess(Envelope(Deleted(FormId, "form")))
      .addError(missing)
      .annotate(RequiredScope, "write:forms")
      .annotate(
        OpenApi.Description,
        "`{id, object: \"form\", deleted: true}`; its config and submit answer `404` from then on"
      )
      .annotate(OpenApi.Summary, "Delete a form; its config and submit endpoints answer 404 from now on")
  )
  .add(
    HttpApiEndpoint.post("rotateIdentitySecret", "/v1/identity_secret/rotate")
      .addSuccess(Envelope(IdentitySecret))
      .addError(ApiError(ServiceUnavailable))
      .annotate(RequiredScope, "write:forms")
      .annotate(ShowsSecret, true)
      .annotate(OpenApi.Description, "A new identity secret for the key's environment, shown only in this response")
      .annotate(
        OpenApi.Summary,
        "New identity secret for this environment, shown once; tokens signed with the old one fail within 5 minutes"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, formsReference)
  .annotate(OpenApi.Title, "Forms") {}

/** The two endpoints the component calls with a forms key (`Service-Api-Key`), not a secret key. */
/** The reference of this group, in Markdown: its tag's description in the OpenAPI document and on `/docs`. */
const formsPublicReference = [
  "The two endpoints a page calls, with the forms public key (`pk_test_…` / `pk_live_…`) in the `Service-Api-Key`",
  "header: the `<service-form>` component (below) calls them, and so can your own page.",
  "",
  "**The public config** (`object: \"form_config\"`): `id`, `livemode`, `title`, `fields`, `submit_label`,",
  "`success_message`, `branding`, `width`, `appearance` — never the target, a private setting or the identity",
  "secret. Its `ETag` is a hash of exactly that, so a change of private settings does not invalidate caches.",
  "The key must be a forms key (`401 missing_authorization` without one, `401 invalid_api_key` unknown or",
  "revoked, `403 key_scope_mismatch` for a secret or widget key) of the form's workspace and environment",
  "(else `404 resource_missing`, `param: \"form_id\"`).",
  "",
  "**Submit** runs its checks in this order, and a request failing two gets the first:",
  "",
  "| # | Check | Failure |",
  "|---|---|---|",
  "| 1 | key: a forms key, known, not revoked | `401 missing_authorization` / `invalid_api_key`, `403 key_scope_mismatch` |",
  "| 2 | form: in the key's workspace and environment | `404 resource_missing` |",
  "| 3 | origin: `Origin` is one of `allowed_origins` (any, when the list is empty); a request without `Origin` is not from a browser page and passes | `403 origin_not_allowed` |",
  "| 4 | rate limit: `rate_limit.max` submissions per IP address and form per `window_seconds` (fixed window, on the service clock; every submission past check 3 counts) | `429 rate_limited` with `Retry-After` |",
  "| 5 | honeypot: `fields[honeypot_field]`, or the component's decoy `fields._hp`, is filled | `204`, nothing stored, no event |",
  "| 6 | identity, by `identity_mode` (see the Forms group) | `401 identity_required` / `identity_invalid` |",
  "| 7 | validation: the body's shape, unknown fields, required, lengths, e-mail shape, select options, patterns | `400 validation_failed` with every problem in `error.field_errors[]` (`{field, message}`) |",
  "| 8 | plan cap (tickets) | `402 limit_reached` |",
  "| 9 | create | `201` `{\"data\": {\"object\": \"form_submission\", \"form_id\", \"ticket\": {\"public_id\": \"tck_…\"}}}` |",
  "",
  "The honeypot's name is a private setting, so the `<service-form>` component cannot draw it; it draws its own",
  "visually hidden decoy instead and sends it as `fields._hp` (no real field can take that id: ids start with a",
  "letter). A filled `_hp` is answered like the form's honeypot on every form; an empty one is ignored. Your own",
  "HTML form can use `honeypot_field` with any name you like.",
  "",
  "Submit honours `Idempotency-Key` like every `POST` (see Idempotency in the API overview), scoped to the forms key's workspace and",
  "environment: a page that retries after a network error gets the first answer back",
  "(`Idempotent-Replayed: true`) and one ticket is created.",
  "",
  "The ticket is created by the same program as `POST /v1/tickets`: origin `form`, actor `visitor`,",
  "`ticket.created`, the owner's e-mail and the plan cap apply. `visitor_name` is the `name` field,",
  "`visitor_email` the `email` field (or the first `email`-type field), `subject` the `subject` field or else",
  "the form's title; the first message is the `body` field followed by `Label: value` lines for every other",
  "field (hidden ones included); `metadata` is `{form_id, identity: {verified, sub?}}`. Field values other than",
  "name and e-mail go only into the message, so a ticket erasure removes them all.",
  "",
  "Every response of the two endpoints, errors included, carries `Access-Control-Allow-Origin` (and",
  "`Access-Control-Expose-Headers: ETag, Retry-After, Request-Id, …`) when the request's `Origin` is allowed by",
  "the form; `OPTIONS` preflights answer `204` with `Access-Control-Allow-Methods`, `-Headers`",
  "(`Service-Api-Key, Content-Type, If-None-Match`) and `-Max-Age: 600` for allowed origins, and no CORS headers",
  "otherwise. A form whose target is `lead` captures a lead of its agent (`lead.captured`; `metadata.source` is `form`, with `form_id`, `page`, `identity_verified` and the other `fields`); a lead needs an e-mail or a phone, so a submission without an e-mail is a field error on `email`.",
  "",
  "### The `<service-form>` component",
  "",
  "One module script and one tag; the component loads the form's public config, draws it in its own shadow DOM",
  "and turns each submission into a ticket (or a lead):",
  "",
  "```html",
  "<script type=\"module\" src=\"http://127.0.0.1:3000/storage/v1/object/public/widget/v1/service-form-element.esm.js\"></script>",
  "<service-form api-key=\"pk_test_…\" form-id=\"frm_…\"></service-form>",
  "```",
  "",
  "The script is served by the service (no key, no rate limit) as `text/javascript; charset=utf-8` with",
  "`Access-Control-Allow-Origin: *`, an `ETag` (`304` on `If-None-Match`) and `Cache-Control: public,",
  "max-age=300, must-revalidate`: the file name carries no version, so caches revalidate after five minutes.",
  "It is one self-contained ES module of about 17 KB (6.5 KB gzipped), built from `src/forms/element/` by",
  "esbuild (minified, es2020). `npm run build` writes it to `dist/widget/v1/service-form-element.esm.js`, and",
  "the bundled server serves that file; run from the sources (the tests), the service bundles it on the first",
  "request and keeps it in memory. The component calls the service at the address its script came",
  "from, so the page's origin must be in the form's `allowed_origins` (or the list empty).",
  "",
  "To see a sandbox form working, open **`/demo/forms/{form_id}?key=pk_test_…`** (the form's sandbox forms key)",
  "in a browser: a page of the service with the component and a log of its events. It serves sandbox forms only:",
  "no key is `401 missing_authorization` (`param: \"key\"`), and a live key, a secret or widget key, another",
  "workspace's key or an unknown form `404 resource_missing`; a browser (`Accept` with `text/html`) gets these as a",
  "page that says what to fix, any other caller in the error envelope. Submitting from it needs the service's own",
  "origin (`http://127.0.0.1:3000`) in the form's",
  "`allowed_origins`, or an empty list; the page says so when the form would refuse it.",
  "",
  "| Attribute | Default | Meaning |",
  "|---|---|---|",
  "| `api-key` | required | the forms public key, `pk_live_…` or `pk_test_…` |",
  "| `form-id` | required | `frm_…` |",
  "| `locale` | detected | `es` or `en` (`es-MX` counts as `es`); else the page's `<html lang>`, then the browser's languages, then `es`. A text the form lacks in that language is shown in the other |",
  "| `prefill-name` | — | value of the `name` field |",
  "| `prefill-email` | — | value of the `email` field |",
  "| `prefill` | — | JSON object of field id → value, e.g. `{\"order\": \"ORD-1234\"}`; `prefill-name`/`prefill-email` win over its `name`/`email` |",
  "| `hidden-fields` | — | comma-separated field ids not drawn but submitted with their prefilled value (fields of type `hidden` are never drawn and fall back to their `default_value`) |",
  "| `identity` | — | a signed identity JWT (Signed identity, in the Forms group); sent as `identity_token` |",
  "| `width` | the form's `width` | `fluid`, `full` or `100%` (the container's width), a number of pixels, or a CSS length (`30rem`); anything else is `fluid` |",
  "| `appearance` | the form's `appearance` | `card` (border, radius, shadow, padding) or `bare` (none of them) |",
  "",
  "An attribute overrides the form's dashboard default; changing one re-draws the form and keeps what was typed",
  "(changing `api-key` or `form-id` loads the other form).",
  "",
  "**Loading.** A skeleton is shown until the config arrives. The config is kept in `sessionStorage` with its",
  "ETag: the next page view draws the form at once from it and revalidates (`If-None-Match`); a changed config",
  "replaces it if the person has not typed yet. A config that cannot be loaded shows \"The form could not be",
  "loaded.\" (in the locale) in the `error` part. An unknown form's `404` carries no CORS headers, so the browser",
  "hides it: the event's message then says the config could not be fetched.",
  "",
  "**Submitting.** The component checks what the server checks before sending — required fields and checkboxes,",
  "`min_length`/`max_length`, e-mail shape, select options, `pattern` (whole value, flag `v`) — and the server",
  "checks again. Each error is written under its field in an element referenced by the control's",
  "`aria-describedby`, the control gets `aria-invalid=\"true\"`, a `role=\"alert\"` line announces \"Please check the",
  "3 marked fields\", and focus moves to the first invalid field; typing in a field clears its error. A `400`'s",
  "`error.field_errors` are shown the same way (an error on a field that is not drawn goes to the alert line).",
  "While sending, the button is disabled and reads \"Sending…\". A `201` replaces the form with the success",
  "message (`success` part, focused, `role=\"status\"`); a `429` says when to retry (from `Retry-After`); any other",
  "failure shows a generic message. The component's own texts exist in Spanish and English. One decoy input,",
  "off-screen, `tabindex=\"-1\"`, `autocomplete=\"off\"` and `aria-hidden`, catches bots: the form's private",
  "`honeypot_field` never reaches the page; the decoy's value is always sent as `fields._hp` (a key no field can",
  "have), and a filled one is answered `204` and dropped; the component then shows its success message, so the bot",
  "learns nothing.",
  "",
  "**Theming.** The form's `branding` is applied as `:host` rules, so CSS of the page on the element always wins:",
  "",
  "```css",
  "service-form { --service-accent: #e11d48; --service-radius: 0; }",
  "service-form::part(submit) { text-transform: uppercase; }",
  "```",
  "",
  "| Custom property | Styles |",
  "|---|---|",
  "| `--service-accent` | focus rings, the required mark, checkboxes, the button when `--service-button-bg` is unset |",
  "| `--service-text` | text colour |",
  "| `--service-button-bg`, `--service-button-text` | the submit button |",
  "| `--service-border` | card and input borders |",
  "| `--service-radius` | card, inputs and button corners |",
  "| `--service-max-width` | the element's largest width |",
  "| `--service-font` | font family |",
  "| `--service-bg` | card and input background |",
  "| `--service-padding` | card padding |",
  "| `--service-shadow` | card shadow |",
  "| `--service-label`, `--service-help` | label and help text colours |",
  "",
  "Parts for `::part()`: `form`, `title`, `field` (one per drawn field), `label`, `input` (text, e-mail,",
  "textarea and checkbox), `select`, `footer`, `submit`, `error` (the alert line, a failed load, and each field's",
  "error, which is also `field-error`), `success`.",
  "",
  "**Events**, raised on the element, bubbling and composed:",
  "",
  "| Event | When | `detail` |",
  "|---|---|---|",
  "| `service-form:loading` | the config starts loading | `{formId}` |",
  "| `service-form:ready` | fields painted the first time | `{formId, fields}` (the config's fields) |",
  "| `service-form:success` | submitted | the response body, `{data: {object, form_id, ticket: {public_id}}, meta}`; `null` for the honeypot's silent `204` |",
  "| `service-form:error` | the config or a submission failed | `{formId, phase: \"config\" \\| \"submit\", message}` |",
  "",
  "```js",
  "document.querySelector(\"service-form\")",
  "  .addEventListener(\"service-form:success\", (e) => console.log(e.detail.data.ticket.public_id))",
  "```",
  "",
  "**Headless helpers**, for a page drawing its own form, on `window.Service.form` once the script loaded:",
  "",
  "```js",
  "const config = await Service.form.getConfig({ apiKey: \"pk_test_…\", formId: \"frm_…\" })",
  "const sent = await Service.form.submit({ apiKey: \"pk_test_…\", formId: \"frm_…\",",
  "  fields: { name: \"Ana\", email: \"ana@example.com\", body: \"Where is my order?\" }, identity: undefined })",
  "// sent.data.ticket.public_id",
  "```",
  "",
  "Both resolve with the parsed body (`submit`: `null` for a `204`) and reject with a `Service.form.ServiceFormError`",
  "carrying `status`, the parsed error `body` (`body.error.field_errors` for a `400`) and `retryAfter` (seconds).",
  "Both take an optional `baseUrl` (default: the address the script came from).",
  "",
  "**Choices** (where the spec leaves one open):",
  "",
  "- The form component: see the component (above). Its source",
  "  (`src/forms/element/`) is browser code: it and the server import nothing of each other (checked by the",
  "  import test); `src/forms/ElementBundle.ts` bundles it with esbuild. The script and the demo page are",
  "  operational paths at the edge (no key, no rate limit) and are not in the OpenAPI document, which describes",
  "  the JSON API. The demo takes its key in the query (`?key=pk_test_…`) because a page opened by a click cannot",
  "  send a header; only sandbox keys are accepted, so no live key ends up in an address bar or a log."
].join("\n")

export class FormsPublicGroup extends HttpApiGroup.make("formsPublic")
  .add(
    HttpApiEndpoint.get("config")`/v1/forms/${formIdPath}/config`
      .annotate(FormEndpoint, { formParam: "form_id" })
      .setHeaders(FormsKeyHeaders)
      .addSuccess(Envelope(FormConfig))
      .addSuccess(Schema.Void, { status: 304 })
      .addError(ApiError(MissingAuthorization))
      .addError(ApiError(InvalidApiKey))
      .addError(ApiError(KeyScopeMismatch))
      .addError(missing)
      .annotate(
        OpenApi.Description,
        "The public config; `ETag`, `Cache-Control: public, max-age=60, must-revalidate`, `304` on " +
          "`If-None-Match`; CORS"
      )
      .annotate(
        OpenApi.Summary,
        "The public form config for the component; `ETag` and `Cache-Control`, `304` on `If-None-Match`, CORS for the allowed origins"
      )
  )
  .add(
    HttpApiEndpoint.post("submit")`/api/forms/${formIdPath}/submit`
      .annotate(FormEndpoint, { formParam: "form_id" })
      .setHeaders(FormsKeyHeaders)
      .setPayload(SubmitBody)
      .addSuccess(Envelope(SubmitResult), { status: 201 })
      .addSuccess(Schema.Void, { status: 204 })
      .addError(ApiError(MissingAuthorization))
      .addError(ApiError(InvalidApiKey))
      .addError(ApiError(KeyScopeMismatch))
      .addError(missing)
      .addError(ApiError(OriginNotAllowed))
      .addError(ApiError(RateLimited))
      .addError(ApiError(IdentityRequired))
      .addError(ApiError(IdentityInvalid))
      .addError(ApiError(ValidationFailed))
      .addError(ApiError(LimitReached))
      .addError(ApiError(ServiceUnavailable))
      .annotate(
        OpenApi.Description,
        "Also served on `FORMS_PORT` when set. body `fields` (field id → string, or boolean for checkboxes), " +
          "optional `identity_token`; `201` with `data.ticket.public_id` (a lead target: `data.lead.id`); CORS"
      )
      .annotate(
        OpenApi.Summary,
        "Submit a form: checks key, form, origin, rate limit, honeypot (204), identity, validation and plan cap, then creates the ticket"
      )
  )
  .annotate(OpenApi.Description, formsPublicReference)
  .annotate(OpenApi.Title, "Forms (public)") {}
