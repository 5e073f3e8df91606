/**
 * The visitor's rating of a reply through the widget surface: a conversation the widget opened with the path's
 * agent, read back on `/v1`; foreign origins, secret keys, another agent's or an `api` conversation refused.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { addQa } from "../conversations/support.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { eventsOf } from "../tickets/support.js"

const shop = "https://shop.example.com"
const base = (agentId: string) => `/widget/v1/agents/${agentId}`

const createAgent = (h: HarnessShape, key: string) =>
  Effect.gen(function* () {
    const created = yield* h.call("POST", "/v1/agents", {
      key,
      body: { type: "support", name: "Rated bot", allowed_origins: [shop] }
    })
    expect(created.status, created.text).toBe(201)
    const agentId = created.body.data.id as string
    yield* addQa(h, key, agentId, "How long does delivery take?", "Orders arrive within five business days anywhere in Europe.")
    return agentId
  })

/** A widget conversation with one question and its reply. */
const chatted = (h: HarnessShape, agentId: string, widgetKey: string) =>
  Effect.gen(function* () {
    const opened = yield* h.call("POST", `${base(agentId)}/conversations`, { key: widgetKey, headers: { origin: shop }, body: {} })
    expect(opened.status, opened.text).toBe(201)
    const conversationId = opened.body.data.id as string
    const reply = yield* h.call("POST", `${base(agentId)}/conversations/${conversationId}/messages`, {
      key: widgetKey,
      headers: { origin: shop },
      body: { message: "How long does delivery take?", stream: false }
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data.feedback).toBeNull()
    return { conversationId, replyId: reply.body.data.id as string }
  })

const rate = (
  h: HarnessShape,
  agentId: string,
  conversationId: string,
  messageId: string,
  key: string,
  body: unknown,
  headers: Record<string, string> = { origin: shop }
) => h.call("POST", `${base(agentId)}/conversations/${conversationId}/messages/${messageId}/feedback`, { key, headers, body })

layer(testServer())("widget reply ratings", (it) => {
  describe("POST /widget/v1/agents/{agent_id}/conversations/{conversation_id}/messages/{message_id}/feedback", () => {
    it.effect("the visitor marks a reply not helpful, then helpful, then clears it; /v1 reads it; message.feedback each time", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        const { conversationId, replyId } = yield* chatted(h, agentId, ws.widgetTest)

        const down = yield* rate(h, agentId, conversationId, replyId, ws.widgetTest, { rating: "down", comment: "Not my country" })
        expect(down.status, down.text).toBe(200)
        expect(down.headers.get("access-control-allow-origin")).toBe(shop)
        expect(down.body.data).toMatchObject({
          id: replyId,
          role: "assistant",
          feedback: { rating: "down", comment: "Not my country", updated_at: expect.any(String) }
        })
        const read = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
        expect(read.body.data.messages.map((m: any) => m.feedback)).toEqual([null, down.body.data.feedback])

        const up = yield* rate(h, agentId, conversationId, replyId, ws.widgetTest, { rating: "up" })
        expect(up.body.data.feedback).toMatchObject({ rating: "up", comment: null })
        const cleared = yield* rate(h, agentId, conversationId, replyId, ws.widgetTest, { rating: null })
        expect(cleared.status).toBe(200)
        expect(cleared.body.data.feedback).toBeNull()
        const events = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "message.feedback").map((e) => e.body.data)
        expect(events.map((e: any) => [e.conversation_id, e.message.id, e.message.feedback?.rating ?? null])).toEqual([
          [conversationId, replyId, "down"],
          [conversationId, replyId, "up"],
          [conversationId, replyId, null]
        ])
      })
    )

    it.effect("refusals: foreign origin 403, secret key 403, bad rating or long comment 400, a user message 400, others' conversations 404", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        const otherAgent = yield* createAgent(h, ws.secretTest)
        const { conversationId, replyId } = yield* chatted(h, agentId, ws.widgetTest)

        const foreign = yield* rate(h, agentId, conversationId, replyId, ws.widgetTest, { rating: "up" }, { origin: "https://evil.example.com" })
        expect(foreign.status).toBe(403)
        expect(foreign.body.error).toMatchObject({ code: "origin_not_allowed", param: "Origin" })
        const secret = yield* rate(h, agentId, conversationId, replyId, ws.secretTest, { rating: "up" })
        expect(secret.status).toBe(403)
        expect(secret.body.error.code).toBe("key_scope_mismatch")

        const bad = yield* rate(h, agentId, conversationId, replyId, ws.widgetTest, { rating: "great" })
        expect(bad.status).toBe(400)
        expect(bad.body.error).toMatchObject({ code: "parameter_invalid", param: "rating" })
        const long = yield* rate(h, agentId, conversationId, replyId, ws.widgetTest, { rating: "down", comment: "y".repeat(1_001) })
        expect(long.status).toBe(400)
        expect(long.body.error).toMatchObject({ code: "parameter_invalid", param: "comment" })
        expect(long.body.error.message).toContain("1,000")

        const read = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
        const questionId = read.body.data.messages[0].id as string
        const user = yield* rate(h, agentId, conversationId, questionId, ws.widgetTest, { rating: "up" })
        expect(user.status).toBe(400)
        expect(user.body.error).toMatchObject({ code: "parameter_invalid", param: "message_id" })

        const unknown = yield* rate(h, agentId, conversationId, "msg_doesnotexist00", ws.widgetTest, { rating: "up" })
        expect(unknown.status).toBe(404)
        expect(unknown.body.error).toMatchObject({ code: "resource_missing", param: "message_id" })
        // the conversation of another agent, or one opened with a secret key (channel api), is not the widget's
        const ofOther = yield* rate(h, otherAgent, conversationId, replyId, ws.widgetTest, { rating: "up" })
        expect(ofOther.status).toBe(404)
        expect(ofOther.body.error).toMatchObject({ code: "resource_missing", param: "conversation_id" })
        const api = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
          key: ws.secretTest,
          body: { message: "How long does delivery take?", stream: false }
        })
        const apiRated = yield* rate(h, agentId, api.body.data.conversation_id, api.body.data.id, ws.widgetTest, { rating: "up" })
        expect(apiRated.status).toBe(404)
        expect(apiRated.body.error).toMatchObject({ code: "resource_missing", param: "conversation_id" })
        expect((yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "message.feedback")).toEqual([])
      })
    )
  })
})
