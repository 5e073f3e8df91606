/**
 * The `openai` provider's streamed answers, from a fake OpenAI-compatible
 * server over real HTTP: the request it sends, the tokens it yields from SSE
 * written in awkward pieces, and its failures as `AiError`; plus the SSE
 * reader on its own.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Ai from "../../layers/Ai.js"
import { makeParser } from "../../layers/ai/Sse.js"
import { json, loopbackServer, seenJson, type SeenJson } from "../support/loopback.js"

type Mode = "ok" | "429" | "500" | "400" | "broken" | "garbage"

const chunk = (content: string | null) =>
  JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta: content === null ? {} : { content } }] })

/** Streams the answer "Two days, by courier." in SSE written byte-awkwardly (pieces split inside lines, CRLF). */
const fakeOpenAi = Effect.gen(function* () {
  const mode: { current: Mode } = { current: "ok" }
  const seen: Array<SeenJson> = []
  const loopback = yield* loopbackServer((request, res) => {
    seen.push(seenJson(request))
    if (mode.current === "429" || mode.current === "500" || mode.current === "400") {
      return json(res, Number(mode.current), { error: { message: "no" } })
    }
    res.writeHead(200, { "content-type": "text/event-stream" })
    if (mode.current === "garbage") return res.end("data: {not json}\n\n")
    const wire =
      `: keep-alive\r\n\r\n` +
      `data: ${chunk(null)}\r\n\r\n` +
      ["Two", " days,", " by", " courier."].map((t) => `data: ${chunk(t)}\n\n`).join("") +
      `data: ${chunk(null)}\n\n` +
      "data: [DONE]\n\n"
    if (mode.current === "broken") {
      res.write(wire.slice(0, 120))
      return setTimeout(() => res.destroy(), 20)
    }
    // in pieces of 7 bytes, each its own write
    let at = 0
    const next = () => {
      if (at >= wire.length) return res.end()
      res.write(wire.slice(at, at + 7))
      at += 7
      setImmediate(next)
    }
    next()
  })
  return { baseUrl: `${loopback.origin}/v1`, seen, mode }
})

const input: Ai.AnswerInput = {
  instructions: "Be brief.",
  question: "How long does delivery take?",
  history: [
    { role: "user", content: "Hello" },
    { role: "assistant", content: "Hi! How can I help?" }
  ],
  grounding: [{ kind: "qa", title: "Delivery time?", text: "Two days.", score: 0.9 }]
}

const answerWith = (baseUrl: string) =>
  Effect.gen(function* () {
    const ai = yield* Ai.Ai
    return yield* Stream.runCollect(ai.answer(input)).pipe(Effect.map(Chunk.toReadonlyArray), Effect.either)
  }).pipe(
    Effect.provide(
      Ai.layerOpenAi({
        baseUrl,
        apiKey: Redacted.make("sk-fake"),
        chatModel: "chat-test",
        embeddingModel: "embed-test",
        timeout: "5 seconds"
      })
    )
  )

describe("openai answers", () => {
  it.live("streams the model's tokens from SSE and sends the grounded conversation", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const fake = yield* fakeOpenAi
        const result = yield* answerWith(fake.baseUrl)
        expect(result).toEqual(Either.right(["Two", " days,", " by", " courier."]))
        const [request] = fake.seen
        expect(request.path).toBe("/v1/chat/completions")
        expect(request.authorization).toBe("Bearer sk-fake")
        expect(request.body.stream).toBe(true)
        expect(request.body.model).toBe("chat-test")
        const messages = request.body.messages
        expect(messages.map((m: any) => m.role)).toEqual(["system", "user", "assistant", "user"])
        expect(messages[0].content).toContain("Be brief.")
        expect(messages[0].content).toContain("Q: Delivery time?\nA: Two days.")
        expect(messages[3].content).toBe("How long does delivery take?")
      })
    )
  )

  it.live("fails as AiError: transient for 429, 5xx and a broken stream; not for 400 or garbage", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const fake = yield* fakeOpenAi
        const outcome = (mode: Mode) =>
          Effect.suspend(() => {
            fake.mode.current = mode
            return answerWith(fake.baseUrl)
          }).pipe(
            Effect.map((r) => (Either.isLeft(r) ? { transient: r.left.transient, tag: r.left._tag } : { ok: r.right }))
          )
        expect(yield* outcome("429")).toEqual({ transient: true, tag: "AiError" })
        expect(yield* outcome("500")).toEqual({ transient: true, tag: "AiError" })
        expect(yield* outcome("400")).toEqual({ transient: false, tag: "AiError" })
        expect(yield* outcome("garbage")).toEqual({ transient: false, tag: "AiError" })
        expect(yield* outcome("broken")).toEqual({ transient: true, tag: "AiError" })
      })
    )
  )
})

describe("SSE reader", () => {
  it("joins data lines, skips comments and other fields, across any split and line ending", () => {
    const wire = ": hi\r\nevent: x\r\ndata: a\r\ndata:b\r\n\r\nid: 3\ndata: {\"c\":1}\n\ndata: tail"
    for (let size = 1; size <= wire.length; size++) {
      const parser = makeParser()
      const out: Array<{ id: string | undefined; data: string }> = []
      for (let i = 0; i < wire.length; i += size) out.push(...parser.feed(wire.slice(i, i + size)))
      out.push(...parser.end())
      expect(out, `pieces of ${size}`).toEqual([
        { id: undefined, data: "a\nb" },
        { id: "3", data: '{"c":1}' },
        { id: "3", data: "tail" }
      ])
    }
  })

  it("treats a lone CR as a line end", () => {
    const parser = makeParser()
    expect([...parser.feed("data: x\r\rdata: y\r"), ...parser.feed("\r")].map((m) => m.data)).toEqual(["x", "y"])
  })
})
