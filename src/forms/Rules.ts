/**
 * What a form definition must satisfy beyond its schema, and how its public
 * config and its field values are checked: pure functions, no I/O.
 */
import type { FormConfig, FormField, FormFieldInput, IdentityMode, Settings, SettingsInput } from "../../schema/Forms.js"
import { maxPatternInput, maxValueLength } from "../../schema/Forms.js"
import { compilePattern, maxFormProgramSize } from "./Pattern.js"
import type { Plan } from "../../schema/Auth.js"
import { createHash } from "node:crypto"
import type { Definition, FormRow } from "./FormsRepo.js"
import { text, type TextKey, type TextLanguage } from "../../schema/texts/Catalogue.js"

export interface Problem {
  readonly param: string
  readonly message: string
}

const textual = new Set(["text", "email", "textarea", "hidden"])

/** Problems of a field list, each naming its parameter (`fields[2].pattern`). */
export const fieldProblems = (fields: ReadonlyArray<FormFieldInput>, honeypot: string | null): ReadonlyArray<Problem> => {
  const problems: Array<Problem> = []
  const seen = new Set<string>()
  let programSize = 0
  fields.forEach((f, i) => {
    const at = (name: string) => `fields[${i}].${name}`
    if (seen.has(f.id)) problems.push({ param: at("id"), message: `field id '${f.id}' appears twice` })
    seen.add(f.id)
    if (honeypot !== null && f.id === honeypot) {
      problems.push({ param: at("id"), message: `'${f.id}' is the honeypot field name; a real field cannot use it` })
    }
    if (f.type === "select" && f.options === undefined) problems.push({ param: at("options"), message: "a select needs options" })
    if (f.type !== "select" && f.options !== undefined) problems.push({ param: at("options"), message: "only a select has options" })
    if (f.options !== undefined) {
      const values = new Set<string>()
      f.options.forEach((o, j) => {
        if (values.has(o.value)) problems.push({ param: `${at("options")}[${j}].value`, message: `'${o.value}' appears twice` })
        values.add(o.value)
      })
    }
    if (!textual.has(f.type)) {
      for (const name of ["min_length", "max_length", "pattern"] as const) {
        if (f[name] !== undefined) problems.push({ param: at(name), message: `a ${f.type} field takes no ${name}` })
      }
    }
    if (f.min_length !== undefined && f.max_length !== undefined && f.min_length > f.max_length) {
      problems.push({ param: at("min_length"), message: "min_length is greater than max_length" })
    }
    if (f.pattern !== undefined) {
      const compiled = compilePattern(f.pattern)
      if ("error" in compiled) problems.push({ param: at("pattern"), message: compiled.error })
      else if (programSize <= maxFormProgramSize && (programSize += compiled.size) > maxFormProgramSize) {
        problems.push({
          param: at("pattern"),
          message: `the form's patterns together compile to more than ${maxFormProgramSize} instructions (a submission runs them all)`
        })
      }
    }
    if (f.default_value !== undefined && f.type !== "hidden") {
      problems.push({ param: at("default_value"), message: "only a hidden field has a default_value" })
    }
  })
  return problems
}

export const toField = (f: FormFieldInput): FormField => ({
  id: f.id,
  type: f.type,
  label: f.label,
  help: f.help ?? null,
  placeholder: f.placeholder ?? null,
  required: f.required ?? false,
  min_length: f.min_length ?? null,
  max_length: f.max_length ?? null,
  pattern: f.pattern ?? null,
  options: f.options ?? null,
  default_value: f.default_value ?? null
})

export const defaultSettings: Settings = {
  allowed_origins: [],
  identity_mode: "none",
  rate_limit: { max: 10, window_seconds: 600 },
  honeypot_field: null
}

const normalOrigin = (o: string) => o.replace(/\/$/, "").toLowerCase()

export const mergeSettings = (base: Settings, input: SettingsInput | undefined): Settings => ({
  allowed_origins:
    input?.allowed_origins !== undefined ? [...new Set(input.allowed_origins.map(normalOrigin))] : base.allowed_origins,
  identity_mode: input?.identity_mode ?? base.identity_mode,
  rate_limit: input?.rate_limit ?? base.rate_limit,
  honeypot_field: input?.honeypot_field !== undefined ? input.honeypot_field : base.honeypot_field
})

/**
 * Whether a page of `origin` may use the form: any origin when the list is
 * empty. A request without `Origin` is not from a browser page and passes, as
 * on the widget surface: the check protects pages, and any other client can
 * send whatever `Origin` it likes.
 */
export const originAllowed = (settings: Settings, origin: string | undefined): boolean =>
  settings.allowed_origins.length === 0 ||
  origin === undefined ||
  settings.allowed_origins.includes(normalOrigin(origin))

