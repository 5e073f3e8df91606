/**
 * A source's document, read: an inline text, a `url` source's page (the bytes a crawl kept, else fetched, on a
 * refresh conditionally), an uploaded file (decoded in a decoder process, never here: the bytes are untrusted;
 * images through OCR, audio as its transcript), a CSV's Q&A rows. What could not be read is an `IngestFailure`,
 * transient (worth another attempt) or not.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { FileId } from "../../schema/Ids.js"
import type { SourceErrorCode } from "../../schema/Knowledge.js"
import type { Tenant } from "../../schema/Tenant.js"
import { Ai } from "../../layers/Ai.js"
import { type Document, type DocumentKind, type ExtractError, Extractor } from "../../layers/Extractor.js"
import { describeSeconds, MAX_AUDIO_SECONDS } from "../../layers/extractor/AudioDuration.js"
import { Fetcher, type GetResult } from "../../layers/Fetcher.js"
import { Ocr } from "../../layers/Ocr.js"
import { AppConfig } from "../Config.js"
import { Files } from "../files/Files.js"
import { type AudioKind, detect, isAudio } from "../files/Magic.js"
import { KnowledgeRepo, type SourceRow } from "./KnowledgeRepo.js"
import { phaseSpan, type PhaseWriter } from "./PhaseWriter.js"

/** Why a source could not be read or indexed, as a person reads it; `transient`: another attempt may succeed. */
export class IngestFailure extends Data.TaggedError("IngestFailure")<{
  readonly code: SourceErrorCode
  readonly message: string
  readonly transient: boolean
}> {}

export const permanent = (code: SourceErrorCode, message: string) => new IngestFailure({ code, message, transient: false })
export const transient = (code: SourceErrorCode, message: string) => new IngestFailure({ code, message, transient: true })

/** What a page answered with, for a later conditional GET. */
export interface Validators {
  readonly etag: string | null
  readonly last_modified: string | null
}

export const validatorsOf = (response: GetResult): Validators | undefined =>
  response._tag === "Response" ? { etag: response.etag ?? null, last_modified: response.lastModified ?? null } : undefined

const conditionalHeaders = (validators: Validators): Record<string, string> => ({
  ...(validators.etag === null ? {} : { "if-none-match": validators.etag }),
  ...(validators.last_modified === null ? {} : { "if-modified-since": validators.last_modified })
})

/** A document as the pipeline read it, with its page's validators when it fetched one. */
export type ReadDocument = Document & { readonly validators?: Validators }

/** A document past the extractor's limits fails for good: reading it again would take as long. */
const fromExtract = (error: ExtractError) =>
  permanent(error.reason === "timeout" ? "timeout" : error.reason === "memory" ? "too_large" : "unsupported_type", error.message)

/** Inline text as a document: its first Markdown heading is its title. Linear work on text the API accepted. */
const fromText = (text: string, fallbackTitle: string): Document => {
  const clean = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n").trim()
  const heading = /^#{1,6}\s+(.+)$/m.exec(clean)
  return { title: heading?.[1]?.trim() || fallbackTitle, text: clean }
}

/** What a fetched page is, by its declared type, else by its bytes. */
const pageKind = (contentType: string, body: Uint8Array): "html" | "text" | "pdf" | undefined => {
  if (contentType === "text/html" || contentType === "application/xhtml+xml") return "html"
  if (contentType === "text/plain" || contentType === "text/markdown") return "text"
  if (contentType === "application/pdf") return "pdf"
  if (contentType === "" || contentType === "application/octet-stream") {
    const kind = detect(body)
    return kind === "text/html" ? "html" : kind === "text" ? "text" : kind === "application/pdf" ? "pdf" : undefined
  }
  return undefined
}

