/**
 * The `openai` provider of `Ai`: any OpenAI-compatible server. Loaded by
 * `Ai.layerOpenAi` when it is built (see there), which hands it the `Ai` tag:
 * this file imports nothing of `layers/Ai.ts`.
 */
import * as EmbeddingModel from "@effect/ai/EmbeddingModel"
import * as OpenAiClient from "@effect/ai-openai/OpenAiClient"
import * as OpenAiEmbeddingModel from "@effect/ai-openai/OpenAiEmbeddingModel"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as OpenAiParts from "./OpenAi.js"
import {
  AiError,
  type AiShape,
  type AnswerInput,
  type AudioInput,
  type CategoryDraft,
  type DocumentInput,
  type OpenAiOptions,
  type Transcript
} from "./Shape.js"
import * as Sse from "./Sse.js"

const documentPieceChars = 12_000
const documentPieceLimit = 20
const embedBatch = 64

/**
 * Any OpenAI-compatible server. Chat goes to `/chat/completions` through the
 * `@effect/ai-openai` client's HTTP client (the package's language model
 * speaks the newer `/responses` API, which most compatible servers lack), in
 * JSON mode, decoded with Schema and tolerantly (see `structured`); embeddings go through
 * `OpenAiEmbeddingModel`. `tag`: the service's (`Ai`); `local`: the local provider, whose drafts stand in for
 * replies the model could not make usable.
 */
