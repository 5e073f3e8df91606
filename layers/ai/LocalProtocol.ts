/**
 * The messages between `LocalThread.ts` (main thread) and `LocalWorker.ts` (the thread the local provider's
 * long work runs on): one request, one reply with its id.
 */
import type { CategoryDraft, DocumentInput } from "./Shape.js"

export type LocalCall =
  | { readonly op: "categorize"; readonly doc: DocumentInput }
  | { readonly op: "generateQa"; readonly doc: DocumentInput; readonly categories: ReadonlyArray<CategoryDraft> }
  | { readonly op: "embed"; readonly texts: ReadonlyArray<string>; readonly dimensions: number }

export type LocalRequest = LocalCall & { readonly id: number }

export type LocalReply =
  | { readonly id: number; readonly ok: true; readonly result: unknown }
  | { readonly id: number; readonly ok: false; readonly message: string }
