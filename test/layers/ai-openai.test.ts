import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import * as Ai from "../../layers/Ai.js"
import { eventually } from "../support/eventually.js"
import { json, loopbackServer, seenJson, type SeenJson } from "../support/loopback.js"

type Mode = "ok" | "429" | "500" | "400" | "hang" | "not-json" | "wrong-dimensions"

/** An OpenAI-compatible server on 127.0.0.1: chat completions in JSON mode and embeddings of 8 dimensions. */
const fakeOpenAi = Effect.gen(function* () {
  const mode: { current: Mode } = { current: "ok" }
  const seen: Array<SeenJson> = []
  const loopback = yield* loopbackServer((request, res) => {
    seen.push(seenJson(request))
    const body = JSON.parse(request.body)
    if (mode.current === "hang") return
    if (mode.current === "429") return json(res, 429, { error: { message: "Rate limit reached", type: "requests" } })
    if (mode.current === "500") return json(res, 500, { error: { message: "The server had an error" } })
    if (mode.current === "400") return json(res, 400, { error: { message: "Invalid model", type: "invalid_request_error" } })
    if (request.path === "/v1/embeddings") {
      const inputs: Array<string> = body.input
      const size = mode.current === "wrong-dimensions" ? 4 : 8
      return json(res, 200, {
        object: "list",
        model: body.model,
        // not unit length: the provider normalises
        data: inputs.map((text, index) => ({
          object: "embedding",
          index,
          embedding: Array.from({ length: size }, (_, i) => (i === text.length % size ? 3 : 0) + (i === 0 ? 4 : 0))
        })),
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length }
      })
    }
    if (request.path === "/v1/chat/completions") {
      const system: string = body.messages[0].content
      const content =
        mode.current === "not-json"
          ? "Sure! Here are some categories: Shipping, Returns."
          : system.includes('"categories"')
            ? JSON.stringify({
                categories: [
                  { name: "Shipping", description: "Delivery times and costs" },
                  { name: "Returns", description: "Returning items and refunds" },
                  { name: "shipping", description: "a duplicate, dropped" },
                  { name: "Payments", description: "Cards and invoices" }
                ]
              })
            : JSON.stringify({
                qa: [
                  { question: "How long does delivery take?", answer: "Two days.", category: "Shipping" },
                  { question: "Can I pay by card?", answer: "Yes.", category: "Made-up category" },
                  { question: "Who are you?", answer: "Acme.", category: null }
                ]
              })
      return json(res, 200, {
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1_700_000_000,
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }]
      })
    }
    json(res, 404, { error: { message: "not found" } })
  })
  return { baseUrl: `${loopback.origin}/v1`, seen, mode, server: loopback.server }
})

const withProvider = <A, E>(
  body: (ai: Ai.AiShape, fake: Effect.Effect.Success<typeof fakeOpenAi>) => Effect.Effect<A, E>
) =>
  Effect.gen(function* () {
    const fake = yield* fakeOpenAi
    const layer = Ai.layerOpenAi({
      baseUrl: fake.baseUrl,
      apiKey: Redacted.make("sk-test-key"),
      chatModel: "test-chat",
      embeddingModel: "test-embed",
      dimensions: 8
    })
    return yield* Effect.flatMap(Ai.Ai, (ai) => body(ai, fake)).pipe(Effect.provide(layer))
  }).pipe(Effect.scoped)

const doc = { title: "Acme help", text: "## Shipping\n\nWe deliver in two days.\n\n## Payments\n\nCards are accepted." }

