/**
 * The admin console at `/console`: a single page (`src/console/app/`, Preact)
 * that calls the public API with the secret key its user signs in with. Like
 * the form component, the script `npm run build` writes into `dist/console/`
 * is served when present; otherwise the first request bundles it in-process.
 * The page runs under a strict Content-Security-Policy: its own script and
 * stylesheet only, no inline code, requests to this origin only. The script is
 * split: an entry (`app.js`: the shell, the shared components) and a chunk per
 * page imported when the page is opened, served the same way beside it.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { elementPath } from "../forms/ElementBundle.js"
import { matchesEtag } from "../http/Etag.js"

export const consolePath = "/console"
const entryPath = "/console/app.js"
/** The console's scripts: the entry `app.js` and the chunks of its pages. */
const scriptPath = "/console/:file"
const stylePath = "/console/app.css"
/** The forms editor's live preview: a page of its own, framed by the console (the component writes `<style>` elements). */
export const formPreviewPath = "/console/form-preview"

const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url))
export const consoleEntry = join(repositoryRoot, "src/console/app/main.tsx")
const consoleStyles = join(repositoryRoot, "src/console/app/console.css")
/** The chart library's own rules, bundled into the console's stylesheet (the CSP allows no injected `<style>`). */
const chartStyles = () => createRequire(import.meta.url).resolve("uplot/dist/uPlot.min.css")
/** Where `npm run build` puts the console, relative to `dist/` (and so to the bundled server). */
export const builtConsoleDir = "console"
const prebuilt = (file: string) => fileURLToPath(new URL(`${builtConsoleDir}/${file}`, import.meta.url))

/** The script's budget, gzipped. */
export const maxScriptGzipBytes = 150 * 1024

interface Assets {
  /** The entry script `app.js` and the chunks it imports on demand (`chunk-*.js`), by file name. */
  readonly scripts: ReadonlyMap<string, Uint8Array>
  readonly style: Uint8Array
}

/** The entry's file; the pages are chunks beside it, named by their content's hash. */
const entryFile = "app.js"
const scriptFile = /^(app|chunk-[A-Z0-9]{8,})\.js$/

/** The console's scripts and stylesheet. esbuild is loaded only when called. */
export const bundleConsole: Effect.Effect<Assets> = Effect.tryPromise(async () => {
  const esbuild = await import("esbuild")
  const result = await esbuild.build({
    entryPoints: { app: consoleEntry },
    // a path for esbuild to name the chunks by; nothing is written there
    outdir: join(repositoryRoot, "dist", builtConsoleDir),
    splitting: true,
    chunkNames: "chunk-[hash]",
    bundle: true,
    minify: true,
    format: "esm",
    target: "es2020",
    platform: "browser",
    jsx: "automatic",
    jsxImportSource: "preact",
    legalComments: "none",
    write: false,
    logLevel: "silent"
  })
  const style = `${await readFile(chartStyles(), "utf8")}\n${await readFile(consoleStyles, "utf8")}`
  const scripts = new Map(result.outputFiles.map((file) => [basename(file.path), file.contents] as const))
  return { scripts, style: new TextEncoder().encode(style) }
}).pipe(Effect.orDieWith((cause) => new Error(`bundling the console failed: ${String(cause)}`)))

const sizeOf = (bytes: Uint8Array) => ({ bytes: bytes.byteLength, gzipped: gzipSync(bytes, { level: 9 }).byteLength })

/**
 * Writes the console into `outDir`; for the build. Fails when the entry script (what every page loads) is past
 * the size budget; the chunks, each loaded with its pages, are only measured.
 */
