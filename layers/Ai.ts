/**
 * Categories, Q&A and embeddings for knowledge ingestion, and the streamed
 * answers of replies. Providers side by
 * side: `local` (default: offline and deterministic, extractive drafts and a
 * hashing embedder) and `openai` (any OpenAI-compatible server through
 * `@effect/ai-openai`, `ai/OpenAiLayer.ts`, loaded on demand). The interface
 * and its values are in `ai/Shape.ts`, re-exported here.
 */
import * as EmbeddingModel from "@effect/ai/EmbeddingModel"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Extract from "./ai/Extract.js"
import { AiError, type AiShape, type OpenAiOptions } from "./ai/Shape.js"
import { hashEmbed } from "./ai/Text.js"

/** The interface, its error and its values, for every user of the service. */
export * from "./ai/Shape.js"

/**
 * Word-sized pieces of `text` whose concatenation is `text` (each piece keeps
 * the whitespace before it): how replies stream a text they already hold.
 */
export const wordTokens = (text: string): Array<string> => text.match(/\s*\S+/g) ?? []

export class Ai extends Context.Tag("Layers/Ai")<Ai, AiShape>() {}

// local

export const localDimensions = 384

/** The hashing embedder's name in `embeddingSpace`: a change to the vectors `hashEmbed` gives is a new one. */
export const localEmbeddingModel = "hash-v1"

/** The local provider's service, for callers that want it without a layer (benchmarks, the CLI). */
export const makeLocal = (dimensions: number = localDimensions): AiShape => ({
  provider: "local",
  dimensions,
  embeddingModel: localEmbeddingModel,
  categorize: (doc) => Effect.sync(() => Extract.categories(doc)),
  generateQa: (doc, categories) => Effect.sync(() => Extract.qa(doc, categories)),
  embed: (texts) => Effect.sync(() => texts.map((text) => hashEmbed(text, dimensions))),
  answer: (input) => Stream.suspend(() => Stream.fromIterable(wordTokens(Extract.answer(input.grounding)))),
  transcribe: () =>
    Effect.fail(
      new AiError({
        message:
          "the local AI provider cannot transcribe audio: send the source with a `transcript`, or run the service with AI_PROVIDER=openai",
        transient: false
      })
    )
})

/** Default: offline and deterministic. */
export const layerLocal: Layer.Layer<Ai> = Layer.sync(Ai, () => makeLocal())

/** The local hashing embedder as an `@effect/ai` `EmbeddingModel`, for code written against that abstraction. */
export const layerLocalEmbeddingModel = (dimensions: number = localDimensions): Layer.Layer<EmbeddingModel.EmbeddingModel> =>
  Layer.effect(
    EmbeddingModel.EmbeddingModel,
    EmbeddingModel.make({
      embedMany: (texts) => Effect.sync(() => texts.map((text, index) => ({ index, embeddings: hashEmbed(text, dimensions) })))
    })
  )

// openai

/**
 * Any OpenAI-compatible server (`ai/OpenAiLayer.ts`). `@effect/ai-openai` and its
 * generated schemas are many times the rest of this file to load, so they are
 * loaded when this layer is built, never by a service on the local provider.
 */
export const layerOpenAi = (options: OpenAiOptions): Layer.Layer<Ai> =>
  Layer.unwrapEffect(Effect.map(Effect.promise(() => import("./ai/OpenAiLayer.js")), (openAi) => openAi.layer(Ai, options)))
