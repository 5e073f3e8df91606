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
import { VisitorLocale, visitorLocalePattern } from "./Languages.js"
import { StrictStruct } from "./Payload.js"
import { reference } from "./Reference.js"

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

/** CSS custom properties of the `<service-form>` component that branding may set. */
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
      description: `A JavaScript regular expression (flag \`v\`) the whole value must match, run by a linear-time engine (RE2): no lookaround, back-references or strings in classes; Unicode properties (\`\\p{…}\`) of Unicode 17.0, at most 4 a pattern; at most ${maxPatternLength} characters; checked at write time`
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
      identity_token: { type: "string", description: "JWT signed HS256 with the workspace's identity secret" },
      locale: {
        type: "string",
        maxLength: 35,
        pattern: visitorLocalePattern,
        description:
          "The visitor's language (`es`, `en`, `es-MX`; the `<service-form>` sends its own): the field errors' messages " +
          "are in it, else in the first language of `Accept-Language` the service writes, else in English"
      }
    }
  }
})

/** The submit body as the validation step decodes it. */
export const Submission = Schema.Struct({
  fields: Schema.Record({
    key: Schema.String.pipe(Schema.maxLength(100)),
    value: Schema.Union(Schema.String, Schema.Boolean, Schema.Null)
  }),
  identity_token: Schema.optional(Schema.Unknown),
  locale: Schema.optional(VisitorLocale)
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
  .annotate(OpenApi.Description, reference("forms"))
  .annotate(OpenApi.Title, "Forms") {}

/** The two endpoints the component calls with a forms key (`Service-Api-Key`), not a secret key. */

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
  .annotate(OpenApi.Description, reference("forms-public"))
  .annotate(OpenApi.Title, "Forms (public)") {}
