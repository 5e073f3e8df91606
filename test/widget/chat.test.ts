/**
 * The widget chat surface through the real server with the `local` model: a
 * visitor's whole session (open, a streamed reply read by an independent
 * parser, resume, a lead, escalation to a ticket with the transcript, end),
 * keys, workspaces, agents and origins that are refused, and the idle timeout
 * of a conversation opened without a message.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { AgentId } from "../../schema/Ids.js"
import { JobQueue } from "../../layers/JobQueue.js"
import { IDLE_QUEUE } from "../../src/conversations/Lifecycle.js"
import { addQa, sse, text, types } from "../conversations/support.js"
import { Harness, type HarnessShape, type SeededWorkspace, testServer } from "../support/harness.js"
import { eventsOf } from "../tickets/support.js"

const shop = "https://shop.example.com"
const idleMinutes = 30

const createAgent = (h: HarnessShape, key: string, allowed_origins: ReadonlyArray<string> = [shop]) =>
  Effect.map(h.call("POST", "/v1/agents", { key, body: { type: "support", name: "Chat bot", allowed_origins } }), (r) => {
    expect(r.status, r.text).toBe(201)
    return r.body.data.id as string
  })

/** An agent of the shop that knows about delivery and returns. */
const shopAgent = (h: HarnessShape, key: string) =>
  Effect.gen(function* () {
    const agentId = yield* createAgent(h, key)
    yield* addQa(
      h,
      key,
      agentId,
      "How long does delivery take?",
      "Orders arrive within five business days anywhere in Europe, and tracking is e-mailed when the parcel leaves."
    )
    yield* addQa(h, key, agentId, "Can I return an item?", "You can send any item back within 30 days for a full refund.")
    return agentId
  })

const base = (agentId: string) => `/widget/v1/agents/${agentId}`

const call = (
  h: HarnessShape,
  method: string,
  path: string,
  key: string | undefined,
  body?: unknown,
  headers: Record<string, string> = { origin: shop }
) => h.call(method, path, { key, headers, ...(body === undefined ? {} : { body }) })

const open = (h: HarnessShape, agentId: string, key: string, body: unknown = {}) =>
  Effect.map(call(h, "POST", `${base(agentId)}/conversations`, key, body), (r) => {
    expect(r.status, r.text).toBe(201)
    return r.body.data.id as string
  })

const ofType = (workspaceId: string, type: string) =>
  Effect.map(eventsOf(workspaceId), (events) => events.filter((e) => e.type === type).map((e) => e.body.data))

/** Every chat route of a conversation, as [method, path, body]. */
const chatRoutes = (agentId: string, conversationId: string) =>
  [
    ["POST", `${base(agentId)}/conversations`, {}],
    ["POST", `${base(agentId)}/conversations/${conversationId}/messages`, { message: "Hi", stream: false }],
    ["GET", `${base(agentId)}/conversations/${conversationId}/messages/msg_doesnotexist00/stream`, undefined],
    ["POST", `${base(agentId)}/conversations/${conversationId}/escalate`, { visitor_email: "v@example.com" }],
    ["POST", `${base(agentId)}/conversations/${conversationId}/end`, undefined]
  ] as const

const routesOf = (h: HarnessShape, ws: SeededWorkspace) =>
  Effect.gen(function* () {
    const agentId = yield* createAgent(h, ws.secretTest)
    const conversationId = yield* open(h, agentId, ws.widgetTest)
    return { agentId, conversationId, routes: chatRoutes(agentId, conversationId) }
  })