export const fromFetch = (result: GetResult): Either.Either<{ kind: "html" | "text" | "pdf"; body: Uint8Array }, IngestFailure> => {
  if (result._tag === "Failure") {
    switch (result.reason) {
      case "private_address":
        return Either.left(permanent("url_not_allowed", `refused: ${result.message}`))
      case "too_large":
        return Either.left(permanent("too_large", result.message))
      case "encoding":
        return Either.left(permanent("unsupported_type", result.message))
      case "timeout":
        return Either.left(transient("timeout", result.message))
      case "redirect":
      case "tls":
        return Either.left(permanent("fetch_failed", result.message))
      default:
        return Either.left(transient("fetch_failed", result.message))
    }
  }
  const { status } = result
  if (status === 404 || status === 410) return Either.left(permanent("not_found", `the page answered ${status}`))
  if (status === 429 || status >= 500) return Either.left(transient("http_error", `the page answered ${status}`))
  if (status < 200 || status >= 300) return Either.left(permanent("http_error", `the page answered ${status}`))
  const kind = pageKind(result.contentType, result.body)
  if (kind === undefined) {
    return Either.left(permanent("unsupported_type", `content type ${result.contentType || "unknown"} is not HTML, text or PDF`))
  }
  return Either.right({ kind, body: result.body })
}

/** A page as a crawl read it (an answer in 2xx, kept for its type). */
export const fromKeptPage = (contentType: string, body: Uint8Array) => {
  const kind = pageKind(contentType, body)
  return kind === undefined
    ? Either.left(permanent("unsupported_type", `content type ${contentType || "unknown"} is not HTML, text or PDF`))
    : Either.right({ kind, body })
}

