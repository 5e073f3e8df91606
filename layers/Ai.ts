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
import { answer } from "./ai/Answer.js"
import * as Extract from "./ai/Extract.js"
import { makeLocalThread } from "./ai/LocalThread.js"
import { AiError, type AiShape, type CategoryDraft, type OpenAiOptions, type QaDraft } from "./ai/Shape.js"
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
  answer: (input) => Stream.suspend(() => Stream.fromIterable(wordTokens(answer(input.grounding, input.language)))),
  transcribe: () =>
    Effect.fail(
      new AiError({
        message:
          "the local AI provider cannot transcribe audio: send the source with a `transcript`, or run the service with AI_PROVIDER=openai",
        transient: false
      })
    )
})

/**
 * Inputs from this many characters on are worked on the local provider's thread (`ai/LocalThread.ts`); smaller
 * ones (a question's vector, a short document) cost less here than a message each way.
 */
export const localThreadChars = 8 * 1024

const charsOf = (texts: ReadonlyArray<string>) => texts.reduce((sum, text) => sum + text.length, 0)

/**
 * The local provider whose big documents' categories and Q&A, and big batches of vectors, are computed on a thread
 * of their own, off the main thread (the same results as `makeLocal`'s). The thread starts on the first big call.
 */
const makeLocalThreaded = Effect.map(makeLocalThread, (thread): AiShape => {
  const inline = makeLocal()
  const big = (texts: ReadonlyArray<string>) => charsOf(texts) >= localThreadChars
  return {
    ...inline,
    categorize: (doc) =>
      big([doc.title, doc.text])
        ? (thread.call({ op: "categorize", doc: { title: doc.title, text: doc.text, language: doc.language } }) as Effect.Effect<ReadonlyArray<CategoryDraft>>)
        : inline.categorize(doc),
    generateQa: (doc, categories) =>
      big([doc.title, doc.text])
        ? (thread.call({ op: "generateQa", doc: { title: doc.title, text: doc.text, language: doc.language }, categories }) as Effect.Effect<ReadonlyArray<QaDraft>>)
        : inline.generateQa(doc, categories),
    embed: (texts) =>
      big(texts)
        ? (thread.call({ op: "embed", texts, dimensions: inline.dimensions }) as Effect.Effect<ReadonlyArray<ReadonlyArray<number>>>)
        : inline.embed(texts)
  }
})

/** Default: offline and deterministic. */
export const layerLocal: Layer.Layer<Ai> = Layer.scoped(Ai, makeLocalThreaded)

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
 * The local provider's drafts stand in for categories or Q&A the model could not
 * give in a usable shape.
 */
export const layerOpenAi = (options: OpenAiOptions): Layer.Layer<Ai> =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const openAi = yield* Effect.promise(() => import("./ai/OpenAiLayer.js"))
      return openAi.layer(Ai, options, yield* makeLocalThreaded)
    })
  )
