/**
 * Live hand-off through the real server: an escalation hands the conversation to people, the agent stops
 * replying, the visitor's messages go to the ticket, a member's reply on the ticket comes back over the
 * conversation's resumable events stream (kept in the conversation as a `member` message), the visitor is
 * e-mailed when no widget is open, and resolving the ticket or a release gives the chat back to the agent.
 * On PostgreSQL, a member's reply served by a second instance reaches a stream connected to the first.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import { layerPg } from "../../layers/Database.js"
import { MemoryMailbox } from "../../layers/Mailer.js"
import { presenceEveryMillis, presenceWindowMillis } from "../../src/conversations/Handoff.js"
import { addQa, openStreamCount, received, type SseEvent, soFar, sse, types } from "../conversations/support.js"
import { databaseKind } from "../support/database.js"
import { ConditionNotReached, eventually } from "../support/eventually.js"
import { Harness, type HarnessShape, type SeededWorkspace, testServer } from "../support/harness.js"
import { eventsOf } from "../tickets/support.js"

const shop = "https://shop.example.com"
const visitor = "vera@example.com"
const base = (agentId: string) => `/widget/v1/agents/${agentId}`
const widget = { origin: shop }

const ofType = (workspaceId: string, type: string) =>
  Effect.map(eventsOf(workspaceId), (events) => events.filter((e) => e.type === type).map((e) => e.body.data))

/** A shop agent with one answer, a widget conversation with one exchange, escalated: its path and ticket. */
const escalated = (h: HarnessShape, ws: SeededWorkspace, visitor_email = visitor, handoff = true) =>
  Effect.gen(function* () {
    const agent = yield* h.call("POST", "/v1/agents", {
      key: ws.secretTest,
      body: { type: "support", name: "Shop bot", allowed_origins: [shop], widget: { handoff } }
    })
    const agentId = agent.body.data.id as string
    yield* addQa(h, ws.secretTest, agentId, "How long does delivery take?", "Orders arrive within five business days.")
    const opened = yield* h.call("POST", `${base(agentId)}/conversations`, { key: ws.widgetTest, headers: widget, body: {} })
    const conversationId = opened.body.data.id as string
    const path = `${base(agentId)}/conversations/${conversationId}`
    const first = yield* h.call("POST", `${path}/messages`, {
      key: ws.widgetTest,
      headers: widget,
      body: { message: "How long does delivery take?", stream: false }
    })
    expect(first.status, first.text).toBe(201)
    const escalation = yield* h.call("POST", `${path}/escalate`, {
      key: ws.widgetTest,
      headers: widget,
      body: { visitor_email, visitor_name: "Vera" }
    })
    expect(escalation.status, escalation.text).toBe(201)
    const ticket = escalation.body.data.ticket.public_id as string
    return { agentId, conversationId, path, ticket, escalation: escalation.body.data }
  })

/** A member's answer on the ticket (a secret key: author `member`). */
const memberSays = (h: HarnessShape, key: string, ticket: string, body: string) =>
  Effect.map(h.call("POST", `/v1/tickets/${ticket}/messages`, { key, body: { body } }), (r) => {
    expect(r.status, r.text).toBe(201)
    expect(r.body.data.author_type).toBe("member")
    return r.body.data
  })

/** Follows the conversation's events in the background until `until` holds for what came. */
const follow = (h: HarnessShape, key: string, path: string, until: (events: ReadonlyArray<SseEvent>) => boolean, lastEventId?: string) =>
  Effect.gen(function* () {
    const so = soFar()
    const fiber = yield* Effect.fork(
      sse(h, `${path}/events`, {
        key,
        headers: { ...widget, ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }) },
        stopWhen: until,
        soFar: so
      })
    )
    return { so, fiber }
  })

const lastSeen = (conversationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ last_seen_at: Date | null }>`select last_seen_at from conversations where id = ${conversationId}`
  ).pipe(
    Effect.map((rows) => rows[0]?.last_seen_at ?? null),
    Effect.orDie
  )

const mailTo = (to: string) =>
  Effect.flatMap(MemoryMailbox, (mailbox) => Effect.map(mailbox.sent, (sent) => sent.filter((m) => m.to === to)))

