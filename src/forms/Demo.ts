/**
 * `GET /demo/forms/{form_id}?key=pk_test_…`: a page of the service that shows a
 * sandbox form through the real `<service-form>` component, with a log of its
 * events, so a person sees it working in one click. Only sandbox forms: the key
 * must be a `pk_test_` forms key of the form's workspace. A refusal is content-
 * negotiated: a browser navigating here (`Accept` with `text/html`) gets an error
 * page that says what to fix, anyone else (an API client, curl, a fuzzer) the
 * error envelope, like every other refusal of the service. Every value placed in
 * the HTML is escaped.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { MissingAuthorization, ResourceMissing } from "../../schema/Errors.js"
import { FormId } from "../../schema/Forms.js"
import { elementPath } from "./ElementBundle.js"
import { FormSubmissions } from "./Submit.js"

export const demoPath = "/demo/forms/:form_id"

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:44rem;padding:0 1rem;color:#1f2937}
code,pre{background:#f3f4f6;border-radius:4px;padding:.1rem .3rem}pre{padding:.8rem;overflow:auto;font-size:.85rem}
.warn{background:#fef3c7;padding:.6rem .8rem;border-radius:6px}</style></head>
<body>${body}</body></html>`

const headers = {
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  // the page's one inline script is the event log; the component is loaded from this service
  "content-security-policy": "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
}

const htmlResponse = (html: string, status = 200) =>
  HttpServerResponse.text(html, { status, contentType: "text/html; charset=utf-8", headers })

const errorPage = (status: number, message: string) =>
  HttpServerResponse.setHeader(
    htmlResponse(page("Form demo", `<h1>Form demo unavailable</h1><p>${escapeHtml(message)}</p>`), status),
    "vary",
    "Accept"
  )

/** The refusal as the caller asked for it: the page for a browser, else the failure, encoded as the envelope. */
const refuse = (request: HttpServerRequest.HttpServerRequest, failure: MissingAuthorization | ResourceMissing) =>
  /\btext\/html\b/i.test(request.headers["accept"] ?? "")
    ? Effect.succeed(errorPage(failure instanceof MissingAuthorization ? MissingAuthorization.status : ResourceMissing.status, failure.message))
    : Effect.fail(failure)

const notFound = (request: HttpServerRequest.HttpServerRequest, message: string) =>
  refuse(request, new ResourceMissing({ message }))

const demoPage = (formId: string, key: string, originNote: string | undefined) =>
  htmlResponse(
    page(
      "Form demo",
      `<h1>Form demo</h1>
<p>Sandbox form <code>${escapeHtml(formId)}</code>, drawn by the <code>&lt;service-form&gt;</code> component as a site would embed it. Submissions create sandbox tickets.</p>
${originNote === undefined ? "" : `<p class="warn">${escapeHtml(originNote)}</p>`}
<script type="module" src="${escapeHtml(elementPath)}"></script>
<service-form api-key="${escapeHtml(key)}" form-id="${escapeHtml(formId)}"></service-form>
<h2>Events</h2>
<pre id="log" aria-live="polite"></pre>
<script>
for (const type of ["service-form:loading", "service-form:ready", "service-form:success", "service-form:error"]) {
  document.addEventListener(type, (event) => {
    const detail = type === "service-form:ready" ? { formId: event.detail.formId, fields: event.detail.fields.length } : event.detail
    document.getElementById("log").textContent += type + " " + JSON.stringify(detail) + "\\n"
  })
}
</script>`
    )
  )

const decodeFormId = Schema.decodeUnknownOption(FormId)

export const DemoRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const submissions = yield* FormSubmissions
    yield* router.get(
      demoPath,
      Effect.gen(function* () {
        const { params } = yield* HttpRouter.RouteContext
        const request = yield* HttpServerRequest.HttpServerRequest
        const formId = decodeFormId(params["form_id"])
        if (Option.isNone(formId)) return yield* notFound(request, "There is no form with this id.")
        const key = new URL(request.url, "http://demo").searchParams.get("key")?.trim() ?? ""
        if (key === "") {
          return yield* refuse(
            request,
            new MissingAuthorization({ message: "Add the form's sandbox key to the address: ?key=pk_test_…", param: "key" })
          )
        }
        if (!key.startsWith("pk_test_")) {
          return yield* notFound(request, "The demo page shows sandbox forms only: use a pk_test_ forms key.")
        }
        const ip = Option.getOrElse(request.remoteAddress, () => "unknown")
        const found = yield* submissions.config({ formId: formId.value, key, origin: undefined, ip }).pipe(
          Effect.map((config) => Option.some(config.data)),
          Effect.catchTags({
            MissingAuthorization: () => Effect.succeed(Option.none()),
            InvalidApiKey: () => Effect.succeed(Option.none()),
            KeyScopeMismatch: () => Effect.succeed(Option.none()),
            ResourceMissing: () => Effect.succeed(Option.none())
          })
        )
        if (Option.isNone(found) || found.value.livemode) {
          return yield* notFound(request, "No sandbox form with this id for this key (a pk_test_ forms key of the form's workspace).")
        }
        // a same-origin POST still carries `Origin`: say so when the form would refuse it
        const host = request.headers["host"]
        const origin = host === undefined ? undefined : `http://${host}`
        const allowed = origin === undefined ? true : Option.isSome(yield* submissions.corsOrigin(formId.value, origin))
        const note = allowed
          ? undefined
          : `Submissions from this page come from the origin ${origin}, which this form's allowed_origins does not list: add it (or leave the list empty) to submit from here.`
        return demoPage(formId.value, key, note)
      })
    )
  })
)
