/**
 * An OpenAI-compatible server on 127.0.0.1 whose model answers off-spec on demand: each chat completion takes
 * the next content of `replies` as its reply, and with none left answers the shape asked for. Embeddings have 8
 * dimensions. Also a base URL nothing listens on, for a server out of reach.
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { createServer } from "node:net"
import * as Ai from "../../layers/Ai.js"
import { json, loopbackServer } from "./loopback.js"

export const fakeDimensions = 8

export interface FakeModel {
  /** Contents of the next chat completions, the first first. */
  readonly replies: Array<string>
  /** Every chat completion request's messages, in arrival order. */
  readonly chats: Array<ReadonlyArray<{ readonly role: string; readonly content: string }>>
}

export const makeFakeModel = (): FakeModel => ({ replies: [], chats: [] })

/** The reply asked for: three categories, or two Q&A in the first two categories the prompt names. */
const onSpec = (system: string): string => {
  if (system.includes('"categories"')) {
    return JSON.stringify({
      categories: [
        { name: "Shipping", description: "Delivery times and costs" },
        { name: "Returns", description: "Sending items back" },
        { name: "Payments", description: "Cards and invoices" }
      ]
    })
  }
  const names: Array<string> = JSON.parse(/(\[.*\])\.\s*$/m.exec(system)?.[1] ?? "[]")
  return JSON.stringify({
    qa: [
      { question: "How long does delivery take?", answer: "Two days.", category: names[0] ?? null },
      { question: "Can I return an item?", answer: "Within thirty days.", category: names[1] ?? null }
    ]
  })
}

/** An embeddings answer: `size` dimensions, not of unit length (the provider normalises), one vector a text. */
export const embeddingsBody = (model: string, inputs: ReadonlyArray<string>, size: number = fakeDimensions) => ({
  object: "list",
  model,
  data: inputs.map((text, index) => ({
    object: "embedding",
    index,
    embedding: Array.from({ length: size }, (_, i) => (i === text.length % size ? 3 : 0) + (i === 0 ? 4 : 0))
  })),
  usage: { prompt_tokens: inputs.length, total_tokens: inputs.length }
})

/** A chat completion whose one choice says `content`. */
export const completionBody = (model: string, content: string) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1_700_000_000,
  model,
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }]
})

/** The `openai` provider pointed at `baseUrl`, with the fake's dimensions. */
export const fakeProvider = (baseUrl: string) =>
  Ai.layerOpenAi({
    baseUrl,
    apiKey: Redacted.make("sk-test-key"),
    chatModel: "test-chat",
    embeddingModel: "test-embed",
    dimensions: fakeDimensions
  })

export const fakeOpenAi = (model: FakeModel = makeFakeModel()) =>
  Effect.map(
    loopbackServer((request, res) => {
      const body = JSON.parse(request.body)
      if (request.path === "/v1/embeddings") {
        const inputs: Array<string> = body.input
        return json(res, 200, embeddingsBody(body.model, inputs))
      }
      if (request.path === "/v1/chat/completions") {
        model.chats.push(body.messages)
        const content = model.replies.shift() ?? onSpec(body.messages[0].content)
        return json(res, 200, completionBody(body.model, content))
      }
      json(res, 404, { error: { message: "not found" } })
    }),
    (loopback) => ({ ...model, baseUrl: `${loopback.origin}/v1` })
  )

/** A base URL on 127.0.0.1 whose port was just freed: connections to it are refused. */
export const unreachableBaseUrl = Effect.async<string>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(`http://127.0.0.1:${port}/v1`)))
  })
})