layer(testServer({ conversationIdleMinutes: idleMinutes }))("widget chat", (it) => {
  it.effect("a whole visitor session: open, streamed reply, resume, lead, escalation to a ticket, end", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* shopAgent(h, ws.secretTest)

      // open: a widget conversation with no message; started comes with the first message
      const opened = yield* call(h, "POST", `${base(agentId)}/conversations`, ws.widgetTest, {
        metadata: { page: "https://shop.example.com/pricing" }
      })
      expect(opened.status, opened.text).toBe(201)
      expect(opened.headers.get("access-control-allow-origin")).toBe(shop)
      const conversation = opened.body.data
      expect(conversation).toMatchObject({
        object: "conversation",
        agent_id: agentId,
        channel: "widget",
        status: "open",
        lead_id: null,
        message_count: 0,
        ended_at: null,
        metadata: { page: "https://shop.example.com/pricing" }
      })
      expect(conversation.id).toMatch(/^cnv_/)
      expect(yield* ofType(ws.workspace.id, "conversation.started")).toEqual([])
      const path = `${base(agentId)}/conversations/${conversation.id}`

      // a message: the reply streamed, read by eventsource-parser
      const streamed = yield* sse(h, `${path}/messages`, {
        key: ws.widgetTest,
        body: { message: "How long does delivery take?" },
        headers: { origin: shop }
      })
      expect(streamed.status).toBe(200)
      expect(streamed.headers.get("content-type")).toMatch(/^text\/event-stream/)
      expect(streamed.headers.get("access-control-allow-origin")).toBe(shop)
      const kinds = types(streamed.events)
      expect(kinds[0]).toBe("conversation")
      expect(kinds.at(-1)).toBe("done")
      expect(kinds.filter((k) => k === "token").length).toBeGreaterThan(3)
      expect(kinds).toContain("sources")
      expect(streamed.events[0]!.data.conversation_id).toBe(conversation.id)
      const replyId = streamed.events.at(-1)!.data.message_id as string
      const answer = text(streamed.events)
      expect(answer).toContain("five business days")
      const started = yield* ofType(ws.workspace.id, "conversation.started")
      expect(started).toHaveLength(1)
      expect(started[0].conversation).toMatchObject({ id: conversation.id, channel: "widget" })

      // resume after the third event: exactly the rest
      const resumed = yield* sse(h, `${path}/messages/${replyId}/stream`, {
        key: ws.widgetTest,
        headers: { origin: shop, "last-event-id": streamed.events[2]!.id! }
      })
      expect(resumed.status).toBe(200)
      expect(resumed.events).toEqual(streamed.events.slice(3))

      // a second message as JSON
      const json = yield* call(h, "POST", `${path}/messages`, ws.widgetTest, { message: "Can I return an item?", stream: false })
      expect(json.status, json.text).toBe(201)
      expect(json.body.data).toMatchObject({ object: "message", role: "assistant", conversation_id: conversation.id })
      expect(json.body.data.content).toContain("30 days")
      expect(yield* ofType(ws.workspace.id, "conversation.started")).toHaveLength(1)

      // the visitor leaves details in this conversation
      const lead = yield* call(h, "POST", `${base(agentId)}/leads`, ws.widgetTest, {
        email: "vera@example.com",
        conversation_id: conversation.id
      })
      expect(lead.status, lead.text).toBe(201)
      expect(lead.body.data.conversation_id).toBe(conversation.id)
      const linked = yield* h.call("GET", `/v1/conversations/${conversation.id}`, { key: ws.secretTest })
      expect(linked.body.data.lead_id).toBe(lead.body.data.id)

      // escalation: a ticket with the transcript as its first message, and ticket.created
      const escalated = yield* call(h, "POST", `${path}/escalate`, ws.widgetTest, {
        visitor_email: "vera@example.com",
        visitor_name: "Vera Visitor"
      })
      expect(escalated.status, escalated.text).toBe(201)
      expect(escalated.headers.get("access-control-allow-origin")).toBe(shop)
      const ticket = escalated.body.data.ticket
      expect(ticket).toMatchObject({
        origin: "ai_escalation",
        agent_id: agentId,
        status: "open",
        visitor_email: "vera@example.com",
        visitor_name: "Vera Visitor",
        conversation_id: conversation.id,
        subject: "How long does delivery take?"
      })
      expect(ticket.public_id).toMatch(/^tck_/)
      const transcript = [
        "Visitor: How long does delivery take?",
        `Assistant: ${answer}`,
        "Visitor: Can I return an item?",
        `Assistant: ${json.body.data.content}`
      ].join("\n")
      const thread = yield* h.call("GET", `/v1/tickets/${ticket.public_id}/messages`, { key: ws.secretTest })
      expect(thread.status, thread.text).toBe(200)
      expect(thread.body.data[0]).toMatchObject({ author_type: "visitor", body: transcript })
      const created = yield* ofType(ws.workspace.id, "ticket.created")
      expect(created).toHaveLength(1)
      expect(created[0].ticket).toMatchObject({ public_id: ticket.public_id, origin: "ai_escalation" })
      expect(created[0].first_message.body).toBe(transcript)

      // end: conversation.ended once; ending again answers the same
      const ended = yield* call(h, "POST", `${path}/end`, ws.widgetTest)
      expect(ended.status, ended.text).toBe(200)
      expect(ended.body.data).toMatchObject({ id: conversation.id, status: "ended", message_count: 4 })
      expect(ended.body.data.ended_at).not.toBeNull()
      // as curl sends it: a JSON content type and no body
      const again = yield* call(h, "POST", `${path}/end`, ws.widgetTest, undefined, {
        origin: shop,
        "content-type": "application/json"
      })
      expect(again.status).toBe(200)
      expect(again.body.data).toEqual(ended.body.data)
      const endedEvents = yield* ofType(ws.workspace.id, "conversation.ended")
      expect(endedEvents).toHaveLength(1)
      expect(endedEvents[0].conversation).toMatchObject({ id: conversation.id, status: "ended" })

      // the integrator reads the conversation; a message after the end continues in a new one
      const read = yield* h.call("GET", `/v1/conversations/${conversation.id}`, { key: ws.secretTest })
      expect(read.body.data.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
      const later = yield* call(h, "POST", `${path}/messages`, ws.widgetTest, { message: "Can I return an item?", stream: false })
      expect(later.status).toBe(201)
      expect(later.body.data.conversation_id).not.toBe(conversation.id)
      const next = yield* h.call("GET", `/v1/conversations/${later.body.data.conversation_id}`, { key: ws.secretTest })
      expect(next.body.data).toMatchObject({ channel: "widget", metadata: { page: "https://shop.example.com/pricing" } })
      expect(yield* ofType(ws.workspace.id, "conversation.started")).toHaveLength(2)
    })
  )

  it.effect("opens with `{}` (a missing body is 400 as on every endpoint with one); the typed client opens and ends", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const bare = yield* call(h, "POST", `${base(agentId)}/conversations`, ws.widgetTest)
      expect(bare.status, bare.text).toBe(400)
      expect(bare.body.error.code).toBe("parameter_missing")
      const empty = yield* call(h, "POST", `${base(agentId)}/conversations`, ws.widgetTest, {})
      expect(empty.status, empty.text).toBe(201)
      expect(empty.body.data.metadata).toEqual({})
      const stray = yield* call(h, "POST", `${base(agentId)}/conversations`, ws.widgetTest, { channel: "api" })
      expect(stray.body.error).toMatchObject({ code: "parameter_invalid", param: "channel" })

      const client = yield* h.client(ws.widgetTest)
      const agent_id = AgentId.make(agentId)
      const { data } = yield* client.widget.openConversation({ path: { agent_id }, payload: {} })
      expect(data).toMatchObject({ channel: "widget", status: "open" })
      const ended = yield* client.widget.endConversation({ path: { agent_id, conversation_id: data.id } })
      expect(ended.data).toMatchObject({ id: data.id, status: "ended" })
      // it never had a message: it neither started nor ended as an event
      expect(yield* ofType(ws.workspace.id, "conversation.started")).toEqual([])
      expect(yield* ofType(ws.workspace.id, "conversation.ended")).toEqual([])

      const secret = yield* h.client(ws.secretTest)
      const refused = yield* Effect.flip(secret.widget.openConversation({ path: { agent_id }, payload: {} }))
      expect(refused).toMatchObject({ _tag: "KeyScopeMismatch" })
    })
  )

  it.effect("escalation checks its body; an empty conversation escalates with no first message", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const conversationId = yield* open(h, agentId, ws.widgetTest)
      const path = `${base(agentId)}/conversations/${conversationId}/escalate`
      const missing = yield* call(h, "POST", path, ws.widgetTest, { visitor_name: "Vera" })
      expect(missing.status).toBe(400)
      expect(missing.body.error.param).toBe("visitor_email")
      const bad = yield* call(h, "POST", path, ws.widgetTest, { visitor_email: "not an address" })
      expect(bad.status).toBe(400)
      expect(bad.body.error).toMatchObject({ code: "parameter_invalid", param: "visitor_email" })
      const stray = yield* call(h, "POST", path, ws.widgetTest, { visitor_email: "v@example.com", origin: "api" })
      expect(stray.body.error).toMatchObject({ code: "parameter_invalid", param: "origin" })
      expect(yield* ofType(ws.workspace.id, "ticket.created")).toEqual([])

      const ok = yield* call(h, "POST", path, ws.widgetTest, { visitor_email: "v@example.com", subject: "Call me" })
      expect(ok.status, ok.text).toBe(201)
      expect(ok.body.data.ticket).toMatchObject({ subject: "Call me", origin: "ai_escalation", conversation_id: conversationId })
      const created = yield* ofType(ws.workspace.id, "ticket.created")
      expect(created).toHaveLength(1)
      expect(created[0].first_message).toBeNull()
    })
  )

  it.effect("a lead names its conversation: POST /v1/leads links the tenant's conversation only; deleting the lead unlinks it", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const other = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const conversationId = yield* open(h, agentId, ws.widgetTest)
      const theirs = yield* routesOf(h, other)
      const lead = yield* h.call("POST", "/v1/leads", {
        key: ws.secretTest,
        body: { agent_id: agentId, email: "ada@example.com", conversation_id: conversationId }
      })
      expect(lead.status, lead.text).toBe(201)
      const read = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
      expect(read.body.data.lead_id).toBe(lead.body.data.id)

      // another workspace's conversation id is kept on the lead as given, and links nothing
      const stray = yield* h.call("POST", "/v1/leads", {
        key: ws.secretTest,
        body: { agent_id: agentId, email: "bob@example.com", conversation_id: theirs.conversationId }
      })
      expect(stray.status).toBe(201)
      const untouched = yield* h.call("GET", `/v1/conversations/${theirs.conversationId}`, { key: other.secretTest })
      expect(untouched.body.data.lead_id).toBeNull()

      // a deleted lead is no longer the conversation's lead
      const deleted = yield* h.call("DELETE", `/v1/leads/${lead.body.data.id}`, { key: ws.secretTest })
      expect(deleted.status).toBe(200)
      const unlinked = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
      expect(unlinked.body.data.lead_id).toBeNull()
    })
  )

  describe("refused", () => {
    it.effect("another workspace's or environment's agent is 404 agent_id", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const other = yield* h.seed()
        const theirs = yield* routesOf(h, other)
        for (const [method, path, body] of theirs.routes) {
          const reply = yield* call(h, method, path, ws.widgetTest, body)
          expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(404)
          expect(reply.body.error).toMatchObject({ code: "resource_missing", param: "agent_id" })
        }
        const liveAgent = yield* createAgent(h, ws.secretLive)
        const crossed = yield* call(h, "POST", `${base(liveAgent)}/conversations`, ws.widgetTest, {})
        expect(crossed.status).toBe(404)
        const liveWidget = yield* ws.key({ kind: "widget", environment: "live" })
        expect((yield* call(h, "POST", `${base(liveAgent)}/conversations`, liveWidget.secret, {})).status).toBe(201)
        expect(yield* ofType(other.workspace.id, "ticket.created")).toEqual([])
      })
    )

    it.effect("a conversation of another agent, or of another workspace under one's own agent, is 404 conversation_id", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const other = yield* h.seed()
        const mine = yield* createAgent(h, ws.secretTest)
        const sibling = yield* routesOf(h, ws)
        const foreign = yield* routesOf(h, other)
        for (const conversationId of [sibling.conversationId, foreign.conversationId, "cnv_doesnotexist00"]) {
          for (const [method, path, body] of chatRoutes(mine, conversationId).slice(1)) {
            const reply = yield* call(h, method, path, ws.widgetTest, body)
            expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(404)
            expect(reply.body.error).toMatchObject({ code: "resource_missing", param: "conversation_id" })
          }
        }
        const sib = yield* h.call("GET", `/v1/conversations/${sibling.conversationId}`, { key: ws.secretTest })
        expect(sib.body.data).toMatchObject({ status: "open", message_count: 0 })
        expect(yield* ofType(ws.workspace.id, "ticket.created")).toEqual([])
      })
    )

    it.effect("a foreign Origin is 403 origin_not_allowed; a preflight from an allowed one is answered", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { agentId, conversationId, routes } = yield* routesOf(h, ws)
        for (const [method, path, body] of routes) {
          const refused = yield* call(h, method, path, ws.widgetTest, body, { origin: "https://evil.example.com" })
          expect(refused.status, `${method} ${path}`).toBe(403)
          expect(refused.body.error).toMatchObject({ code: "origin_not_allowed", param: "Origin" })
          expect(refused.headers.get("access-control-allow-origin")).toBeNull()

          const preflight = yield* h.call("OPTIONS", path, {
            headers: { origin: shop, "access-control-request-method": method, "access-control-request-headers": "authorization" }
          })
          expect(preflight.status).toBe(204)
          expect(preflight.headers.get("access-control-allow-origin")).toBe(shop)
          expect(preflight.headers.get("access-control-allow-methods")).toBe(method)
          expect(preflight.headers.get("access-control-allow-headers")!.toLowerCase()).toContain("last-event-id")
        }
        const foreignPreflight = yield* h.call("OPTIONS", `${base(agentId)}/conversations/${conversationId}/messages`, {
          headers: { origin: "https://evil.example.com", "access-control-request-method": "POST" }
        })
        expect(foreignPreflight.headers.get("access-control-allow-origin")).toBeNull()
        expect(yield* ofType(ws.workspace.id, "conversation.started")).toEqual([])
      })
    )
  })

  it.effect("a conversation opened without a message ends silently after the idle time; its first message starts it", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const queue = yield* JobQueue
      const ws = yield* h.seed()
      const agentId = yield* shopAgent(h, ws.secretTest)
      const quiet = yield* open(h, agentId, ws.widgetTest)
      const talked = yield* open(h, agentId, ws.widgetTest)

      yield* TestClock.adjust(Duration.minutes(20))
      const reply = yield* call(h, "POST", `${base(agentId)}/conversations/${talked}/messages`, ws.widgetTest, {
        message: "Can I return an item?",
        stream: false
      })
      expect(reply.body.data.conversation_id).toBe(talked)
      const started = yield* ofType(ws.workspace.id, "conversation.started")
      expect(started.map((e) => e.conversation.id)).toEqual([talked])

      yield* TestClock.adjust(Duration.minutes(idleMinutes - 20))
      yield* queue.awaitIdle(IDLE_QUEUE)
      const quietRead = yield* h.call("GET", `/v1/conversations/${quiet}`, { key: ws.secretTest })
      expect(quietRead.body.data.status).toBe("ended")
      expect(yield* ofType(ws.workspace.id, "conversation.ended")).toEqual([])

      yield* TestClock.adjust(Duration.minutes(idleMinutes))
      yield* queue.awaitIdle(IDLE_QUEUE)
      const ended = yield* ofType(ws.workspace.id, "conversation.ended")
      expect(ended.map((e) => e.conversation.id)).toEqual([talked])
    })
  )
})
