/**
 * An AI provider outage while a reply's question is embedded (retrieval): a
 * reply asked for as JSON answers `503 ai_unavailable` with `Retry-After`; a
 * streamed one has already started (its status sent), so it ends with an
 * `error` event of that code and the same wait (`retry_after`). Nothing final
 * is stored either way.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ai from "../../layers/Ai.js"
import { Harness } from "../support/harness.js"
import { testServer } from "../support/harness.js"
import { addQa, createAgent, sse, types } from "./support.js"

const question = "How long does delivery take?"

/** Embeds as the local provider does, except a reply's question: the provider times out on it. */
const outageOnQuestion = Layer.sync(Ai.Ai, () => {
  const local = Ai.makeLocal()
  return {
    ...local,
    embed: (texts: ReadonlyArray<string>) =>
      texts.includes(question)
        ? Effect.fail(new Ai.AiError({ message: "embeddings request timed out", transient: true }))
        : local.embed(texts)
  }
})

layer(testServer({}, { ai: outageOnQuestion }))("an AI outage during retrieval", (it) => {
  it.effect("a JSON reply answers 503 ai_unavailable; a streamed one ends with that error event", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      // embedded as "question\nanswer", not the question alone: this embed succeeds
      yield* addQa(h, ws.secretTest, agentId, question, "Two days.")

      const json = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: question, stream: false }
      })
      expect(json.status).toBe(503)
      expect(json.headers.get("retry-after")).toBe("5")
      expect(json.body).toEqual({
        error: {
          type: "api_error",
          code: "ai_unavailable",
          message: expect.any(String),
          doc_url: expect.stringMatching(/#ai_unavailable$/)
        },
        meta: { request_id: expect.stringMatching(/^req_/) }
      })

      const streamed = yield* sse(h, `/v1/agents/${agentId}/messages`, { key: ws.secretTest, body: { message: question } })
      expect(streamed.status).toBe(200)
      expect(types(streamed.events)).toEqual(["conversation", "error"])
      // the stream's error event carries the wait the 503 gives in Retry-After
      expect(streamed.events[1]!.data).toEqual({
        type: "error",
        code: "ai_unavailable",
        message: expect.any(String),
        retry_after: Number(json.headers.get("retry-after"))
      })
      const conversation = yield* h.call("GET", `/v1/conversations/${streamed.events[0]!.data.conversation_id}`, {
        key: ws.secretTest
      })
      expect(conversation.body.data.messages.map((m: any) => m.role)).toEqual(["user"])
    })
  )

  it.effect("the widget's JSON reply answers the same 503", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* h.call("POST", "/v1/agents", {
        key: ws.secretTest,
        body: { type: "support", name: "Widget bot", allowed_origins: ["https://shop.example"] }
      })
      const agentId = agent.body.data.id as string
      yield* addQa(h, ws.secretTest, agentId, question, "Two days.")
      const headers = { origin: "https://shop.example" }
      const opened = yield* h.call("POST", `/widget/v1/agents/${agentId}/conversations`, { key: ws.widgetTest, headers, body: {} })
      expect(opened.status).toBe(201)
      const reply = yield* h.call(
        "POST",
        `/widget/v1/agents/${agentId}/conversations/${opened.body.data.id}/messages`,
        { key: ws.widgetTest, headers, body: { message: question, stream: false } }
      )
      expect(reply.status).toBe(503)
      expect(reply.body.error.code).toBe("ai_unavailable")
    })
  )

  it.effect("the OpenAPI document lists it, with Retry-After, on both reply endpoints", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const spec = (yield* h.call("GET", "/v1/openapi.json")).body
      for (const path of ["/v1/agents/{id}/messages", "/widget/v1/agents/{agent_id}/conversations/{conversation_id}/messages"]) {
        const unavailable = spec.paths[path].post.responses["503"]
        expect(JSON.stringify(unavailable.content), path).toContain("#/components/schemas/Error_ai_unavailable")
        expect(unavailable.headers["Retry-After"], path).toBeDefined()
      }
    })
  )
})
