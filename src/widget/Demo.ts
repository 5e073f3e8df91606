/**
 * `GET /demo/chat?agent=agt_…&key=widget_pk_test_…`: a page of the service that
 * embeds the real `<service-chat>` component for a sandbox agent, so a person
 * sees the widget work in one click (the page beside `/demo/forms`). Only
 * sandbox keys (`widget_pk_test_`); the component itself says when the key or
 * agent is wrong. A refusal is content-negotiated as the form demo's: an HTML
 * page for a browser, the error envelope for anyone else. Every value placed
 * in the HTML is escaped; the page has no inline script, so its CSP is strict.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { MissingAuthorization, ParameterMissing, ResourceMissing } from "../../schema/Errors.js"
import { AgentId } from "../../schema/Ids.js"
import { WidgetOrigins } from "../http/Cors.js"
import { chatElementPath } from "./ElementBundle.js"

export const chatDemoPath = "/demo/chat"

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title></head>
<body>${body}</body></html>`

/** Nothing inline at all: the component's styles are adopted sheets, which a CSP does not govern. */
const headers = {
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

const htmlResponse = (html: string, status = 200) =>
  HttpServerResponse.text(html, { status, contentType: "text/html; charset=utf-8", headers })

const wantsHtml = (request: HttpServerRequest.HttpServerRequest) => /\btext\/html\b/i.test(request.headers["accept"] ?? "")

const refuse = (
  request: HttpServerRequest.HttpServerRequest,
  failure: MissingAuthorization | ResourceMissing | ParameterMissing,
  status: number
) =>
  wantsHtml(request)
    ? Effect.succeed(
        HttpServerResponse.setHeader(
          htmlResponse(page("Chat demo", `<h1>Chat demo unavailable</h1><p>${escapeHtml(failure.message)}</p>`), status),
          "vary",
          "Accept"
        )
      )
    : Effect.fail(failure)

const demoPage = (agentId: string, key: string, originNote: string | undefined) =>
  htmlResponse(
    page(
      "Chat demo",
      `<h1>Chat demo</h1>
<p>Sandbox agent <code>${escapeHtml(agentId)}</code>, drawn by the <code>&lt;service-chat&gt;</code> component as a site embeds it: the launcher is at the bottom of the page.</p>
${originNote === undefined ? "" : `<p><strong>${escapeHtml(originNote)}</strong></p>`}
<p>The snippet:</p>
<pre>${escapeHtml(`<script type="module" src="{base_url}${chatElementPath}"></script>\n<service-chat api-key="${key}" agent-id="${agentId}"></service-chat>`)}</pre>
<script type="module" src="${escapeHtml(chatElementPath)}"></script>
<service-chat api-key="${escapeHtml(key)}" agent-id="${escapeHtml(agentId)}" open></service-chat>`
    )
  )

const decodeAgentId = Schema.decodeUnknownOption(AgentId)

export const ChatDemoRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const origins = yield* WidgetOrigins
    yield* router.get(
      chatDemoPath,
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const query = new URL(request.url, "http://demo").searchParams
        const agent = query.get("agent")?.trim() ?? ""
        if (agent === "") {
          return yield* refuse(request, new ParameterMissing({ message: "Add the agent to the address: ?agent=agt_…&key=widget_pk_test_…", param: "agent" }), 400)
        }
        const agentId = decodeAgentId(agent)
        if (Option.isNone(agentId)) return yield* refuse(request, new ResourceMissing({ message: "There is no agent with this id.", param: "agent" }), 404)
        const key = query.get("key")?.trim() ?? ""
        if (key === "") {
          return yield* refuse(
            request,
            new MissingAuthorization({ message: "Add the workspace's sandbox widget key to the address: &key=widget_pk_test_…", param: "key" }),
            401
          )
        }
        if (!key.startsWith("widget_pk_test_")) {
          return yield* refuse(request, new ResourceMissing({ message: "The demo page shows sandbox agents only: use a widget_pk_test_ key.", param: "key" }), 404)
        }
        // the component's calls come from this page's origin: say so when the agent would refuse them
        const host = request.headers["host"]
        const origin = host === undefined ? undefined : `http://${host}`
        const allowed = origin === undefined ? true : (yield* origins.allowedOrigins(agentId.value)).includes(origin)
        const note = allowed
          ? undefined
          : `The chat's calls come from this page's origin ${origin}, which this agent's allowed_origins does not list: add it (PATCH /v1/agents/${agentId.value}) to chat from here.`
        return demoPage(agentId.value, key, note)
      })
    )
  })
)
