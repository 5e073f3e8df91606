/**
 * A browser component's script (the form's, the chat's): bundled from its entry with esbuild (one minified ES
 * module, es2020) and served as a public, cacheable script any page may load. The file `npm run build` writes
 * beside the bundled server is served when it exists; otherwise (tests and tools running the sources) the first
 * request bundles in-process and the bytes are kept in memory.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type { PathInput } from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { dirname } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { matchesEtag } from "./Etag.js"

export const gzippedSize = (bytes: Uint8Array) => gzipSync(bytes, { level: 9 }).byteLength

export interface BrowserScriptOptions {
  /** What the component is, for messages: "form component". */
  readonly name: string
  /** Its source entry (`src/<area>/element/index.ts`). */
  readonly entry: string
  /** The path it is served at. */
  readonly servedAt: PathInput
  /** Where `npm run build` puts it, relative to `dist/` (and so to the bundled server's modules). */
  readonly builtFile: string
  /** Its budget gzipped: the build fails past it. */
  readonly maxGzipBytes?: number
}

export const browserScript = (options: BrowserScriptOptions) => {
  /** Beside the running module: in `dist/`, the built file; from the sources, nothing (bundled on demand). */
  const prebuilt = fileURLToPath(new URL(options.builtFile, import.meta.url))

  /** The bundle's bytes. esbuild is loaded only when called: a service serving the prebuilt file never starts it. */
  const bundle = Effect.tryPromise(async () => {
    const esbuild = await import("esbuild")
    const result = await esbuild.build({
      entryPoints: [options.entry],
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
  }).pipe(Effect.orDieWith((cause) => new Error(`bundling the ${options.name} failed: ${String(cause)}`)))

  /** Writes the bundle to `outFile`; for the build. Fails past the budget. */
  const write = (outFile: string) =>
    Effect.flatMap(bundle, (bytes) =>
      Effect.promise(async () => {
        const gzipped = gzippedSize(bytes)
        if (options.maxGzipBytes !== undefined && gzipped > options.maxGzipBytes) {
          throw new Error(`the ${options.name}'s script is ${gzipped} bytes gzipped, over its ${options.maxGzipBytes} budget`)
        }
        await mkdir(dirname(outFile), { recursive: true })
        await writeFile(outFile, bytes)
        return { path: outFile, bytes: bytes.byteLength, gzipped }
      })
    )

  const load = Effect.tryPromise(() => readFile(prebuilt)).pipe(
    Effect.map((buffer) => new Uint8Array(buffer)),
    Effect.orElse(() => bundle),
    Effect.map((bytes) => ({ bytes, etag: `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"` }))
  )

  /** The file name is not hashed, so caches keep it a short while and then revalidate with the ETag (a `304` costs no body). */
  const headersOf = (etag: string) => ({
    etag,
    "cache-control": "public, max-age=300, must-revalidate",
    "access-control-allow-origin": "*",
    "cross-origin-resource-policy": "cross-origin",
    "x-content-type-options": "nosniff"
  })

  const routes = HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const script = yield* Effect.cached(load)
      yield* router.get(
        options.servedAt,
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const { bytes, etag } = yield* script
          if (matchesEtag(request.headers["if-none-match"], etag)) {
            return HttpServerResponse.empty({ status: 304, headers: headersOf(etag) })
          }
          return HttpServerResponse.uint8Array(bytes, { contentType: "text/javascript; charset=utf-8", headers: headersOf(etag) })
        })
      )
    })
  )

  return { bundle, write, routes } as const
}
