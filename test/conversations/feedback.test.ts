/**
 * Ratings of replies with a secret key: `POST /v1/conversations/{id}/messages/{message_id}/feedback` sets, changes
 * and clears an assistant reply's `feedback`, read back wherever messages are; `message.feedback` for each change and
 * none for the same rating again; user messages, unknown ones, bad ratings and long comments refused.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Harness, type HarnessShape } from "../support/harness.js"
import { testServer } from "../support/harness.js"
import { eventsOf } from "../tickets/support.js"
import { knowledgeableAgent } from "./support.js"

/** A conversation with one question and its reply, through the API. */
const answered = (h: HarnessShape, key: string) =>
  Effect.gen(function* () {
    const { agentId } = yield* knowledgeableAgent(h, key)
    const reply = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
      key,
      body: { message: "How long does delivery take?", stream: false }
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data.feedback).toBeNull()
    const conversationId = reply.body.data.conversation_id as string
    const read = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key })
    const [question, answer] = read.body.data.messages
    return { agentId, conversationId, questionId: question.id as string, replyId: answer.id as string }
  })

const rate = (h: HarnessShape, key: string, conversationId: string, messageId: string, body: unknown) =>
  h.call("POST", `/v1/conversations/${conversationId}/messages/${messageId}/feedback`, { key, body })

const feedbackEvents = (workspaceId: string) =>
  Effect.map(eventsOf(workspaceId), (events) => events.filter((e) => e.type === "message.feedback").map((e) => e.body.data))

layer(testServer())("reply ratings on /v1", (it) => {
  describe("POST /v1/conversations/{id}/messages/{message_id}/feedback", () => {
    it.effect("rates, changes and clears a reply; the conversation reads it back; an event each change, none for the same again", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { conversationId, questionId, replyId } = yield* answered(h, ws.secretTest)

        const up = yield* rate(h, ws.secretTest, conversationId, replyId, { rating: "up" })
        expect(up.status, up.text).toBe(200)
        expect(up.body.data).toMatchObject({
          id: replyId,
          object: "message",
          role: "assistant",
          feedback: { rating: "up", comment: null, updated_at: expect.any(String) }
        })
        const read = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
        expect(read.body.data.messages.map((m: any) => [m.id, m.feedback])).toEqual([
          [questionId, null],
          [replyId, up.body.data.feedback]
        ])

        // the same rating again: the same answer, no second event
        const again = yield* rate(h, ws.secretTest, conversationId, replyId, { rating: "up" })
        expect(again.status).toBe(200)
        expect(again.body.data).toEqual(up.body.data)
        expect(yield* feedbackEvents(ws.workspace.id)).toEqual([{ message: up.body.data, conversation_id: conversationId }])

        // changed, with a comment (trimmed)
        const down = yield* rate(h, ws.secretTest, conversationId, replyId, { rating: "down", comment: "  Too vague.  " })
        expect(down.status).toBe(200)
        expect(down.body.data.feedback).toMatchObject({ rating: "down", comment: "Too vague." })
        const comment = yield* rate(h, ws.secretTest, conversationId, replyId, { rating: "down", comment: "Wrong country." })
        expect(comment.body.data.feedback.comment).toBe("Wrong country.")

        // cleared, twice: one event
        const cleared = yield* rate(h, ws.secretTest, conversationId, replyId, { rating: null })
        expect(cleared.status).toBe(200)
        expect(cleared.body.data.feedback).toBeNull()
        yield* rate(h, ws.secretTest, conversationId, replyId, { rating: null, comment: "ignored" })
        const events = yield* feedbackEvents(ws.workspace.id)
        expect(events.map((e: any) => e.message.feedback?.rating ?? null)).toEqual(["up", "down", "down", null])
        expect(events.every((e: any) => e.conversation_id === conversationId && e.message.id === replyId)).toBe(true)
        const after = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
        expect(after.body.data.messages.map((m: any) => m.feedback)).toEqual([null, null])
      })
    )

    it.effect("refusals: a user message, a bad rating, a long comment 400; unknown messages and conversations 404", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const other = yield* h.seed()
        const { conversationId, questionId, replyId } = yield* answered(h, ws.secretTest)

        const user = yield* rate(h, ws.secretTest, conversationId, questionId, { rating: "up" })
        expect(user.status).toBe(400)
        expect(user.body.error).toMatchObject({ code: "parameter_invalid", param: "message_id" })
        expect(user.body.error.message).toContain("Only an assistant reply can be rated")

        for (const [body, param] of [
          [{ rating: "meh" }, "rating"],
          [{ rating: 1 }, "rating"],
          [{}, "rating"],
          [{ rating: "up", comment: "x".repeat(1_001) }, "comment"],
          [{ rating: "up", comment: 5 }, "comment"],
          [{ rating: "up", stars: 5 }, "stars"]
        ] as const) {
          const reply = yield* rate(h, ws.secretTest, conversationId, replyId, body)
          expect(reply.status, JSON.stringify(body)).toBe(400)
          expect(reply.body.error.param, JSON.stringify(body)).toBe(param)
        }
        const longest = yield* rate(h, ws.secretTest, conversationId, replyId, { rating: "up", comment: "x".repeat(1_000) })
        expect(longest.status).toBe(200)

        const unknown = yield* rate(h, ws.secretTest, conversationId, "msg_doesnotexist00", { rating: "up" })
        expect(unknown.status).toBe(404)
        expect(unknown.body.error).toMatchObject({ code: "resource_missing", param: "message_id" })
        const noConversation = yield* rate(h, ws.secretTest, "cnv_doesnotexist00", replyId, { rating: "up" })
        expect(noConversation.status).toBe(404)
        expect(noConversation.body.error).toMatchObject({ code: "resource_missing", param: "id" })
        // another workspace's key does not see it
        const elsewhere = yield* rate(h, other.secretTest, conversationId, replyId, { rating: "down" })
        expect(elsewhere.status).toBe(404)
        // a key without write:conversations
        const narrow = yield* ws.key({ kind: "secret", scopes: ["read:conversations"] })
        const readOnly = yield* rate(h, narrow.secret, conversationId, replyId, { rating: "down" })
        expect(readOnly.status).toBe(403)
        expect(readOnly.body.error.code).toBe("key_scope_mismatch")
        expect((yield* feedbackEvents(ws.workspace.id)).map((e: any) => e.message.feedback.rating)).toEqual(["up"])
      })
    )
  })
})