export const writeConsoleBundle = (outDir: string) =>
  Effect.flatMap(bundleConsole, ({ scripts, style }) =>
    Effect.promise(async () => {
      const entry = sizeOf(scripts.get(entryFile)!)
      if (entry.gzipped > maxScriptGzipBytes) {
        throw new Error(`the console's entry script is ${entry.gzipped} bytes gzipped, over its ${maxScriptGzipBytes} budget`)
      }
      await rm(outDir, { recursive: true, force: true })
      await mkdir(outDir, { recursive: true })
      for (const [file, bytes] of scripts) await writeFile(join(outDir, file), bytes)
      await writeFile(join(outDir, "app.css"), style)
      const chunks = [...scripts].filter(([file]) => file !== entryFile).map(([file, bytes]) => ({ file, ...sizeOf(bytes) }))
      return { ...entry, chunks }
    })
  )

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${stylePath}">
<script type="module" src="${entryPath}"></script>
</head><body><div id="app"><p class="boot">Loading the console…</p></div></body></html>
`

const load: Effect.Effect<Assets> = Effect.tryPromise(async () => {
  const files = (await readdir(prebuilt(""))).filter((file) => scriptFile.test(file))
  if (!files.includes(entryFile)) throw new Error("no prebuilt console")
  const scripts = new Map(await Promise.all(files.map(async (file) => [file, new Uint8Array(await readFile(prebuilt(file)))] as const)))
  return { scripts, style: new Uint8Array(await readFile(prebuilt("app.css"))) }
}).pipe(Effect.orElse(() => bundleConsole))

const etagOf = (bytes: Uint8Array) => `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`

/** Nothing inline, nothing from elsewhere; the API is on this origin. */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

const securityHeaders = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin"
}

const escape = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;")

/**
 * The `<service-form>` of `form_id` drawn with the public forms key `key`, as
 * a site embeds it; nothing but the component's script runs on the page.
 */
const formPreview = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const params = new URL(request.url, "http://console").searchParams
  const formId = params.get("form_id") ?? ""
  const key = params.get("key") ?? ""
  const locale = params.get("locale") === "es" ? "es" : "en"
  const headers = {
    ...securityHeaders,
    "content-security-policy": [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self' 'unsafe-inline'",
      "connect-src 'self'",
      "img-src 'self' data:",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'self'"
    ].join("; "),
    "x-frame-options": "SAMEORIGIN",
    "cache-control": "no-store"
  }
  if (!/^frm_[A-Za-z0-9]{8,64}$/.test(formId) || !/^pk_(test|live)_[A-Za-z0-9]{8,128}$/.test(key)) {
    return HttpServerResponse.text("form_id (frm_...) and key (a forms key, pk_...) are required", { status: 400, headers })
  }
  return HttpServerResponse.text(
    `<!doctype html>
<html lang="${locale}"><head><meta charset="utf-8"><title>Form preview</title><link rel="icon" href="data:,">
<script type="module" src="${elementPath}"></script></head>
<body><service-form api-key="${escape(key)}" form-id="${escape(formId)}" locale="${locale}"></service-form></body></html>
`,
    { contentType: "text/html; charset=utf-8", headers }
  )
})

const asset = (bytes: Uint8Array, contentType: string) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const etag = etagOf(bytes)
    const headers = { ...securityHeaders, etag, "cache-control": "no-cache" }
    if (matchesEtag(request.headers["if-none-match"], etag)) return HttpServerResponse.empty({ status: 304, headers })
    return HttpServerResponse.uint8Array(bytes, { contentType, headers })
  })

export const ConsoleRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const assets = yield* Effect.cached(load)
    const html = HttpServerResponse.text(page, {
      contentType: "text/html; charset=utf-8",
      headers: { ...securityHeaders, "cache-control": "no-store" }
    })
    yield* router.get(consolePath, Effect.succeed(html))
    yield* router.get(formPreviewPath, formPreview)
    // the entry and its chunks alike: one route, the file named in the path (a name the build gives, or 404)
    yield* router.get(
      scriptPath,
      Effect.gen(function* () {
        const { params } = yield* HttpRouter.RouteContext
        const file = params["file"] ?? ""
        const script = scriptFile.test(file) ? (yield* assets).scripts.get(file) : undefined
        if (script === undefined) return HttpServerResponse.text("Not found", { status: 404, headers: { ...securityHeaders, "cache-control": "no-store" } })
        return yield* asset(script, "text/javascript; charset=utf-8")
      })
    )
    yield* router.get(stylePath, Effect.flatMap(assets, (a) => asset(a.style, "text/css; charset=utf-8")))
  })
)
