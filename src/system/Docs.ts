/**
 * The human docs pages: `/docs`, Scalar's reference of the contract, and `/docs/errors`, every error code
 * (the target of `doc_url`).
 *
 * Scalar's page loads its two typefaces from the vendor's font host by default: every reader's browser would
 * ask a third party for them (telling it who reads these docs), and offline they fail. It is served with the
 * system's own fonts instead, and under a Content-Security-Policy like the console's: nothing from another
 * origin, and no script but the page's own two inline ones (by their hashes), so nothing in Scalar's bundle
 * (its request proxy, its sharing service) can reach another host either.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { createHash } from "node:crypto"
import { Api } from "../../schema/Api.js"
import { ErrorCatalog } from "../../schema/Errors.js"

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** The catalog's descriptions are Markdown with `code` spans (the README shows them as such): render those. */
export const inlineMarkdown = (s: string) =>
  s
    .split(/(`[^`]*`)/)
    .map((part) =>
      part.length > 1 && part.startsWith("`") && part.endsWith("`")
        ? `<code>${escapeHtml(part.slice(1, -1))}</code>`
        : escapeHtml(part)
    )
    .join("")

/** `/docs/errors`: every error code with its status, the target of `doc_url`. */
const errorsPage = HttpServerResponse.html(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Error codes</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem}
td,th{padding:.35rem .6rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}code{font-size:.95em}</style>
</head><body><h1>Error codes</h1>
<p>Every error body is <code>{"error": {"type", "code", "message", "param", "doc_url"}, "meta": {"request_id"}}</code>.</p>
<table><tr><th>Code</th><th>Status</th><th>Type</th><th>Meaning</th></tr>
${ErrorCatalog.map(
  (c) =>
    `<tr id="${c.code}"><td><code>${c.code}</code></td><td>${c.status}</td><td>${c.type}</td><td>${inlineMarkdown(c.description)}</td></tr>`
).join("\n")}
</table></body></html>`)

/** Scalar's variables for its two typefaces, set to the system's (its own fonts are not loaded). */
const systemFonts = `:root, .light-mode, .dark-mode {
  --scalar-font: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --scalar-font-code: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
}`

/** An icon in the page itself, so a browser does not ask for `/favicon.ico` (a `404` in every reader's console). */
const favicon =
  "data:image/svg+xml," +
  encodeURIComponent(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2563eb"/></svg>`)

/** The inline scripts of `html` that run (not the JSON document, which is data), as CSP hash sources. */
export const inlineScriptHashes = (html: string): ReadonlyArray<string> =>
  [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    (m) => `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`
  )

/**
 * Nothing from another origin. Scalar sets styles inline as it draws, so styles may be inline; its requests
 * ("Test Request") go only to this service.
 */
export const docsPolicy = (scriptHashes: ReadonlyArray<string>) =>
  [
    "default-src 'none'",
    // Scalar compiles a WebAssembly module of its own (no `eval` of script text is allowed)
    `script-src 'wasm-unsafe-eval' ${scriptHashes.join(" ")}`,
    "style-src 'self' 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")

/** Scalar's response with the policy for its own scripts and the headers the console sends. */
const withPolicy = (response: HttpServerResponse.HttpServerResponse) => {
  const html = response.body._tag === "Uint8Array" ? new TextDecoder().decode(response.body.body) : ""
  return HttpServerResponse.setHeaders(response, {
    "content-security-policy": docsPolicy(inlineScriptHashes(html)),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer"
  })
}

/**
 * `/docs`, Scalar's API reference. Its page inlines megabytes of script and the whole OpenAPI document, so its
 * module is loaded and the page made (and its scripts hashed) on the first visit, not at start.
 */
const ScalarRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const page = yield* Effect.cached(
      Effect.promise(() => import("@effect/platform/HttpApiScalar")).pipe(
        Effect.flatMap((Scalar) =>
          HttpLayerRouter.toHttpEffect(
            Scalar.layerHttpLayerRouter({
              api: Api,
              path: "/docs",
              scalar: { withDefaultFonts: false, customCss: systemFonts, favicon }
            })
          )
        ),
        Scope.extend(scope),
        // the page is the same for everyone: its scripts are hashed once
        Effect.flatMap((handler) => Effect.cached(Effect.map(handler, withPolicy)))
      )
    )
    yield* router.get("/docs", Effect.scoped(Effect.flatten(page)))
  })
)

export const DocsRoutes = Layer.mergeAll(
  ScalarRoute,
  HttpApiBuilder.Router.use((router) => router.get("/docs/errors", Effect.succeed(errorsPage)))
)
