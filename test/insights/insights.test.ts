/**
 * Reply outcomes and an agent's insights. Each reply says what it was (`answered`, `fallback`, `handed_off`)
 * wherever it is read (/v1, /widget/v1, the `done` event, `message.feedback`), and conversations filter by it;
 * `GET /v1/agents/{id}/insights` counts a seeded set of conversations over days moved on the TestClock, groups
 * its unanswered questions, lists the replies rated down, and refuses bad periods; a Q&A item written for a
 * group ("Answer this") makes the same question answered.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { Harness, type HarnessShape } from "../support/harness.js"
import { testServer } from "../support/harness.js"
import { eventsOf } from "../tickets/support.js"
import { addQa, sse, types } from "../conversations/support.js"

const shop = "https://shop.example.com"
const widget = { origin: shop }

const shopAgent = (h: HarnessShape, key: string) =>
  Effect.gen(function* () {
    const agent = yield* h.call("POST", "/v1/agents", {
      key,
      body: { type: "support", name: "Shop bot", allowed_origins: [shop], widget: { handoff: true } }
    })
    expect(agent.status, agent.text).toBe(201)
    const agentId = agent.body.data.id as string
    yield* addQa(h, key, agentId, "How long does delivery take?", "Orders arrive within five business days.")
    return agentId
  })

/** A message through /v1, answered as JSON. */
const ask = (h: HarnessShape, key: string, agentId: string, message: string, conversationId?: string) =>
  Effect.gen(function* () {
    const reply = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
      key,
      body: { message, stream: false, ...(conversationId === undefined ? {} : { conversation_id: conversationId }) }
    })
    expect(reply.status, reply.text).toBe(201)
    return reply.body.data as { id: string; conversation_id: string; outcome: string | null }
  })

/** A widget conversation with one question, escalated to people. */
const escalated = (h: HarnessShape, key: string, agentId: string, question: string) =>
  Effect.gen(function* () {
    const opened = yield* h.call("POST", `/widget/v1/agents/${agentId}/conversations`, { key, headers: widget, body: {} })
    const conversationId = opened.body.data.id as string
    const reply = yield* h.call("POST", `/widget/v1/agents/${agentId}/conversations/${conversationId}/messages`, {
      key,
      headers: widget,
      body: { message: question, stream: false }
    })
    expect(reply.status, reply.text).toBe(201)
    const escalation = yield* h.call("POST", `/widget/v1/agents/${agentId}/conversations/${conversationId}/escalate`, {
      key,
      headers: widget,
      body: { visitor_email: "vera@example.com" }
    })
    expect(escalation.status, escalation.text).toBe(201)
    return { conversationId, replyId: reply.body.data.id as string, firstOutcome: reply.body.data.outcome as string }
  })

const rate = (h: HarnessShape, key: string, conversationId: string, messageId: string, body: unknown) =>
  h.call("POST", `/v1/conversations/${conversationId}/messages/${messageId}/feedback`, { key, body })

const today = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString().slice(0, 10))

