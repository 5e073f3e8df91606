/**
 * The `<service-form>` script: bundled from `src/forms/element/` with esbuild
 * (one minified ES module, es2020) and served as a public, cacheable script.
 * The file `npm run build` writes beside the bundled server is served when it
 * exists; otherwise (tests and tools running the sources) the first request
 * bundles in-process and the bytes are kept in memory.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { matchesEtag } from "./Rules.js"

/** Where the script is served (SPEC: `{base_url}/storage/v1/object/public/widget/v1/`). */
export const elementPath = "/storage/v1/object/public/widget/v1/service-form-element.esm.js"

const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url))
export const elementEntry = join(repositoryRoot, "src/forms/element/index.ts")
/** Where `npm run build` puts the component, relative to `dist/` (and so to the bundled server). */
export const builtElementFile = "widget/v1/service-form-element.esm.js"
/** Beside the running module: in `dist/`, the built file; from the sources, nothing (bundled on demand). */
export const prebuiltElement = fileURLToPath(new URL(builtElementFile, import.meta.url))

/** The bundle's bytes. esbuild is loaded only when called: a service serving the prebuilt file never starts it. */
export const bundleElement = Effect.tryPromise(async () => {
  const esbuild = await import("esbuild")
  const result = await esbuild.build({
    entryPoints: [elementEntry],
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
}).pipe(Effect.orDieWith((cause) => new Error(`bundling the form component failed: ${String(cause)}`)))

/** Writes the bundle to `outFile`; for the build. */
export const writeElementBundle = (outFile: string) =>
  Effect.flatMap(bundleElement, (bytes) =>
    Effect.promise(async () => {
      await mkdir(dirname(outFile), { recursive: true })
      await writeFile(outFile, bytes)
      return { path: outFile, bytes: bytes.byteLength }
    })
  )

interface Served {
  readonly bytes: Uint8Array
  readonly etag: string
}

const load: Effect.Effect<Served> = Effect.tryPromise(() => readFile(prebuiltElement)).pipe(
  Effect.map((buffer) => new Uint8Array(buffer)),
  Effect.orElse(() => bundleElement),
  Effect.map((bytes) => ({
    bytes,
    etag: `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`
  }))
)

/**
 * The file name is not hashed, so caches keep it a short while and then
 * revalidate with the ETag (a `304` costs no body).
 */
const headersOf = (etag: string) => ({
  etag,
  "cache-control": "public, max-age=300, must-revalidate",
  "access-control-allow-origin": "*",
  "cross-origin-resource-policy": "cross-origin",
  "x-content-type-options": "nosniff"
})

export const ElementRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const element = yield* Effect.cached(load)
    yield* router.get(
      elementPath,
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
