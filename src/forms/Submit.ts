/**
 * The form endpoints a forms key (`Service-Api-Key: pk_...`) calls: the public
 * config, and the submit pipeline, whose checks run in this order:
 * key, form, origin, rate limit, honeypot, identity, validation, plan cap,
 * create. A request failing two checks gets the earlier one.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { CallerShape, Plan } from "../../schema/Auth.js"
import {
  IdentityInvalid,
  IdentityRequired,
  InvalidApiKey,
  KeyScopeMismatch,
  MissingAuthorization,
  OriginNotAllowed,
  RateLimited,
  ValidationFailed
} from "../../schema/Errors.js"
import { type FormId, Submission, type SubmitResult } from "../../schema/Forms.js"
import { VisitorLocale } from "../../schema/Languages.js"
import type { CreateTicket } from "../../schema/Tickets.js"
import { text, type TextLanguage } from "../../schema/texts/Catalogue.js"
import { ApiKeys } from "../auth/ApiKeys.js"
import { textLanguageOfAcceptLanguage, textLanguageOfTag } from "../languages/TextLanguage.js"
import { Tickets } from "../tickets/Tickets.js"
import { missingForm } from "./Forms.js"
import { FormsRepo, type FormRow } from "./FormsRepo.js"
import { type Identity, IdentitySecrets, refusalMessage } from "./Identity.js"
import { LeadTarget } from "./LeadTarget.js"
import {
  effectiveIdentityMode,
  etagOf,
  type FieldValue,
  honeypotFilled,
  labelOf,
  maxFieldErrors,
  originAllowed,
  publicConfig,
  textOf,
  validateValues
} from "./Rules.js"

export interface FormsRequest {
  readonly formId: FormId
  readonly key: string | undefined
  readonly origin: string | undefined
  /** The client address rate limits count by. */
  readonly ip: string
  /** The `Accept-Language` header: the field errors' language when the body names none. */
  readonly acceptLanguage?: string | undefined
}

export type SubmitOutcome =
  | { readonly _tag: "Created"; readonly result: SubmitResult }
  | { readonly _tag: "Dropped" }

const decodeSubmission = Schema.decodeUnknownEither(Submission, { errors: "all", onExcessProperty: "error" })

const isLocale = Schema.is(VisitorLocale)

/**
 * The language of a submission's field errors: the body's `locale`, else `Accept-Language`, else English. A form
 * names no agent language to fall back on: its page says the visitor's.
 */
const submissionLanguage = (body: unknown, acceptLanguage: string | undefined): TextLanguage => {
  const locale = typeof body === "object" && body !== null ? (body as { locale?: unknown }).locale : undefined
  return (isLocale(locale) ? textLanguageOfTag(locale) : undefined) ?? textLanguageOfAcceptLanguage(acceptLanguage) ?? "en"
}

/** The field errors of a body that is not `{fields: {...}, identity_token?, locale?}` at all. */
const shapeErrors = (body: unknown, language: TextLanguage): ReadonlyArray<{ field: string; message: string }> => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return [{ field: "fields", message: "Send a JSON object with `fields`" }]
  }
  const errors: Array<{ field: string; message: string }> = []
  for (const key of Object.keys(body)) {
    if (key !== "fields" && key !== "identity_token" && key !== "locale") errors.push({ field: key, message: "Unknown parameter" })
  }
  const locale = (body as { locale?: unknown }).locale
  if (locale !== undefined && !isLocale(locale)) {
    errors.push({ field: "locale", message: "locale must be a language tag such as `es` or `en-GB`" })
  }
  const fields = (body as { fields?: unknown }).fields
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) {
    errors.push({ field: "fields", message: "Expected an object of field id to value" })
  } else {
    for (const [k, v] of Object.entries(fields)) {
      if (v !== null && typeof v !== "string" && typeof v !== "boolean") {
        errors.push({ field: k, message: text(language, "submit.expectedValue") })
      }
    }
  }
  return errors.length > 0 ? errors.slice(0, maxFieldErrors) : [{ field: "fields", message: "Invalid submission" }]
}

