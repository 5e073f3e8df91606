/**
 * Text sources through the API on the `openai` provider (the layer `AI_PROVIDER=openai` builds), its server a
 * fake OpenAI-compatible one on 127.0.0.1 whose model answers off-spec: one category for a one-paragraph text and
 * Q&A in a Markdown fence without categories make an `indexed` source of what the model gave; prose twice makes
 * one of the local drafts. A server nobody listens on fails the source, after the retry budget (TestClock),
 * with a reason a person reads.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as Extract from "../../layers/ai/Extract.js"
import { MAX_ATTEMPTS, retryDelayMillis } from "../../src/knowledge/Pipeline.js"
import { eventually } from "../support/eventually.js"
import { fakeOpenAi, fakeProvider, makeFakeModel, unreachableBaseUrl } from "../support/fakeOpenAi.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { createAgent, eventsOfType, source, waitSettled } from "./support.js"


const model = makeFakeModel()
const onFake = Layer.unwrapScoped(Effect.map(fakeOpenAi(model), (fake) => fakeProvider(fake.baseUrl)))
const onNothing = Layer.unwrapEffect(Effect.map(unreachableBaseUrl, fakeProvider))

const paragraph = {
  title: "Delivery",
  content: "Delivery takes two days. Every order travels by courier.\n\nReturns are free within thirty days of delivery."
}

/** A new agent and a text source on it; the source's id. */
const textSource = (h: HarnessShape, key: string) =>
  Effect.gen(function* () {
    const agentId = yield* createAgent(h, key)
    const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, { key, body: { type: "text", ...paragraph } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    return { agentId, id: created.body.data.id as string }
  })

const listed = (h: HarnessShape, key: string, path: string) =>
  Effect.map(h.call("GET", `${path}?limit=100`, { key }), (r) => r.body.data as Array<any>)

layer(testServer({}, { ai: onFake }))("openai provider, a model off the asked shape", (it) => {
  it.effect("one category for a one-paragraph text and fenced Q&A without a category: indexed with what the model gave", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      model.replies.push(
        JSON.stringify({ categories: [{ name: "Delivery", description: "How orders reach customers", confidence: 0.8 }] }),
        "```json\n" +
          JSON.stringify({
            qa: [
              { question: "How long does delivery take?", answer: "Two days." },
              { question: "Are returns free?", answer: "Yes, within thirty days.", category: "Delivery" }
            ]
          }) +
          "\n```"
      )
      const { agentId, id } = yield* textSource(h, key)
      const [done] = yield* waitSettled(h, key, agentId, [id])
      expect(done, JSON.stringify(done)).toMatchObject({ status: "indexed", attempts: 1, error: null, qa_count: 2 })
      expect(done.chunk_count).toBeGreaterThan(0)

      const categories = yield* listed(h, key, `/v1/agents/${agentId}/categories`)
      expect(categories.map((c) => [c.name, c.description])).toEqual([["Delivery", "How orders reach customers"]])
      const qa = yield* listed(h, key, `/v1/agents/${agentId}/qa`)
      expect(qa.map((q) => [q.question, q.category_id]).sort()).toEqual([
        ["Are returns free?", categories[0].id],
        ["How long does delivery take?", null]
      ])
      const indexed = yield* eventsOfType(ws.workspace.id, "knowledge.source.indexed")
      expect(indexed.map((e) => e.data.source.id)).toEqual([id])
    })
  )

  it.effect("prose twice for each step: the local drafts are used and the source is indexed", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const asked = model.chats.length
      model.replies.push(...Array.from({ length: 4 }, () => "I am sorry, I can only answer in plain words."))
      const { agentId, id } = yield* textSource(h, key)
      const [done] = yield* waitSettled(h, key, agentId, [id])
      const doc = { title: paragraph.title, text: paragraph.content }
      const drafts = Extract.categories(doc)
      const drafted = Extract.qa(doc, drafts)
      expect(drafted.length).toBeGreaterThan(0)
      expect(done, JSON.stringify(done)).toMatchObject({ status: "indexed", attempts: 1, error: null, qa_count: drafted.length })
      // asked and asked again, for categories and for Q&A
      expect(model.chats.length - asked).toBe(4)

      const categories = yield* listed(h, key, `/v1/agents/${agentId}/categories`)
      expect(categories.map((c) => c.name)).toEqual(drafts.map((c) => c.name))
      const qa = yield* listed(h, key, `/v1/agents/${agentId}/qa`)
      expect(qa.map((q) => q.question).sort()).toEqual(drafted.map((q) => q.question).sort())
    })
  )
})

layer(testServer({}, { ai: onNothing }))("openai provider, a server out of reach", (it) => {
  it.effect("the source is retried on the Clock, then fails with the reason once the retry budget is spent", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const { agentId, id } = yield* textSource(h, key)
      const read = source(h, key, agentId, id)
      for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
        const waiting = yield* eventually(read, (s) => s.attempts === attempt && s.next_attempt_at !== null, { label: `wait ${attempt}` })
        expect(waiting).toMatchObject({ status: "pending", error_code: "ai_failed" })
        yield* TestClock.adjust(retryDelayMillis(attempt))
      }
      const [failed] = yield* waitSettled(h, key, agentId, [id])
      expect(failed).toMatchObject({
        status: "failed",
        attempts: MAX_ATTEMPTS,
        error_code: "ai_failed",
        error: "AI step failed: chat request failed: the server could not be reached (ECONNREFUSED)"
      })
      const events = yield* eventsOfType(ws.workspace.id, "knowledge.source.failed")
      expect(events.map((e) => e.data.error)).toEqual([{ code: "ai_failed", message: failed.error }])
    })
  )
})