describe("openai Ai provider against an OpenAI-compatible server", () => {
  it.effect("categories and Q&A: JSON mode on /chat/completions, decoded, names kept to the given ones", () =>
    withProvider((ai, fake) =>
      Effect.gen(function* () {
        expect(ai.provider).toBe("openai")
        const categories = yield* ai.categorize(doc)
        expect(categories).toEqual([
          { name: "Shipping", description: "Delivery times and costs" },
          { name: "Returns", description: "Returning items and refunds" },
          { name: "Payments", description: "Cards and invoices" }
        ])
        const qa = yield* ai.generateQa(doc, categories)
        expect(qa).toEqual([
          { question: "How long does delivery take?", answer: "Two days.", category: "Shipping" },
          { question: "Can I pay by card?", answer: "Yes.", category: null },
          { question: "Who are you?", answer: "Acme.", category: null }
        ])
        expect(fake.seen.map((s) => s.path)).toEqual(["/v1/chat/completions", "/v1/chat/completions"])
        for (const request of fake.seen) {
          expect(request.authorization).toBe("Bearer sk-test-key")
          expect(request.body.model).toBe("test-chat")
          expect(request.body.response_format).toEqual({ type: "json_object" })
          expect(request.body.messages[1].content).toContain("We deliver in two days.")
        }
        expect(fake.seen[1]!.body.messages[0].content).toContain('["Shipping","Returns","Payments"]')
      })
    ))

  it.effect("embeddings: one unit vector per text, in order, from /embeddings", () =>
    withProvider((ai, fake) =>
      Effect.gen(function* () {
        const vectors = yield* ai.embed(["a", "bb", "ccc"])
        expect(vectors.length).toBe(3)
        for (const v of vectors) {
          expect(v.length).toBe(8)
          expect(Math.abs(Math.hypot(...v) - 1)).toBeLessThan(1e-9)
        }
        // text "a" has length 1: its extra weight sits in slot 1
        expect(vectors[0]![1]).toBeCloseTo(0.6)
        expect(vectors[1]![2]).toBeCloseTo(0.6)
        expect(fake.seen.at(-1)).toMatchObject({
          path: "/v1/embeddings",
          authorization: "Bearer sk-test-key",
          body: { model: "test-embed", input: ["a", "bb", "ccc"], dimensions: 8 }
        })
        expect(yield* ai.embed([])).toEqual([])
      })
    ))

  it.effect("429 and 500 are transient, 400 is not, on chat and on embeddings", () =>
    withProvider((ai, fake) =>
      Effect.gen(function* () {
        for (const [mode, transient] of [["429", true], ["500", true], ["400", false]] as const) {
          fake.mode.current = mode
          const chat = yield* Effect.either(Effect.asVoid(ai.categorize(doc)))
          const embed = yield* Effect.either(Effect.asVoid(ai.embed(["x"])))
          for (const result of [chat, embed]) {
            expect(Either.isLeft(result)).toBe(true)
            if (Either.isLeft(result)) {
              expect(result.left._tag).toBe("AiError")
              expect(result.left.transient).toBe(transient)
              expect(result.left.message).toContain(mode)
              expect(result.left.message).not.toContain("sk-test-key")
            }
          }
        }
      })
    ))

  it.effect("a reply that is not the JSON asked for, twice, gives the local drafts; vectors of another length fail for good", () =>
    withProvider((ai, fake) =>
      Effect.gen(function* () {
        fake.mode.current = "not-json"
        expect(yield* ai.categorize(doc)).toEqual(yield* Ai.makeLocal().categorize(doc))
        // asked, then asked again with the reason
        expect(fake.seen.length).toBe(2)
        fake.mode.current = "wrong-dimensions"
        const embed = yield* Effect.flip(ai.embed(["x"]))
        expect(embed).toMatchObject({ _tag: "AiError", transient: false, message: "the embedding model returned 4 dimensions, 8 expected" })
      })
    ))

  it.effect("a server that never answers times out as transient (TestClock)", () =>
    withProvider((ai, fake) =>
      Effect.gen(function* () {
        fake.mode.current = "hang"
        const fiber = yield* Effect.fork(Effect.either(ai.categorize(doc)))
        yield* eventually(Effect.sync(() => fake.seen.length), (n) => n === 1, { label: "request reached the server" })
        yield* TestClock.adjust("61 seconds")
        const result = yield* Fiber.join(fiber)
        expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "AiError", transient: true })
        expect(Either.isLeft(result) && result.left.message).toContain("timed out")
      })
    ))
})
