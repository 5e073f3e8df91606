/** The messages between the service and an extraction thread: one request at a time per thread. */
import type { AudioKind } from "./AudioDuration.js"
import type { CsvQa, CsvRowError } from "./Csv.js"
import type { Document, DocumentKind } from "./Documents.js"

export interface ExtractRequest {
  readonly kind: DocumentKind
  readonly bytes: Uint8Array
  /** The title when the document names none. */
  readonly fallbackTitle: string
}

export type ThreadRequest =
  | { readonly _tag: "Document"; readonly request: ExtractRequest }
  | { readonly _tag: "CsvQa"; readonly content: string }
  | { readonly _tag: "AudioSeconds"; readonly bytes: Uint8Array; readonly audio: AudioKind }

/** What each request answers (plain data: replies cross threads by structured clone). */
export interface ThreadAnswers {
  readonly Document: Document
  readonly CsvQa: { readonly rows: ReadonlyArray<CsvQa> } | { readonly errors: ReadonlyArray<CsvRowError> }
  readonly AudioSeconds: number | null
}

export type ThreadReply =
  | { readonly ok: true; readonly value: unknown }
  /** `message`: why the input could not be read, for the person who added it. */
  | { readonly ok: false; readonly message: string }