layer(testServer())("reply outcomes and insights", (it) => {
  describe("outcomes", () => {
    it.effect("answered, fallback and handed_off on /v1, the widget, the done event, feedback events and the list filter", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const agentId = yield* shopAgent(h, key)

        const answered = yield* ask(h, key, agentId, "How long does delivery take?")
        expect(answered.outcome).toBe("answered")
        const fallback = yield* ask(h, key, agentId, "Can I pay with bitcoin?")
        expect(fallback.outcome).toBe("fallback")

        // the stream's done says it too
        const streamed = yield* sse(h, `/v1/agents/${agentId}/messages`, { key, body: { message: "How long does delivery take?" } })
        expect(streamed.events.at(-1)!.data).toMatchObject({ type: "done", outcome: "answered" })
        const declined = yield* sse(h, `/v1/agents/${agentId}/messages`, { key, body: { message: "Is the moon made of cheese?" } })
        expect(types(declined.events)).toContain("escalation")
        expect(declined.events.at(-1)!.data).toMatchObject({ type: "done", outcome: "fallback" })

        // read back: the reply's outcome, null on the user's message
        const read = yield* h.call("GET", `/v1/conversations/${fallback.conversation_id}`, { key })
        expect(read.body.data.messages.map((m: any) => [m.role, m.outcome])).toEqual([
          ["user", null],
          ["assistant", "fallback"]
        ])

        // escalated from the widget: the last reply was handed off; a message in the hand-off is answered by people
        const handed = yield* escalated(h, ws.widgetTest, agentId, "Where is my parcel?")
        expect(handed.firstOutcome).toBe("fallback")
        const widgetRead = yield* h.call("GET", `/widget/v1/agents/${agentId}/conversations/${handed.conversationId}`, {
          key: ws.widgetTest,
          headers: widget
        })
        expect(widgetRead.status, widgetRead.text).toBe(200)
        expect(widgetRead.body.data.messages.map((m: any) => [m.role, m.outcome])).toEqual([
          ["user", null],
          ["assistant", "handed_off"]
        ])
        const inHandoff = yield* sse(h, `/v1/agents/${agentId}/messages`, {
          key,
          body: { message: "Hello?", conversation_id: handed.conversationId }
        })
        expect(types(inHandoff.events)).toEqual(["conversation", "handoff", "done"])
        expect(inHandoff.events.at(-1)!.data.outcome).toBe("handed_off")

        // rated: the event's message carries the outcome
        const rated = yield* rate(h, key, fallback.conversation_id, fallback.id, { rating: "down" })
        expect(rated.status, rated.text).toBe(200)
        expect(rated.body.data.outcome).toBe("fallback")
        const feedback = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "message.feedback")
        expect(feedback.map((e) => e.body.data.message.outcome)).toEqual(["fallback"])

        // the list filters by outcome: conversations with at least one such reply
        const ids = (outcome: string) =>
          Effect.map(h.call("GET", `/v1/conversations?agent_id=${agentId}&outcome=${outcome}`, { key }), (r) => {
            expect(r.status, r.text).toBe(200)
            return (r.body.data as Array<any>).map((c) => c.id as string).sort()
          })
        expect(yield* ids("handed_off")).toEqual([handed.conversationId])
        expect(yield* ids("fallback")).toEqual(
          [fallback.conversation_id, declined.events[0]!.data.conversation_id as string].sort()
        )
        expect(yield* ids("answered")).toEqual(
          [answered.conversation_id, streamed.events[0]!.data.conversation_id as string].sort()
        )
        const bad = yield* h.call("GET", `/v1/conversations?outcome=maybe`, { key })
        expect(bad.status).toBe(400)
        expect(bad.body.error).toMatchObject({ code: "parameter_invalid", param: "outcome" })
      })
    )
  })

  describe("GET /v1/agents/{id}/insights", () => {
    it.effect("counts a seeded set per day, groups the unanswered questions, lists the replies rated down", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const agentId = yield* shopAgent(h, key)
        // another agent's conversations count for it only
        const other = yield* shopAgent(h, key)
        yield* ask(h, key, other, "Do you ship to Spain?")

        const first = yield* today
        const c1 = yield* ask(h, key, agentId, "Do you ship to Spain?")
        const c1b = yield* ask(h, key, agentId, "How long does delivery take?", c1.conversation_id)
        expect(c1b.outcome).toBe("answered")
        yield* rate(h, key, c1.conversation_id, c1b.id, { rating: "down", comment: "Too slow." })
        yield* TestClock.adjust("1 hour")
        const c2 = yield* ask(h, key, agentId, "do you ship to spain")
        yield* TestClock.adjust("1 hour")
        const c3 = yield* ask(h, key, agentId, "Where is my package?")
        expect([c1.outcome, c2.outcome, c3.outcome]).toEqual(["fallback", "fallback", "fallback"])

        yield* TestClock.adjust("1 day")
        const second = yield* today
        const c4 = yield* ask(h, key, agentId, "Can you ship to Spain?")
        const c5 = yield* ask(h, key, agentId, "How long does delivery take?")
        yield* rate(h, key, c5.conversation_id, c5.id, { rating: "up" })
        yield* TestClock.adjust("1 hour")
        const c6 = yield* escalated(h, ws.widgetTest, agentId, "Can I pay with bitcoin?")
        // a conversation opened but never written in is none
        yield* h.call("POST", `/widget/v1/agents/${agentId}/conversations`, { key: ws.widgetTest, headers: widget, body: {} })

        const got = yield* h.call("GET", `/v1/agents/${agentId}/insights?from=${first}&to=${second}`, { key })
        expect(got.status, got.text).toBe(200)
        const insights = got.body.data
        expect(insights).toMatchObject({ object: "insights", agent_id: agentId, from: first, to: second })
        expect(insights.totals).toEqual({
          conversations: 6,
          replies: { answered: 2, fallback: 4, handed_off: 1 },
          ratings: { up: 1, down: 1 },
          handoffs: 1
        })
        expect(insights.days).toEqual([
          {
            date: first,
            conversations: 3,
            replies: { answered: 1, fallback: 3, handed_off: 0 },
            ratings: { up: 0, down: 1 },
            handoffs: 0
          },
          {
            date: second,
            conversations: 3,
            replies: { answered: 1, fallback: 1, handed_off: 1 },
            ratings: { up: 1, down: 0 },
            handoffs: 1
          }
        ])
        expect(insights.unanswered_sampled).toBe(false)
        expect(insights.unanswered.map((g: any) => [g.question, g.count, g.conversation_ids])).toEqual([
          // the most asked wording (the two "do you ship to spain" fold together), the latest of them as written
          ["do you ship to spain", 3, [c4.conversation_id, c2.conversation_id, c1.conversation_id]],
          ["Can I pay with bitcoin?", 1, [c6.conversationId]],
          ["Where is my package?", 1, [c3.conversation_id]]
        ])
        expect(insights.rated_down).toEqual([
          {
            message_id: c1b.id,
            conversation_id: c1.conversation_id,
            question: "How long does delivery take?",
            reply: expect.stringContaining("five business days"),
            outcome: "answered",
            comment: "Too slow.",
            created_at: expect.any(String),
            rated_at: expect.any(String)
          }
        ])

        // one day of it; the default period (the last 30 days to today) holds both
        const one = (yield* h.call("GET", `/v1/agents/${agentId}/insights?from=${second}&to=${second}`, { key })).body.data
        expect(one.days).toHaveLength(1)
        expect(one.totals.conversations).toBe(3)
        expect(one.unanswered.map((g: any) => g.count)).toEqual([1, 1])
        const recent = (yield* h.call("GET", `/v1/agents/${agentId}/insights`, { key })).body.data
        expect(recent.days).toHaveLength(30)
        expect(recent.to).toBe(second)
        expect(recent.totals).toEqual(insights.totals)

        // "Answer this": a Q&A item for the group's question, and the same question is answered at once
        yield* addQa(h, key, agentId, insights.unanswered[0].question, "Yes: we ship to Spain within three days.")
        const again = yield* ask(h, key, agentId, "Do you ship to Spain?")
        expect(again.outcome).toBe("answered")
        const reworded = yield* ask(h, key, agentId, "Can you ship to Spain?")
        expect(reworded.outcome).toBe("answered")
        const after = (yield* h.call("GET", `/v1/agents/${agentId}/insights`, { key })).body.data
        expect(after.totals.replies.answered).toBe(4)
        expect(after.unanswered[0].count).toBe(3)
      })
    )

    it.effect("refuses bad periods in the envelope; another workspace's agent is missing", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const agentId = yield* shopAgent(h, key)
        const refused = (query: string) =>
          Effect.map(h.call("GET", `/v1/agents/${agentId}/insights?${query}`, { key }), (r) => {
            expect(r.status, r.text).toBe(400)
            expect(r.body.error.code).toBe("parameter_invalid")
            expect(r.body.meta.request_id).toMatch(/^req_/)
            return r.body.error.param as string
          })
        expect(yield* refused("from=2026-13-01")).toBe("from")
        expect(yield* refused("from=2026-02-30&to=2026-03-10")).toBe("from")
        expect(yield* refused("to=yesterday")).toBe("to")
        expect(yield* refused("from=2026-11-10&to=2026-11-01")).toBe("from")
        expect(yield* refused("from=2026-01-01&to=2026-04-01")).toBe("from")
        const longest = yield* h.call("GET", `/v1/agents/${agentId}/insights?from=2026-01-01&to=2026-03-31`, { key })
        expect(longest.status, longest.text).toBe(200)
        expect(longest.body.data.days).toHaveLength(90)

        const stranger = yield* h.seed()
        const hidden = yield* h.call("GET", `/v1/agents/${agentId}/insights`, { key: stranger.secretTest })
        expect(hidden.status).toBe(404)
        expect(hidden.body.error.code).toBe("resource_missing")
      })
    )
  })
})