export class FormSubmissions extends Effect.Service<FormSubmissions>()("Forms/Submissions", {
  effect: Effect.gen(function* () {
    const keys = yield* ApiKeys
    const repo = yield* FormsRepo
    const identities = yield* IdentitySecrets
    const tickets = yield* Tickets
    const limiter = yield* RateLimiter.RateLimiter
    const leads = yield* LeadTarget

    /** Check 1: a forms key, known and not revoked. */
    const authenticate = (key: string | undefined) =>
      Effect.gen(function* () {
        const token = key?.trim()
        if (token === undefined || token === "") {
          return yield* new MissingAuthorization({
            message: "Send the form's public key as `Service-Api-Key: pk_live_...` (or pk_test_...)",
            param: "Service-Api-Key"
          })
        }
        const found = yield* keys.lookup(token)
        if (found._tag === "Revoked") return yield* new InvalidApiKey({ message: "This API key has been revoked." })
        if (found._tag === "Unknown") return yield* new InvalidApiKey({ message: "Invalid API key provided." })
        if (found.caller.keyKind !== "forms") {
          return yield* new KeyScopeMismatch({
            message: "The form endpoints take a forms public key (pk_live_ or pk_test_) in `Service-Api-Key`.",
            param: "Service-Api-Key"
          })
        }
        return { caller: found.caller, plan: found.plan } satisfies { caller: CallerShape; plan: Plan }
      })

    /** Check 2: the form, in the key's workspace and environment. */
    const formFor = (caller: CallerShape, formId: FormId) =>
      Effect.flatMap(repo.find(caller, formId), (row) =>
        Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(missingForm(formId, "form_id"))
      )

    /** The origin to answer CORS for (any key or none): the form's allowed origins, read by id alone. */
    const corsOrigin = Effect.fn("Forms.corsOrigin")(function* (formId: FormId, origin: string | undefined) {
      if (origin === undefined) return Option.none<string>()
      const row = yield* repo.findAnywhere(formId)
      return Option.isSome(row) && originAllowed(row.value.settings, origin) ? Option.some(origin) : Option.none<string>()
    })

    const config = Effect.fn("Forms.config")(function* (request: FormsRequest) {
      const { caller } = yield* authenticate(request.key)
      const row = yield* formFor(caller, request.formId)
      const data = publicConfig(row)
      return { data, etag: etagOf(data) }
    })

    const rateLimit = (row: FormRow, ip: string) =>
      limiter
        .consume({
          algorithm: "fixed-window",
          onExceeded: "fail",
          window: Duration.seconds(row.settings.rate_limit.window_seconds),
          limit: row.settings.rate_limit.max,
          key: `form-submit:${row.id}:${ip}`
        })
        .pipe(
          Effect.asVoid,
          Effect.catchAll((error) =>
            error.reason === "StoreError"
              ? Effect.logWarning("rate limit store unavailable; form submission allowed", error)
              : Effect.fail(
                  new RateLimited({
                    message: "Too many submissions of this form from your address; retry after the time in `Retry-After`.",
                    retry_after_seconds: Math.max(1, Math.ceil(Duration.toMillis(error.retryAfter) / 1000))
                  })
                )
          )
        )

    /** Check 6: the identity, by the form's mode (forced to `none` below Pro). */
    const identify = (caller: CallerShape, plan: Plan, row: FormRow, body: unknown) =>
      Effect.gen(function* () {
        const mode = effectiveIdentityMode(row.settings, plan)
        if (mode === "none") return Option.none<Identity>()
        const token =
          typeof body === "object" && body !== null ? (body as { identity_token?: unknown }).identity_token : undefined
        if (token === undefined || token === null) {
          if (mode === "required") {
            return yield* new IdentityRequired({
              message: "This form requires a signed identity: send `identity_token`.",
              param: "identity_token"
            })
          }
          return Option.none<Identity>()
        }
        const checked = yield* identities.verify(caller, token)
        if (checked._tag === "Verified") return Option.some(checked.identity)
        if (mode === "required") {
          return yield* new IdentityInvalid({
            message: refusalMessage(checked.refused),
            param: "identity_token"
          })
        }
        yield* Effect.logDebug(`optional identity ignored (${checked.refused})`)
        return Option.none<Identity>()
      })

    /** Check 7: the body and every field against the form. */
    const validate = (row: FormRow, body: unknown, acceptLanguage: string | undefined) =>
      Effect.gen(function* () {
        const language = submissionLanguage(body, acceptLanguage)
        const decoded = decodeSubmission(body)
        if (decoded._tag === "Left") {
          return yield* new ValidationFailed({
            message: "The submission is not valid; see `error.field_errors`.",
            field_errors: shapeErrors(body, language)
          })
        }
        const { values, errors } = validateValues(
          row.definition.fields,
          decoded.right.fields,
          row.settings.honeypot_field,
          language
        )
        if (errors.length > 0) {
          return yield* new ValidationFailed({
            message: "Some fields are not valid; see `error.field_errors`.",
            field_errors: errors
          })
        }
        return values
      })

    const submit = Effect.fn("Forms.submit")(function* (request: FormsRequest, body: unknown) {
      const { caller, plan } = yield* authenticate(request.key)
      const row = yield* formFor(caller, request.formId)
      if (!originAllowed(row.settings, request.origin)) {
        return yield* new OriginNotAllowed({
          message: "This form does not accept submissions from this origin.",
          param: "Origin"
        })
      }
      yield* rateLimit(row, request.ip)
      if (honeypotFilled(body, row.settings.honeypot_field)) return { _tag: "Dropped" } as SubmitOutcome
      const identity = yield* identify(caller, plan, row, body)
      const values = yield* validate(row, body, request.acceptLanguage)
      const created = yield* create(caller, row, values, identity, request.origin)
      return { _tag: "Created", result: created } as SubmitOutcome
    })

    /** Checks 8 and 9: the ticket through the same program as `POST /v1/tickets` (plan cap, event, e-mail), or the lead. */
    const create = (
      caller: CallerShape,
      row: FormRow,
      values: ReadonlyMap<string, FieldValue>,
      identity: Option.Option<Identity>,
      origin: string | undefined
    ) =>
      Effect.gen(function* () {
        const fields = row.definition.fields
        const str = (id: string) => {
          const v = values.get(id)
          return typeof v === "string" && v !== "" ? v : undefined
        }
        const firstEmailField = fields.find((f) => f.type === "email")
        const email = Option.match(identity, {
          onSome: (i) => i.email,
          onNone: () => str("email") ?? (firstEmailField === undefined ? undefined : str(firstEmailField.id))
        })
        // a verified token is the whole identity: its name replaces the page's, and a token without one means no
        // name (the page's `name` is self-declared, never mixed with a verified e-mail)
        const name = Option.match(identity, {
          onSome: (i) => Option.getOrUndefined(i.name),
          onNone: () => str("name")
        })
        const identityMeta = Option.match(identity, {
          onSome: (i) => ({ verified: true, ...(Option.isSome(i.sub) ? { sub: i.sub.value } : {}) }),
          onNone: () => ({ verified: false })
        })
        const agentId = row.definition.target.agent_id
        // a lead or ticket target always names its agent (checked when the form was written)
        if (agentId === null) {
          return yield* Effect.dieMessage(`form ${row.id} targets ${row.definition.target.type}s without an agent`)
        }
        if (row.definition.target.type === "lead") {
          const rest: Record<string, string | boolean> = {}
          for (const [k, v] of values) if (k !== "email" && k !== "name") rest[k] = v
          const lead = yield* leads.captureLeadFromForm({
            tenant: caller,
            formId: row.id,
            agentId,
            email: email ?? null,
            name: name?.slice(0, 200) ?? null,
            fields: rest,
            page: origin ?? null,
            identityVerified: identityMeta.verified
          })
          return { object: "form_submission", form_id: row.id, lead: { id: lead.id } } satisfies SubmitResult
        }
        // everything but name and e-mail goes into the first message, which erasure scrubs
        const lines: Array<string> = []
        const bodyText = str("body")
        if (bodyText !== undefined) lines.push(bodyText, "")
        for (const f of fields) {
          if (f.id === "name" || f.id === "email" || f.id === "subject" || f.id === "body" || f === firstEmailField) continue
          const v = values.get(f.id)
          if (v === undefined) continue
          lines.push(`${labelOf(f)}: ${typeof v === "boolean" ? (v ? "yes" : "no") : v}`)
        }
        const message = lines.join("\n").trim()
        const input: CreateTicket = {
          agent_id: agentId,
          subject: (str("subject") ?? textOf(row.definition.title)).slice(0, 500),
          ...(message === "" ? {} : { body: message.slice(0, 20_000) }),
          origin: "form",
          visitor_name: name?.slice(0, 200) ?? null,
          visitor_email: email ?? null,
          metadata: { form_id: row.id, identity: identityMeta }
        }
        const ticket = yield* tickets.create({ caller, memberId: Option.none() }, input)
        return { object: "form_submission", form_id: row.id, ticket: { public_id: ticket.public_id } } satisfies SubmitResult
      })

    return { corsOrigin, config, submit } as const
  }),
  dependencies: [FormsRepo.Default, IdentitySecrets.Default]
}) {}