layer(testServer())("widget hand-off", (it) => {
  it.effect("an agent whose people do not answer live (widget.handoff false) escalates to a ticket and keeps replying", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { conversationId, path, ticket, escalation } = yield* escalated(h, ws, visitor, false)
      expect(ticket).toMatch(/\S/)
      expect(escalation.handoff).toBeNull()
      expect(yield* ofType(ws.workspace.id, "conversation.handoff_requested")).toHaveLength(0)
      const streamed = yield* sse(h, `${path}/messages`, { key: ws.widgetTest, headers: widget, body: { message: "How long does delivery take?" } })
      expect(types(streamed.events)).toContain("token")
      const read = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
      expect(read.body.data.handoff).toBeNull()
    })
  )

  it.effect("escalation hands off; the agent stops replying; a member's reply arrives on the events stream and is kept", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { conversationId, path, ticket, escalation } = yield* escalated(h, ws)
      expect(escalation.handoff).toMatchObject({ status: "requested", ticket_public_id: ticket })
      const requested = yield* ofType(ws.workspace.id, "conversation.handoff_requested")
      expect(requested).toHaveLength(1)
      expect(requested[0].conversation.handoff).toMatchObject({ status: "requested", ticket_public_id: ticket })

      // read through /v1 too
      const read = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
      expect(read.body.data.handoff).toEqual(escalation.handoff)

      // escalating again creates no second ticket
      const again = yield* h.call("POST", `${path}/escalate`, { key: ws.widgetTest, headers: widget, body: { visitor_email: visitor } })
      expect(again.status, again.text).toBe(201)
      expect(again.body.data.ticket.public_id).toBe(ticket)

      // the visitor writes while handed off: stored, on the ticket, answered without a reply
      const streamed = yield* sse(h, `${path}/messages`, { key: ws.widgetTest, headers: widget, body: { message: "Is anyone there?" } })
      expect(streamed.status).toBe(200)
      expect(types(streamed.events)).toEqual(["conversation", "handoff", "done"])
      expect(streamed.events.map((e) => e.id)).toEqual(["1", "2", "3"])
      expect(streamed.events[1]!.data.handoff).toMatchObject({ status: "requested", ticket_public_id: ticket })
      expect(streamed.events[2]!.data.usage).toEqual({ input_tokens: 0, output_tokens: 0, credits: 0 })
      const userMessageId = streamed.events[0]!.data.message_id as string
      expect(streamed.events[2]!.data.message_id).toBe(userMessageId)
      // its stream resumes like a reply's
      const resumed = yield* sse(h, `${path}/messages/${userMessageId}/stream`, {
        key: ws.widgetTest,
        headers: { ...widget, "last-event-id": "1" }
      })
      expect(types(resumed.events)).toEqual(["handoff", "done"])
      const plain = yield* h.call("POST", `${path}/messages`, {
        key: ws.widgetTest,
        headers: widget,
        body: { message: "Hello?", stream: false }
      })
      expect(plain.status, plain.text).toBe(201)
      expect(plain.body.data).toMatchObject({ role: "user", content: "Hello?", conversation_id: conversationId })
      const thread = yield* h.call("GET", `/v1/tickets/${ticket}/messages`, { key: ws.secretTest })
      expect(thread.body.data.map((m: any) => [m.author_type, m.body])).toEqual([
        ["visitor", expect.stringContaining("Visitor: How long does delivery take?")],
        ["visitor", "Is anyone there?"],
        ["visitor", "Hello?"]
      ])

      // a widget follows the events: the member's reply arrives, the hand-off becomes active
      const { so, fiber } = yield* follow(h, ws.widgetTest, path, (events) => events.length >= 3)
      yield* received(so, 1, "the requested hand-off on the stream")
      yield* memberSays(h, ws.secretTest, ticket, "Hi Vera, your parcel left today.")
      const got = (yield* Fiber.join(fiber)).events
      expect(got.map((e) => [e.id, e.data.type])).toEqual([
        ["1", "handoff"],
        ["2", "handoff"],
        ["3", "message"]
      ])
      const all = yield* sse(h, `${path}/events`, { key: ws.widgetTest, headers: widget, stopWhen: (events) => events.length >= 3 })
      expect(all.events.map((e) => [e.id, e.data.type])).toEqual([
        ["1", "handoff"],
        ["2", "handoff"],
        ["3", "message"]
      ])
      expect(all.events[0]!.data.handoff.status).toBe("requested")
      expect(all.events[1]!.data.handoff.status).toBe("active")
      expect(all.events[2]!.data.message).toMatchObject({
        object: "message",
        conversation_id: conversationId,
        role: "member",
        content: "Hi Vera, your parcel left today.",
        sources: []
      })
      // resumed after an id: only the later ones
      const later = yield* sse(h, `${path}/events`, {
        key: ws.widgetTest,
        headers: { ...widget, "last-event-id": "2" },
        stopWhen: (events) => events.length >= 1
      })
      expect(later.events.map((e) => e.id)).toEqual(["3"])
      const bad = yield* h.call("GET", `${path}/events`, { key: ws.widgetTest, headers: { ...widget, "last-event-id": "x" } })
      expect(bad.status).toBe(400)
      expect(bad.body.error).toMatchObject({ code: "parameter_invalid", param: "Last-Event-ID" })

      // kept in the conversation, so a reload shows it
      const reloaded = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
      expect(reloaded.body.data.handoff.status).toBe("active")
      expect(reloaded.body.data.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "user", "member"])
      expect(yield* ofType(ws.workspace.id, "conversation.handoff_active")).toHaveLength(1)
      // the widget was open: no e-mail to the visitor
      expect(yield* mailTo(visitor)).toEqual([])

      // resolving the ticket gives the chat back to the agent
      expect((yield* h.call("POST", `/v1/tickets/${ticket}/resolve`, { key: ws.secretTest })).status).toBe(200)
      const closed = yield* ofType(ws.workspace.id, "conversation.handoff_closed")
      expect(closed).toHaveLength(1)
      expect(closed[0].conversation.handoff.status).toBe("closed")
      const closing = yield* sse(h, `${path}/events`, {
        key: ws.widgetTest,
        headers: { ...widget, "last-event-id": "3" },
        stopWhen: (events) => events.length >= 1
      })
      expect(closing.events[0]!.data).toMatchObject({ type: "handoff", handoff: { status: "closed", ticket_public_id: ticket } })
      const answered = yield* sse(h, `${path}/messages`, {
        key: ws.widgetTest,
        headers: widget,
        body: { message: "How long does delivery take?" }
      })
      expect(types(answered.events)).toContain("token")
      expect(types(answered.events).at(-1)).toBe("done")
      // a member's later message on the resolved ticket stays on the ticket
      yield* memberSays(h, ws.secretTest, ticket, "Anything else?")
      const after = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
      expect(after.body.data.messages.filter((m: any) => m.role === "member")).toHaveLength(1)
    })
  )

  it.effect("a member's reply is e-mailed to the visitor when no widget stream was seen for 30 s", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { conversationId, path, ticket } = yield* escalated(h, ws, "away@example.com")
      const visitor = "away@example.com"

      // never connected: e-mailed
      yield* memberSays(h, ws.secretTest, ticket, "First answer")
      const first = yield* eventually(mailTo(visitor), (sent) => sent.length === 1, { label: "the first e-mail" })
      expect(first[0]!.text).toContain("First answer")
      expect(first[0]!.text).toContain(ticket)

      // connected: the visitor is present, no e-mail; the stream keeps marking presence
      const { so, fiber } = yield* follow(h, ws.widgetTest, path, (events) => events.some((e) => e.data.message?.content === "Second answer"))
      yield* eventually(lastSeen(conversationId), (at) => at !== null, { label: "the stream connected" })
      yield* TestClock.adjust(presenceWindowMillis + presenceEveryMillis)
      // the stream's presence ticks on the clock: the last one is written
      const at = yield* Clock.currentTimeMillis
      yield* eventually(lastSeen(conversationId), (seen) => seen !== null && seen.getTime() >= at - presenceEveryMillis, {
        label: "presence kept while connected"
      })
      yield* memberSays(h, ws.secretTest, ticket, "Second answer")
      yield* Fiber.join(fiber)
      expect(so.events.map((e) => e.data.type)).toContain("message")
      expect(yield* mailTo(visitor)).toHaveLength(1)
      yield* eventually(openStreamCount, (n) => n === 0, { label: "the stream closed on the server" })

      // the stream is gone (its last presence when it left): 30 s later a reply is e-mailed again
      yield* TestClock.adjust(presenceWindowMillis - 1_000)
      yield* memberSays(h, ws.secretTest, ticket, "Third answer")
      yield* TestClock.adjust(presenceWindowMillis)
      yield* memberSays(h, ws.secretTest, ticket, "Fourth answer")
      const sent = yield* eventually(mailTo(visitor), (all) => all.length === 2, { label: "the fourth answer e-mailed" })
      expect(sent.map((m) => m.text.includes("Fourth answer"))).toEqual([false, true])
    })
  )

  it.effect("POST /v1/conversations/{id}/release closes the hand-off; the agent replies again", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { conversationId, path } = yield* escalated(h, ws)
      const released = yield* h.call("POST", `/v1/conversations/${conversationId}/release`, { key: ws.secretTest })
      expect(released.status, released.text).toBe(200)
      expect(released.body.data.handoff.status).toBe("closed")
      // again: answered as it is, no second event
      const again = yield* h.call("POST", `/v1/conversations/${conversationId}/release`, { key: ws.secretTest })
      expect(again.body.data.handoff).toEqual(released.body.data.handoff)
      expect(yield* ofType(ws.workspace.id, "conversation.handoff_closed")).toHaveLength(1)
      const reply = yield* h.call("POST", `${path}/messages`, {
        key: ws.widgetTest,
        headers: widget,
        body: { message: "How long does delivery take?", stream: false }
      })
      expect(reply.status, reply.text).toBe(201)
      expect(reply.body.data.role).toBe("assistant")
      // another workspace's conversation is missing
      const other = yield* h.seed()
      const foreign = yield* h.call("POST", `/v1/conversations/${conversationId}/release`, { key: other.secretTest })
      expect(foreign.status).toBe(404)
    })
  )

  describe("two instances on one PostgreSQL", () => {
    it.effect.skipIf(databaseKind === "pglite")(
      "a member's reply served by the second instance reaches a stream connected to the first within two seconds",
      () =>
        Effect.gen(function* () {
          const h = yield* Harness
          const sql = yield* SqlClient.SqlClient
          const ws = yield* h.seed()
          const { path, ticket } = yield* escalated(h, ws)
          const [{ name }] = yield* sql<{ name: string }>`select current_database() as name`.pipe(Effect.orDie)
          const url = new URL(process.env["DATABASE_URL"]!)
          url.pathname = `/${name}`
          yield* Effect.scoped(
            Effect.gen(function* () {
              const second = yield* Layer.build(
                testServer({}, { database: layerPg({ url: Redacted.make(url.toString()), maxConnections: 3 }) })
              ).pipe(Effect.orDie)
              const other = Context.get(second, Harness)
              const { so, fiber } = yield* follow(h, ws.widgetTest, path, (events) => events.some((e) => e.data.type === "message"))
              // the stream on the first has read what there was (the requested hand-off)
              yield* received(so, 1, "the stream on the first instance")
              const started = Date.now()
              yield* memberSays(other, ws.secretTest, ticket, "Answered from the other instance")
              // no TestClock step: only the notification can wake the stream (its poll is on the TestClock)
              yield* TestServices.provideLive(
                Effect.timeoutFail(Fiber.join(fiber), {
                  duration: "5 seconds",
                  onTimeout: () =>
                    new ConditionNotReached({ message: "the reply served by the second instance never reached the first's stream" })
                })
              )
              const elapsed = Date.now() - started
              expect(so.events.at(-1)!.data.message.content).toBe("Answered from the other instance")
              expect(elapsed).toBeLessThan(2_000)
            })
          )
        }),
      20_000
    )
  })
})
