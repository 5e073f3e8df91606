/** The messages between the service and an extraction thread: one request at a time per thread. */
import type { Document, DocumentKind } from "./Documents.js"

export interface ExtractRequest {
  readonly kind: DocumentKind
  readonly bytes: Uint8Array
  /** The title when the document names none. */
  readonly fallbackTitle: string
}

export type ExtractReply =
  | { readonly ok: true; readonly document: Document }
  /** `message`: why the document could not be read, for the person who added it. */
  | { readonly ok: false; readonly message: string }
