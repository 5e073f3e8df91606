/**
 * The hand-off as `/v1` sees it: a conversation handed off to people (escalated from the widget) is answered
 * without a reply on `POST /v1/agents/{id}/messages` too, lists and reads show its `handoff`, a member's
 * answer is a `member` message in the history, release gives it back, and the idle timeout leaves a
 * handed-off conversation open.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { eventually } from "../support/eventually.js"
import { Harness, testServer } from "../support/harness.js"
import { addQa, sse, types } from "./support.js"

const shop = "https://shop.example.com"
const widget = { origin: shop }
const idleMinutes = 30

layer(testServer({ conversationIdleMinutes: idleMinutes }))("conversations in hand-off", (it) => {
  it.effect("/v1 sends get no reply while handed off; reads show the hand-off; release gives it back", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* h.call("POST", "/v1/agents", {
        key: ws.secretTest,
        body: { type: "support", name: "Shop bot", allowed_origins: [shop] }
      })
      const agentId = agent.body.data.id as string
      yield* addQa(h, ws.secretTest, agentId, "How long does delivery take?", "Orders arrive within five business days.")

      // a conversation of the API: no hand-off
      const plain = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: "How long does delivery take?", stream: false }
      })
      expect(plain.status, plain.text).toBe(201)
      const apiConversation = plain.body.data.conversation_id as string
      const read = yield* h.call("GET", `/v1/conversations/${apiConversation}`, { key: ws.secretTest })
      expect(read.body.data.handoff).toBeNull()

      // a widget conversation, escalated
      const opened = yield* h.call("POST", `/widget/v1/agents/${agentId}/conversations`, { key: ws.widgetTest, headers: widget, body: {} })
      const conversationId = opened.body.data.id as string
      const escalation = yield* h.call("POST", `/widget/v1/agents/${agentId}/conversations/${conversationId}/escalate`, {
        key: ws.widgetTest,
        headers: widget,
        body: { visitor_email: "vera@example.com" }
      })
      expect(escalation.status, escalation.text).toBe(201)
      const ticket = escalation.body.data.ticket.public_id as string

      // the list shows it
      const listed = yield* h.call("GET", `/v1/conversations?agent_id=${agentId}`, { key: ws.secretTest })
      const row = listed.body.data.find((c: any) => c.id === conversationId)
      expect(row.handoff).toMatchObject({ status: "requested", ticket_public_id: ticket })
      expect(listed.body.data.find((c: any) => c.id === apiConversation).handoff).toBeNull()

      // its first message, through /v1: started, stored, on the ticket, no reply and no credit
      const sent = yield* sse(h, `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: "Where is my parcel?", conversation_id: conversationId }
      })
      expect(types(sent.events)).toEqual(["conversation", "handoff", "done"])
      expect(sent.events[2]!.data.usage.credits).toBe(0)
      const thread = yield* h.call("GET", `/v1/tickets/${ticket}/messages`, { key: ws.secretTest })
      expect(thread.body.data.map((m: any) => [m.author_type, m.body])).toEqual([["visitor", "Where is my parcel?"]])
      const started = (yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })).body.data
      expect(started.message_count).toBe(1)

      // a member answers; the hand-off is active and the answer is a member message
      const answer = yield* h.call("POST", `/v1/tickets/${ticket}/messages`, {
        key: ws.secretTest,
        headers: { "service-member-id": "mem_ada" },
        body: { body: "It left today." }
      })
      expect(answer.status, answer.text).toBe(201)
      const active = (yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })).body.data
      expect(active.handoff.status).toBe("active")
      expect(active.messages.map((m: any) => [m.role, m.content])).toEqual([
        ["user", "Where is my parcel?"],
        ["member", "It left today."]
      ])

      // the idle time passes: a handed-off conversation stays open
      yield* TestClock.adjust(`${idleMinutes + 1} minutes`)
      const still = yield* eventually(
        Effect.map(h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest }), (r) => r.body.data),
        (c) => c.status === "open",
        { label: "still open" }
      )
      expect(still.status).toBe("open")

      // release: the agent replies again, with the member's answer in its history
      const released = yield* h.call("POST", `/v1/conversations/${conversationId}/release`, { key: ws.secretTest })
      expect(released.status, released.text).toBe(200)
      expect(released.body.data.handoff.status).toBe("closed")
      const reply = yield* sse(h, `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: "How long does delivery take?", conversation_id: conversationId }
      })
      expect(types(reply.events)).toContain("token")
      expect(types(reply.events).at(-1)).toBe("done")
      expect(reply.events.at(-1)!.data.conversation_id).toBe(conversationId)

      // after release the idle timeout ends it again
      yield* TestClock.adjust(`${idleMinutes + 1} minutes`)
      yield* eventually(
        Effect.map(h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest }), (r) => r.body.data.status),
        (status) => status === "ended",
        { label: "ended once released" }
      )

      // unknown conversation
      const missing = yield* h.call("POST", "/v1/conversations/cnv_doesnotexist0000000000/release", { key: ws.secretTest })
      expect(missing.status).toBe(404)
    })
  )
})
