/**
 * Categories, Q&A and embeddings for knowledge ingestion. Providers side by
 * side: `local` (default: offline and deterministic, extractive drafts and a
 * hashing embedder) and `openai` (any OpenAI-compatible server through
 * `@effect/ai-openai`).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Extract from "./ai/Extract.js"
import { hashEmbed } from "./ai/Text.js"

/** The provider failed; `transient` (timeouts, 429, 5xx) means a later retry may succeed. */
export class AiError extends Schema.TaggedError<AiError>()("AiError", {
  message: Schema.String,
  transient: Schema.Boolean
}) {}

export interface DocumentInput {
  readonly title: string
  readonly text: string
}
export interface CategoryDraft {
  readonly name: string
  readonly description: string
}
/** `category`: one of the given category names, or null when none fits. */
export interface QaDraft {
  readonly question: string
  readonly answer: string
  readonly category: string | null
}

export interface AiShape {
  readonly provider: "local" | "openai"
  /** A category structure for an agent's first document (3..8 categories). */
  readonly categorize: (doc: DocumentInput) => Effect.Effect<ReadonlyArray<CategoryDraft>, AiError>
  /** Q&A drawn from a document, each placed in one of `categories` (by name) when it fits. */
  readonly generateQa: (
    doc: DocumentInput,
    categories: ReadonlyArray<CategoryDraft>
  ) => Effect.Effect<ReadonlyArray<QaDraft>, AiError>
  /** One unit-length vector per text, all of `dimensions` length. */
  readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ReadonlyArray<number>>, AiError>
  readonly dimensions: number
}

export class Ai extends Context.Tag("Ai/Ai")<Ai, AiShape>() {}

// local

export const localDimensions = 384

/** The local provider's service, for callers that want it without a layer (benchmarks, the CLI). */
export const makeLocal = (dimensions: number = localDimensions): AiShape => ({
  provider: "local",
  dimensions,
  categorize: (doc) => Effect.sync(() => Extract.categories(doc)),
  generateQa: (doc, categories) => Effect.sync(() => Extract.qa(doc, categories)),
  embed: (texts) => Effect.sync(() => texts.map((text) => hashEmbed(text, dimensions)))
})

/** Default: offline and deterministic. */
export const layerLocal: Layer.Layer<Ai> = Layer.sync(Ai, () => makeLocal())
