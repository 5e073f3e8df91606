/**
 * HTTP handlers of the forms groups, and the CORS preflights of the two form
 * endpoints. CORS headers are added to whatever the response turns out to be
 * (errors included, so a page can read why it was refused), for an `Origin` the
 * form allows.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { FormId } from "../../schema/Forms.js"
import { ok, okList, runsToCompletion } from "../http/Envelope.js"
import { Forms } from "./Forms.js"
import { IdentitySecrets } from "./Identity.js"
import { matchesEtag } from "../http/Etag.js"
import { FormSubmissions } from "./Submit.js"

export const FormsHttp = HttpApiBuilder.group(Api, "forms", (handlers) =>
  Effect.gen(function* () {
    const forms = yield* Forms
    const identities = yield* IdentitySecrets
    return handlers
      .handle(
        "create",
        ({ payload }) => Effect.flatMap(Caller, (c) => forms.create(c, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(Caller, (c) => forms.list(c, urlParams)).pipe(
          Effect.flatMap(({ forms, pagination }) => okList(forms, pagination))
        )
      )
      .handle("retrieve", ({ path }) => Effect.flatMap(Caller, (c) => forms.retrieve(c, path.id)).pipe(Effect.flatMap(ok)))
      .handle(
        "update",
        ({ path, payload }) => Effect.flatMap(Caller, (c) => forms.update(c, path.id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "delete",
        ({ path }) => Effect.flatMap(Caller, (c) => forms.remove(c, path.id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "rotateIdentitySecret",
        () => Effect.flatMap(Caller, (c) => identities.rotate(c)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
  })
)

export const FormsPublicHttp = HttpApiBuilder.group(Api, "formsPublic", (handlers) =>
  Effect.gen(function* () {
    const submissions = yield* FormSubmissions
    const request = (formId: FormId, headers: { readonly "service-api-key"?: string | undefined; readonly origin?: string | undefined }) =>
      Effect.map(HttpServerRequest.HttpServerRequest, (r) => ({
        formId,
        key: headers["service-api-key"],
        origin: headers.origin,
        ip: Option.getOrElse(r.remoteAddress, () => "unknown"),
        acceptLanguage: r.headers["accept-language"]
      }))

    return handlers
      .handle("config", ({ headers, path }) =>
        Effect.gen(function* () {
          const { data, etag } = yield* submissions.config(yield* request(path.form_id, headers))
          const cache = {
            etag,
            "cache-control": "public, max-age=60, must-revalidate",
            vary: "Origin, Service-Api-Key"
          }
          if (matchesEtag(headers["if-none-match"], etag)) return HttpServerResponse.empty({ status: 304, headers: cache })
          const body = yield* ok(data)
          return HttpServerResponse.unsafeJson(body, { headers: cache })
        })
      )
      .handle(
        "submit",
        ({ headers, path, payload }) =>
          Effect.gen(function* () {
            const outcome = yield* submissions.submit(yield* request(path.form_id, headers), payload)
            if (outcome._tag === "Dropped") return HttpServerResponse.empty({ status: 204 })
            const body = yield* ok(outcome.result)
            return HttpServerResponse.unsafeJson(body, { status: 201 })
          }),
        runsToCompletion
      )
  })
)

const decodeFormId = Schema.decodeUnknownOption(FormId)

/** `OPTIONS` on the two form endpoints: a browser asks before sending `Service-Api-Key` across origins. */
const preflight = (submissions: FormSubmissions, method: "GET" | "POST") =>
  Effect.gen(function* () {
    const { params } = yield* HttpRouter.RouteContext
    const req = yield* HttpServerRequest.HttpServerRequest
    const id = decodeFormId(params["form_id"])
    const origin = Option.isSome(id) ? yield* submissions.corsOrigin(id.value, req.headers["origin"]) : Option.none()
    return HttpServerResponse.empty({
      status: 204,
      headers: Option.match(origin, {
        onNone: () => ({ vary: "Origin" }),
        onSome: (o) => ({
          "access-control-allow-origin": o,
          "access-control-allow-methods": `${method}, OPTIONS`,
          "access-control-allow-headers": "Service-Api-Key, Content-Type, If-None-Match",
          "access-control-max-age": "600",
          vary: "Origin"
        })
      })
    })
  })

export const FormsPreflightRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const submissions = yield* FormSubmissions
    yield* router.options("/v1/forms/:form_id/config", preflight(submissions, "GET"))
    yield* router.options("/api/forms/:form_id/submit", preflight(submissions, "POST"))
  })
)
