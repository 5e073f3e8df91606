/** The messages between the service and a decoder process: one request at a time per process. */
import type { AudioKind } from "./AudioDuration.js"
import type { CsvQa, CsvRowError } from "./Csv.js"
import type { Document, DocumentKind } from "./Documents.js"
import type { PageLinks } from "./Links.js"
import type { SitemapBody, SitemapLimits } from "./Sitemap.js"

export interface ExtractRequest {
  readonly kind: DocumentKind
  readonly bytes: Uint8Array
  /** The title when the document names none. */
  readonly fallbackTitle: string
}

export type DecodeRequest =
  | { readonly _tag: "Document"; readonly request: ExtractRequest }
  | { readonly _tag: "CsvQa"; readonly content: string }
  | { readonly _tag: "AudioSeconds"; readonly bytes: Uint8Array; readonly audio: AudioKind }
  /** The text drawn in an image (PNG, JPEG or WEBP). */
  | { readonly _tag: "Image"; readonly bytes: Uint8Array }
  /** An HTML page's links, canonical address and robots directives (`url`: where it answered; `robot`: our token). */
  | { readonly _tag: "Links"; readonly bytes: Uint8Array; readonly url: string; readonly robot: string }
  /** A sitemap's addresses (the body as fetched, gzip-encoded or not). */
  | { readonly _tag: "Sitemap"; readonly bytes: Uint8Array; readonly limits: SitemapLimits }

const nouns: { readonly [T in DecodeRequest["_tag"]]: string } = {
  Document: "document",
  CsvQa: "CSV",
  AudioSeconds: "audio file",
  Image: "image",
  Links: "page",
  Sitemap: "sitemap"
}

/** What a request reads, as a person names it in an error. */
export const nounOf = (request: DecodeRequest): string => nouns[request._tag]

/**
 * A request as it crosses to the decoder process. `spilled`: the file its bytes were written to instead (a large
 * input: structured clone would copy all of it on the service's main thread at once); the decoder reads them
 * back into the request.
 */
export interface DecodeMessage {
  readonly request: DecodeRequest
  readonly spilled?: string | undefined
}

/** The request's input bytes, where it has some. */
export const bytesOf = (request: DecodeRequest): Uint8Array | undefined =>
  request._tag === "Document" ? request.request.bytes : request._tag === "CsvQa" ? undefined : request.bytes

/** The request with other input bytes (those read back from where they were spilled). */
export const withBytes = (request: DecodeRequest, bytes: Uint8Array): DecodeRequest =>
  request._tag === "Document"
    ? { ...request, request: { ...request.request, bytes } }
    : request._tag === "CsvQa"
      ? request
      : { ...request, bytes }

/** What each request answers (plain data: replies cross processes by structured clone). */
export interface DecodeAnswers {
  readonly Document: Document
  readonly CsvQa: { readonly rows: ReadonlyArray<CsvQa> } | { readonly errors: ReadonlyArray<CsvRowError> }
  readonly AudioSeconds: number | null
  readonly Image: string
  readonly Links: PageLinks
  readonly Sitemap: SitemapBody
}

/**
 * A long text of an answer crosses in pieces of this many characters, one message each, before the reply: one
 * message of megabytes is deserialized on the service's main thread at once, holding up every request there.
 */
export const answerPieceChars = 256 * 1024

/** A piece of the reply's `text` (see `answerPieceChars`), sent before it. */
export interface DecodePiece {
  readonly piece: string
}

export const isPiece = (message: unknown): message is DecodePiece =>
  typeof message === "object" && message !== null && typeof (message as { piece?: unknown }).piece === "string"

export type DecodeReply =
  /** `pieced`: the value's `text` is the pieces sent before this reply, joined (the value holds an empty one). */
  | { readonly ok: true; readonly value: unknown; readonly pieced?: true }
  /**
   * `message`: why the input could not be read, for the person who added it. `fatal`: the decoder broke
   * while reading it (an error nothing caught) and its process exits after this reply.
   */
  | { readonly ok: false; readonly message: string; readonly fatal?: boolean }

/** A decoder process's first message: it listens for requests. */
export const ready = "ready"