export const layer = <I>(
  tag: Context.Tag<I, AiShape>,
  options: OpenAiOptions,
  local: Pick<AiShape, "categorize" | "generateQa">
): Layer.Layer<I> => {
  const dimensions = options.dimensions ?? 1536
  const timeout = options.timeout ?? Duration.seconds(60)
  const client = OpenAiClient.layer({ apiKey: options.apiKey, apiUrl: options.baseUrl.replace(/\/+$/, "") }).pipe(
    Layer.provide(FetchHttpClient.layer)
  )
  const embeddings = OpenAiEmbeddingModel.layerBatched({
    model: options.embeddingModel,
    config: { maxBatchSize: embedBatch, ...(options.dimensions === undefined ? {} : { dimensions: options.dimensions }) }
  })
  const service = Effect.gen(function* () {
    const openai = yield* OpenAiClient.OpenAiClient
    const embedder = yield* EmbeddingModel.EmbeddingModel
    const http = openai.client.httpClient

    const timedOut = (what: string, after: Duration.DurationInput = timeout) => () =>
      new AiError({ message: `${what} timed out after ${Duration.format(after)}`, transient: true })

    type Message = { readonly role: "system" | "user" | "assistant"; readonly content: string }

    /** The reply's content, "" when it has none (the model's answer to judge, like any other). */
    const chat = (messages: ReadonlyArray<Message>): Effect.Effect<string, AiError> =>
      Effect.gen(function* () {
        const request = HttpClientRequest.post("/chat/completions").pipe(
          HttpClientRequest.bodyUnsafeJson({ model: options.chatModel, temperature: 0, response_format: { type: "json_object" }, messages })
        )
        const response = yield* http.execute(request).pipe(
          Effect.mapError((error) => new AiError(OpenAiParts.requestFailed("chat request", error)))
        )
        if (response.status < 200 || response.status >= 300) {
          const body = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
          return yield* new AiError({
            message: `chat request answered ${response.status}${body ? `: ${body.slice(0, 300)}` : ""}`,
            transient: OpenAiParts.isTransientStatus(response.status)
          })
        }
        const completion = yield* HttpClientResponse.schemaBodyJson(OpenAiParts.ChatCompletion)(response).pipe(
          Effect.mapError(() => new AiError({ message: "chat response is not a chat completion", transient: false }))
        )
        return completion.choices[0].message.content ?? ""
      }).pipe(Effect.scoped, Effect.timeoutFail({ duration: timeout, onTimeout: timedOut("chat request") }))

    /**
     * A structured step: the reply read tolerantly (`read`), asked once more with the reason when nothing of it is
     * usable, and the local provider's drafts (`fallback`) when the second is not either. Only a server out of
     * reach (or refusing the request) fails the step.
     */
    const structured = <A>(
      step: string,
      system: string,
      user: string,
      read: (content: string) => Either.Either<A, string>,
      fallback: Effect.Effect<A, AiError>
    ): Effect.Effect<A, AiError> =>
      Effect.gen(function* () {
        const asked: ReadonlyArray<Message> = [{ role: "system", content: system }, { role: "user", content: user }]
        const first = yield* chat(asked)
        const once = read(first)
        if (Either.isRight(once)) return once.right
        const reply = { role: "assistant", content: first } as const
        const again = read(yield* chat([...asked, reply, { role: "user", content: OpenAiParts.reAsk(once.left) }]))
        if (Either.isRight(again)) return again.right
        yield* Effect.logWarning(`the model's ${step} could not be used twice (${again.left}): the local drafts are used`)
        return yield* fallback
      })

    const userMessage = (doc: DocumentInput, text: string) => `Title: ${doc.title}\n\n${text}`

    const categorize = (doc: DocumentInput) => {
      const [first] = OpenAiParts.pieces(doc.text, documentPieceChars, 1)
      const user = userMessage(doc, first ?? "")
      return structured("categories", OpenAiParts.inDocumentLanguage(OpenAiParts.categoriesPrompt, doc.language), user, OpenAiParts.readCategories, local.categorize(doc))
    }

    const generateQa = (doc: DocumentInput, categories: ReadonlyArray<CategoryDraft>) => {
      const names = categories.map((c) => c.name)
      return Effect.forEach(OpenAiParts.pieces(doc.text, documentPieceChars, documentPieceLimit), (piece) =>
        structured(
          "Q&A",
          OpenAiParts.inDocumentLanguage(OpenAiParts.qaPrompt(names), doc.language),
          userMessage(doc, piece),
          (content) => OpenAiParts.readQa(content, names),
          // the piece's own drafts: the other pieces keep the model's
          local.generateQa({ ...doc, text: piece }, categories)
        )
      ).pipe(Effect.map((perPiece) => perPiece.flat()))
    }

    const embed = (texts: ReadonlyArray<string>) =>
      texts.length === 0
        ? Effect.succeed([])
        : embedder.embedMany(texts).pipe(
            Effect.mapError((error) => new AiError(OpenAiParts.describeAiError(error))),
            Effect.timeoutFail({ duration: timeout, onTimeout: timedOut("embeddings request") }),
            Effect.flatMap((vectors) => Effect.forEach(vectors, (vector) => unit(vector, dimensions)))
          )

    const answer = (input: AnswerInput): Stream.Stream<string, AiError> =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
          const request = HttpClientRequest.post("/chat/completions").pipe(
            HttpClientRequest.bodyUnsafeJson({
              model: options.chatModel,
              stream: true,
              messages: OpenAiParts.answerMessages(input)
            })
          )
          const response = yield* http.execute(request).pipe(
            Effect.mapError((error) => new AiError(OpenAiParts.requestFailed("answer request", error))),
            Effect.timeoutFail({ duration: timeout, onTimeout: timedOut("answer request") })
          )
          if (response.status < 200 || response.status >= 300) {
            const body = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
            return yield* new AiError({
              message: `answer request answered ${response.status}${body ? `: ${body.slice(0, 300)}` : ""}`,
              transient: OpenAiParts.isTransientStatus(response.status)
            })
          }
          return response.stream.pipe(
            Stream.mapError(() => new AiError({ message: "the answer stream broke off", transient: true })),
            Stream.decodeText(),
            Sse.events,
            Stream.takeWhile((data) => data.trim() !== "[DONE]"),
            Stream.mapEffect((data) =>
              Schema.decodeUnknown(OpenAiParts.ChatChunk)(data).pipe(
                Effect.mapError(() => new AiError({ message: "the answer stream holds an event that is not a chat completion chunk", transient: false }))
              )
            ),
            Stream.mapConcat((chunk) => chunk.choices.flatMap((choice) => (choice.delta.content ? [choice.delta.content] : []))),
            // a server that falls silent mid-answer fails like one that never answers
            Stream.timeoutFail(timedOut("answer stream"), timeout)
          )
        })
      )

    const transcriptionTimeout = options.transcriptionTimeout ?? Duration.minutes(10)

    /** A multipart upload to `/audio/transcriptions`; `verbose_json` also gives the audio's duration. */
    const transcribe = (audio: AudioInput): Effect.Effect<Transcript, AiError> =>
      Effect.gen(function* () {
        const form = new FormData()
        form.append("file", new Blob([new Uint8Array(audio.bytes)], { type: audio.contentType }), audio.filename)
        form.append("model", options.transcriptionModel ?? "whisper-1")
        form.append("response_format", "verbose_json")
        const request = HttpClientRequest.post("/audio/transcriptions").pipe(HttpClientRequest.bodyFormData(form))
        const response = yield* http.execute(request).pipe(
          Effect.mapError((error) => new AiError(OpenAiParts.requestFailed("transcription request", error)))
        )
        if (response.status < 200 || response.status >= 300) {
          const body = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
          return yield* new AiError({
            message: `transcription request answered ${response.status}${body ? `: ${body.slice(0, 300)}` : ""}`,
            transient: OpenAiParts.isTransientStatus(response.status)
          })
        }
        const reply = yield* HttpClientResponse.schemaBodyJson(OpenAiParts.TranscriptionReply)(response).pipe(
          Effect.mapError(() => new AiError({ message: "transcription response has no `text`", transient: false }))
        )
        return { text: reply.text, seconds: reply.duration }
      }).pipe(
        Effect.scoped,
        Effect.timeoutFail({ duration: transcriptionTimeout, onTimeout: timedOut("transcription request", transcriptionTimeout) })
      )

    return tag.of({ provider: "openai", dimensions, embeddingModel: options.embeddingModel, categorize, generateQa, embed, answer, transcribe })
  })
  return Layer.effect(tag, service).pipe(Layer.provide(embeddings), Layer.provide(client))
}

const unit = (vector: ReadonlyArray<number>, dimensions: number): Effect.Effect<ReadonlyArray<number>, AiError> => {
  if (vector.length !== dimensions) {
    return Effect.fail(
      new AiError({ message: `the embedding model returned ${vector.length} dimensions, ${dimensions} expected`, transient: false })
    )
  }
  let norm = 0
  for (const x of vector) norm += x * x
  if (!(norm > 0) || !Number.isFinite(norm)) {
    return Effect.fail(new AiError({ message: "the embedding model returned a zero or invalid vector", transient: false }))
  }
  const scale = 1 / Math.sqrt(norm)
  return Effect.succeed(vector.map((x) => x * scale))
}
