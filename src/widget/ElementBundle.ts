/**
 * The `<service-chat>` script: bundled from `src/widget/element/` with esbuild
 * (one minified ES module, es2020) and served as a public, cacheable script
 * beside the form's, as the form's is: the file `npm run build` writes is
 * served when it exists, else the first request bundles in-process. The build
 * fails when the script is over its gzipped budget.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { matchesEtag } from "../forms/Rules.js"

/** Where the script is served (beside `service-form-element.esm.js`). */
export const chatElementPath = "/storage/v1/object/public/widget/v1/service-chat-element.esm.js"

/** The script's budget, gzipped (issue 54: at most 30 KB). */
export const maxChatScriptGzipBytes = 30 * 1024

const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url))
export const chatElementEntry = join(repositoryRoot, "src/widget/element/index.ts")
/** Where `npm run build` puts the component, relative to `dist/` (and so to the bundled server). */
export const builtChatElementFile = "widget/v1/service-chat-element.esm.js"
const prebuiltChatElement = fileURLToPath(new URL(builtChatElementFile, import.meta.url))

/** The bundle's bytes. esbuild is loaded only when called: a service serving the prebuilt file never starts it. */
export const bundleChatElement = Effect.tryPromise(async () => {
  const esbuild = await import("esbuild")
  const result = await esbuild.build({
    entryPoints: [chatElementEntry],
    bundle: true,
    minify: true,
    format: "esm",
    target: "es2020",
    platform: "browser",
    legalComments: "none",
    write: false,
    logLevel: "silent"
  })
  return result.outputFiles[0]!.contents
}).pipe(Effect.orDieWith((cause) => new Error(`bundling the chat component failed: ${String(cause)}`)))

export const gzippedSize = (bytes: Uint8Array) => gzipSync(bytes, { level: 9 }).byteLength

/** Writes the bundle to `outFile`; for the build. Fails past the size budget. */
export const writeChatElementBundle = (outFile: string) =>
  Effect.flatMap(bundleChatElement, (bytes) =>
    Effect.promise(async () => {
      const gzipped = gzippedSize(bytes)
      if (gzipped > maxChatScriptGzipBytes) {
        throw new Error(`the chat component's script is ${gzipped} bytes gzipped, over its ${maxChatScriptGzipBytes} budget`)
      }
      await mkdir(dirname(outFile), { recursive: true })
      await writeFile(outFile, bytes)
      return { path: outFile, bytes: bytes.byteLength, gzipped }
    })
  )

interface Served {
  readonly bytes: Uint8Array
  readonly etag: string
}

const load: Effect.Effect<Served> = Effect.tryPromise(() => readFile(prebuiltChatElement)).pipe(
  Effect.map((buffer) => new Uint8Array(buffer)),
  Effect.orElse(() => bundleChatElement),
  Effect.map((bytes) => ({
    bytes,
    etag: `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`
  }))
)

/** As the form's: a short while in caches, then revalidated with the ETag; any origin may load it. */
const headersOf = (etag: string) => ({
  etag,
  "cache-control": "public, max-age=300, must-revalidate",
  "access-control-allow-origin": "*",
  "cross-origin-resource-policy": "cross-origin",
  "x-content-type-options": "nosniff"
})

export const ChatElementRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const element = yield* Effect.cached(load)
    yield* router.get(
      chatElementPath,
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const { bytes, etag } = yield* element
        if (matchesEtag(request.headers["if-none-match"], etag)) {
          return HttpServerResponse.empty({ status: 304, headers: headersOf(etag) })
        }
        return HttpServerResponse.uint8Array(bytes, {
          contentType: "text/javascript; charset=utf-8",
          headers: headersOf(etag)
        })
      })
    )
  })
)