/** Identity on plans below Pro is always `none`. */
export const effectiveIdentityMode = (settings: Settings, plan: Plan): IdentityMode =>
  plan === "pro" || plan === "enterprise" ? settings.identity_mode : "none"

export const publicConfig = (row: FormRow): FormConfig => {
  const d: Definition = row.definition
  return {
    id: row.id,
    object: "form_config",
    livemode: row.environment === "live",
    title: d.title,
    fields: d.fields,
    submit_label: d.submit_label,
    success_message: d.success_message,
    branding: d.branding,
    width: d.width,
    appearance: d.appearance
  }
}

/** A strong ETag over the public config (so it changes exactly when the component would see a change). */
export const etagOf = (config: FormConfig): string =>
  `"${createHash("sha256").update(JSON.stringify(config)).digest("base64url").slice(0, 27)}"`

export type FieldValue = string | boolean

/** A body of thousands of unknown keys gets this many errors back, not thousands. */
export const maxFieldErrors = 100

const emailShape = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * The decoy the `<service-form>` component draws (visually hidden) and sends as
 * `fields._hp`: the form's own `honeypot_field` stays private, so the component
 * cannot know it. No real field can use the key: field ids start with a letter.
 */
export const componentDecoy = "_hp"

/**
 * The submitted values checked against the fields; hidden fields fall back to their default. The errors' messages
 * are the visitor's, in `language`.
 */
export const validateValues = (
  fields: ReadonlyArray<FormField>,
  submitted: Readonly<Record<string, FieldValue | null>>,
  honeypot: string | null,
  language: TextLanguage
): { readonly values: ReadonlyMap<string, FieldValue>; readonly errors: ReadonlyArray<{ field: string; message: string }> } => {
  const t = (key: TextKey, values?: Readonly<Record<string, number>>) => text(language, key, values)
  const errors: Array<{ field: string; message: string }> = []
  const values = new Map<string, FieldValue>()
  const known = new Set(fields.map((f) => f.id))
  for (const key of Object.keys(submitted)) {
    if (!known.has(key) && key !== honeypot && key !== componentDecoy) errors.push({ field: key, message: t("submit.unknownField") })
  }
  for (const f of fields) {
    const raw = submitted[f.id] ?? (f.type === "hidden" ? f.default_value : null) ?? null
    if (f.type === "checkbox") {
      if (raw !== null && typeof raw !== "boolean") {
        errors.push({ field: f.id, message: t("submit.expectedBoolean") })
        continue
      }
      if (f.required && raw !== true) errors.push({ field: f.id, message: t("submit.mustCheck") })
      else if (raw !== null) values.set(f.id, raw)
      continue
    }
    if (raw !== null && typeof raw !== "string") {
      errors.push({ field: f.id, message: t("submit.expectedText") })
      continue
    }
    const value = (raw ?? "").trim()
    if (value === "") {
      if (f.required) errors.push({ field: f.id, message: t("submit.required") })
      continue
    }
    const max = Math.min(f.max_length ?? maxValueLength, maxValueLength)
    if (value.length > max) {
      errors.push({ field: f.id, message: t("submit.tooLong", { count: max }) })
      continue
    }
    if (f.min_length !== null && value.length < f.min_length) {
      errors.push({ field: f.id, message: t("submit.tooShort", { count: f.min_length }) })
      continue
    }
    if (f.type === "email" && (value.length > 320 || !emailShape.test(value))) {
      errors.push({ field: f.id, message: t("submit.email") })
      continue
    }
    if (f.type === "select" && !(f.options ?? []).some((o) => o.value === value)) {
      errors.push({ field: f.id, message: t("submit.option") })
      continue
    }
    if (f.pattern !== null) {
      // a pattern saved before the linear engine that it refuses (a lookahead, say) is not run: the form keeps working
      const compiled = compilePattern(f.pattern)
      if (value.length > maxPatternInput || ("test" in compiled && !compiled.test(value))) {
        errors.push({ field: f.id, message: t("submit.pattern") })
        continue
      }
    }
    values.set(f.id, value)
  }
  return { values, errors: errors.slice(0, maxFieldErrors) }
}

/** Whether the form's honeypot field or the component's decoy was filled (by a bot: people never see them). */
export const honeypotFilled = (body: unknown, honeypot: string | null): boolean => {
  if (typeof body !== "object" || body === null) return false
  const fields = (body as { fields?: unknown }).fields
  if (typeof fields !== "object" || fields === null) return false
  const filled = (key: string) => {
    const value = (fields as Record<string, unknown>)[key]
    return value !== undefined && value !== null && value !== "" && value !== false
  }
  return filled(componentDecoy) || (honeypot !== null && filled(honeypot))
}

export const labelOf = (f: FormField): string => f.label.en ?? f.label.es ?? f.id

export const textOf = (t: { readonly es?: string | undefined; readonly en?: string | undefined }): string =>
  t.en ?? t.es ?? ""
