/**
 * Extractor: what the untrusted inputs of a source hold (an HTML, PDF or text
 * document's readable text, a CSV's Q&A rows, an audio file's length), and of
 * a crawl (a page's links, a sitemap's addresses), read
 * where no input can stall or stop the service.
 *
 * Live (`layerDecoders`): on the decoder processes (`Decoders.ts`), under
 * their time and memory limits; a document that breaks its decoder fails with
 * a reason, and the next is read by a fresh one.
 *
 * Inline (`extractor/Inline.ts`, for tests): the same readers on the calling
 * thread, without limits; its `extract` can be one that fails or dies on cue.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Decoders, ExtractError } from "./Decoders.js"
import type { AudioKind } from "./extractor/AudioDuration.js"
import type { CsvQa, CsvRowError } from "./extractor/Csv.js"
import type { Document, DocumentKind } from "./extractor/Documents.js"
import type { PageLinks } from "./extractor/Links.js"
import type { ExtractRequest } from "./extractor/Protocol.js"
import type { SitemapBody, SitemapLimits } from "./extractor/Sitemap.js"

export type { AudioKind, CsvQa, CsvRowError, Document, DocumentKind, ExtractRequest, PageLinks, SitemapBody, SitemapLimits }
export { ExtractError }

export interface ExtractorShape {
  /** A document's readable text. */
  readonly extract: (request: ExtractRequest) => Effect.Effect<Document, ExtractError>
  /** A `csv_qa` source's rows, or every bad row with its line. */
  readonly csvQa: (content: string) => Effect.Effect<Either.Either<ReadonlyArray<CsvQa>, ReadonlyArray<CsvRowError>>, ExtractError>
  /** How long an audio file plays, from its headers (none when they do not tell). */
  readonly audioSeconds: (bytes: Uint8Array, kind: AudioKind) => Effect.Effect<Option.Option<number>, ExtractError>
  /** An HTML page's links, canonical address and robots directives, for a crawl (`robot`: our product token). */
  readonly links: (page: { readonly bytes: Uint8Array; readonly url: string; readonly robot: string }) => Effect.Effect<PageLinks, ExtractError>
  /** A crawled sitemap's addresses (its body as fetched, gzip-encoded or not), read within `limits`. */
  readonly sitemap: (bytes: Uint8Array, limits: SitemapLimits) => Effect.Effect<SitemapBody, ExtractError>
}

export class Extractor extends Context.Tag("Layers/Extractor")<Extractor, ExtractorShape>() {}

/** Every input read on the decoder processes. */
export const layerDecoders: Layer.Layer<Extractor, never, Decoders> = Layer.effect(
  Extractor,
  Effect.map(Decoders, (decoders) =>
    Extractor.of({
      extract: (request) => decoders.decode({ _tag: "Document", request }),
      csvQa: (content) =>
        Effect.map(decoders.decode({ _tag: "CsvQa", content }), (parsed) => ("rows" in parsed ? Either.right(parsed.rows) : Either.left(parsed.errors))),
      audioSeconds: (bytes, audio) => Effect.map(decoders.decode({ _tag: "AudioSeconds", bytes, audio }), Option.fromNullable),
      links: (page) => decoders.decode({ _tag: "Links", ...page }),
      sitemap: (bytes, limits) => decoders.decode({ _tag: "Sitemap", bytes, limits })
    })
  )
)