export class SourceReader extends Effect.Service<SourceReader>()("Knowledge/SourceReader", {
  effect: Effect.gen(function* () {
    const repo = yield* KnowledgeRepo
    const files = yield* Files
    const ai = yield* Ai
    const ocr = yield* Ocr
    const fetcher = yield* Fetcher
    const extractor = yield* Extractor
    const config = yield* AppConfig

    /** A `url` source's page, conditional on `validators` when given (a refresh: `304` when it did not change). */
    const fetchPage = (source: SourceRow, validators?: Validators) =>
      fetcher.get({
        url: source.source_ref,
        ...(validators === undefined ? {} : { headers: conditionalHeaders(validators) }),
        timeoutMillis: config.ingest.fetchTimeoutMillis,
        maxBytes: config.ingest.maxPageBytes,
        allowPrivate: config.allowPrivateUrls,
        httpsOnly: source.environment === "live"
      })

    /** A page's text; a title given at creation wins over the page's own. */
    const readPage = (source: SourceRow, page: { kind: "html" | "text" | "pdf"; body: Uint8Array }) =>
      Effect.map(extract(page.kind, page.body, source.title), (doc): ReadDocument =>
        source.title !== source.source_ref ? { ...doc, title: source.title } : doc
      )

    /** Bytes to text in a decoder process, never here: the document is untrusted. */
    const extract = (kind: DocumentKind, bytes: Uint8Array, fallbackTitle: string) =>
      Effect.mapError(extractor.extract({ kind, bytes, fallbackTitle }), fromExtract).pipe(phaseSpan("extract"))

    const readDocument = (source: SourceRow, tenant: Tenant, phases: PhaseWriter): Effect.Effect<ReadDocument, IngestFailure> =>
      Effect.gen(function* () {
        switch (source.type) {
          case "text": {
            const content = Option.getOrElse(yield* repo.inputOf(source.id), () => "")
            yield* phases.enter({ phase: "extracting", progress: 20 })
            return { title: source.title, text: fromText(content, source.title).text }
          }
          case "url": {
            // a page a crawl kept comes with the bytes it read: read them, not the web again
            const kept = source.crawl_id === null ? Option.none() : yield* repo.keptPageOf(source.id)
            let validators: Validators | undefined
            let page: { kind: "html" | "text" | "pdf"; body: Uint8Array }
            if (Option.isSome(kept)) {
              page = yield* fromKeptPage(kept.value.contentType, kept.value.body)
            } else {
              const fetched = yield* fetchPage(source).pipe(phaseSpan("fetch"))
              page = yield* fromFetch(fetched)
              validators = validatorsOf(fetched)
            }
            yield* phases.enter({ phase: "extracting", progress: 20, size_bytes: page.body.length })
            const doc = yield* readPage(source, page)
            return validators === undefined ? doc : { ...doc, validators }
          }
          case "file_id": {
            const fileId = yield* Schema.decode(FileId)(source.source_ref).pipe(
              Effect.mapError(() => permanent("file_missing", "the source names no file"))
            )
            const file = yield* files.bytesOf(tenant, fileId)
            if (Option.isNone(file)) return yield* permanent("file_missing", `file ${fileId} is gone or not uploaded`)
            const { bytes, row } = file.value
            yield* phases.enter({ phase: "extracting", progress: 20, size_bytes: bytes.length })
            const kind = detect(bytes)
            if (isAudio(kind)) return { title: source.title, text: yield* transcribed(source, bytes, kind, row.filename) }
            switch (kind) {
              case "image/png":
              case "image/jpeg":
              case "image/webp": {
                const text = yield* Effect.mapError(ocr.recognize(bytes), (e) => permanent("ocr_failed", e.message))
                return { title: source.title, text: text.trim() }
              }
              case "application/pdf":
                return yield* extract("pdf", bytes, source.title)
              case "text/html":
                return { ...(yield* extract("html", bytes, source.title)), title: source.title }
              case "text":
                return { ...(yield* extract("text", bytes, row.filename)), title: source.title }
              default:
                return yield* permanent("unsupported_type", "the file is not an image, PDF, HTML or text")
            }
          }
          case "csv_qa":
            return yield* permanent("csv_invalid", "a CSV source has no document")
        }
      })

    /**
     * Audio as text: the `transcript` given with the source, else the AI
     * provider's transcription (up to 10 minutes of audio; the job's lease is
     * extended while it runs). Length is checked from the headers first, and
     * again from what the server reports.
     */
    const transcribed = (source: SourceRow, bytes: Uint8Array, kind: AudioKind, filename: string) =>
      Effect.gen(function* () {
        const given = Option.getOrElse(yield* repo.inputOf(source.id), () => "")
        if (given.trim() !== "") return given
        const tooLong = (seconds: number) =>
          permanent("audio_too_long", `the audio lasts ${describeSeconds(seconds)}; at most ${MAX_AUDIO_SECONDS / 60} minutes are transcribed`)
        const seconds = yield* Effect.mapError(extractor.audioSeconds(bytes, kind), fromExtract)
        if (Option.isSome(seconds) && seconds.value > MAX_AUDIO_SECONDS) return yield* tooLong(seconds.value)
        const transcript = yield* ai.transcribe({ bytes, filename, contentType: kind }).pipe(
          Effect.mapError(
            (e) => new IngestFailure({ code: "transcription_failed", message: `transcription failed: ${e.message}`, transient: e.transient })
          )
        )
        if (transcript.seconds !== undefined && transcript.seconds > MAX_AUDIO_SECONDS) return yield* tooLong(transcript.seconds)
        return transcript.text
      })

    /** A `csv_qa` source's rows, each a question, its answer and the category it names (if any). */
    const csvRows = (source: SourceRow, phases: PhaseWriter) =>
      Effect.gen(function* () {
        const content = Option.getOrElse(yield* repo.inputOf(source.id), () => "")
        yield* phases.enter({ phase: "extracting", progress: 20 })
        const parsed = yield* Effect.mapError(extractor.csvQa(content), fromExtract)
        if (Either.isLeft(parsed)) {
          return yield* permanent("csv_invalid", parsed.left.map((e) => `line ${e.line}: ${e.message}`).join("; "))
        }
        return parsed.right
      })

    return { readDocument, csvRows, fetchPage, readPage } as const
  }),
  dependencies: [KnowledgeRepo.Default, Files.Default]
}) {}
