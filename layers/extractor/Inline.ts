/**
 * The Extractor's test layer: the same readers on the calling thread, without
 * limits, for tests of programs; `extract` may be replaced (one that fails or
 * dies on cue). Kept out of the service's imports, so the bundle has no chunk
 * that only tests would load.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ExtractError, Extractor, type ExtractorShape } from "../Extractor.js"

/**
 * The same readers on the calling thread, for tests of programs (and tools)
 * that need no limits; `extract` may be replaced (one that fails or dies on cue).
 */
export const layerInline = (options: { readonly extract?: ExtractorShape["extract"] } = {}): Layer.Layer<Extractor> =>
  Layer.succeed(
    Extractor,
    Extractor.of({
      extract:
        options.extract ??
        ((request) =>
          Effect.tryPromise({
            try: async () => (await import("./Documents.js")).extract(request.kind, request.bytes, request.fallbackTitle),
            catch: (cause) => new ExtractError({ reason: "unreadable", message: cause instanceof Error ? cause.message : "the document could not be read" })
          })),
      csvQa: (content) => Effect.promise(async () => (await import("./Csv.js")).parseCsvQa(content)),
      audioSeconds: (bytes, audio) =>
        Effect.promise(async () => Option.fromNullable((await import("./AudioDuration.js")).audioSeconds(bytes, audio))),
      links: (page) => Effect.promise(async () => (await import("./Links.js")).readLinks(page.bytes, page.url, page.robot)),
      sitemap: (bytes, limits) => Effect.promise(async () => (await import("./Sitemap.js")).parseSitemap(bytes, limits))
    })
  )
