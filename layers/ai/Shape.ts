/**
 * What the `Ai` service is (`layers/Ai.ts` owns its tag): its interface, its
 * error, the values it takes and gives, and the `openai` provider's options.
 * Below both providers, so neither imports the other's file.
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type { LanguageTag } from "../../schema/Languages.js"

/** The provider failed; `transient` (timeouts, 429, 5xx) means a later retry may succeed. */
export class AiError extends Schema.TaggedError<AiError>()("AiError", {
  message: Schema.String,
  transient: Schema.Boolean
}) {}

export interface DocumentInput {
  readonly title: string
  readonly text: string
  /** The language its drafts are written in (`src/languages/DocumentLanguage.ts`); absent: told from its text. */
  readonly language?: LanguageTag | undefined
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

/** One piece of knowledge an answer may draw on (a retrieval hit), best first. */
export interface Grounding {
  readonly kind: "qa" | "chunk"
  /** The Q&A's question, or the title of the chunk's source. */
  readonly title: string
  /** The Q&A's answer, or the chunk's text. */
  readonly text: string
  /** 0..1, as retrieval scored it. */
  readonly score: number
}

export interface AnswerInput {
  /** The agent's `instructions`, if any. */
  readonly instructions: string | null
  readonly question: string
  /** The conversation's earlier final messages, oldest first. */
  readonly history: ReadonlyArray<{ readonly role: "user" | "assistant"; readonly content: string }>
  readonly grounding: ReadonlyArray<Grounding>
  /** The question with the glossary's synonyms added, when they changed it. */
  readonly expandedQuery?: string | undefined
  /** The language to answer in: the question's when it could be told, else the visitor's or the agent's. */
  readonly language?: LanguageTag | undefined
}

/** An audio file to transcribe: its bytes, a file name (the extension tells servers the format) and its type. */
export interface AudioInput {
  readonly bytes: Uint8Array
  readonly filename: string
  readonly contentType: string
}

/** A transcription: the text and, when the server says, the audio's length. */
export interface Transcript {
  readonly text: string
  readonly seconds: number | undefined
}

export interface AiShape {
  readonly provider: "local" | "openai"
  /** A category structure for an agent's first document: 1..8 categories (the local provider gives 3..8). */
  readonly categorize: (doc: DocumentInput) => Effect.Effect<ReadonlyArray<CategoryDraft>, AiError>
  /** Q&A drawn from a document, each placed in one of `categories` (by name) when it fits. */
  readonly generateQa: (
    doc: DocumentInput,
    categories: ReadonlyArray<CategoryDraft>
  ) => Effect.Effect<ReadonlyArray<QaDraft>, AiError>
  /** One unit-length vector per text, all of `dimensions` length. */
  readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ReadonlyArray<number>>, AiError>
  readonly dimensions: number
  /**
   * The model behind `embed`: with `provider` and `dimensions`, what makes two vectors comparable (see
   * `embeddingSpace`). A change of the vectors a model gives for the same text is a new name.
   */
  readonly embeddingModel: string
  /** A reply grounded in `input.grounding`, streamed as text pieces whose concatenation is the answer. */
  readonly answer: (input: AnswerInput) => Stream.Stream<string, AiError>
  /** Speech to text; the `local` provider cannot and fails (not transient). */
  readonly transcribe: (audio: AudioInput) => Effect.Effect<Transcript, AiError>
}

/**
 * The space `embed`'s vectors live in, `provider:model:dimensions` (`local:hash-v1:384`,
 * `openai:text-embedding-3-small:1536`): vectors of two spaces are not comparable, even of one length.
 */
export const embeddingSpace = (ai: Pick<AiShape, "provider" | "embeddingModel" | "dimensions">): string =>
  `${ai.provider}:${ai.embeddingModel}:${ai.dimensions}`

export interface OpenAiOptions {
  /** Base of the API, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
  readonly chatModel: string
  readonly embeddingModel: string
  /**
   * Length of the embedding vectors. Given: sent as the request's `dimensions`
   * (models that can shorten their vectors honour it). Not given: 1536, the
   * length of OpenAI's small embedding model; any other length is refused.
   */
  readonly dimensions?: number
  /** Per request; a request that takes longer fails as transient. Default 60 s. */
  readonly timeout?: Duration.DurationInput
  /** Model of `/audio/transcriptions`. Default `whisper-1`. */
  readonly transcriptionModel?: string
  /** Per transcription (audio runs up to 10 minutes). Default 10 minutes. */
  readonly transcriptionTimeout?: Duration.DurationInput
}
