/**
 * A conversation's hand-off events (the widget's resumable events stream) are dropped 7 days after they are
 * written (the pruner runs hourly on the TestClock), a batch at a time: recent ones stay, and a widget resuming
 * with a `Last-Event-ID` older than the retention gets what remains, numbered as before.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { ConversationLifecycle, conversationEventRetentionDays } from "../../src/conversations/Lifecycle.js"
import { addQa, sse } from "../conversations/support.js"
import { eventually } from "../support/eventually.js"
import { Harness, testServer } from "../support/harness.js"

const shop = "https://shop.example.com"
const widget = { origin: shop }

const seqsOf = (conversationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ seq: number }>`select seq from conversation_events where conversation_id = ${conversationId} order by seq`
  ).pipe(
    Effect.map((rows) => rows.map((r) => Number(r.seq))),
    Effect.orDie
  )

layer(testServer())("hand-off event retention", (it) => {
  it.effect("events go 7 days after they were written, recent ones stay; a resume from before the retention gets what remains", () =>
    Effect.gen(function* () {
      expect(conversationEventRetentionDays).toBe(7)
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* h.call("POST", "/v1/agents", {
        key: ws.secretTest,
        body: { type: "support", name: "Shop bot", allowed_origins: [shop], widget: { handoff: true } }
      })
      const agentId = agent.body.data.id as string
      yield* addQa(h, ws.secretTest, agentId, "How long does delivery take?", "Orders arrive within five business days.")
      const opened = yield* h.call("POST", `/widget/v1/agents/${agentId}/conversations`, { key: ws.widgetTest, headers: widget, body: {} })
      const conversationId = opened.body.data.id as string
      const path = `/widget/v1/agents/${agentId}/conversations/${conversationId}`
      const first = yield* h.call("POST", `${path}/messages`, {
        key: ws.widgetTest,
        headers: widget,
        body: { message: "How long does delivery take?", stream: false }
      })
      expect(first.status, first.text).toBe(201)
      const escalation = yield* h.call("POST", `${path}/escalate`, {
        key: ws.widgetTest,
        headers: widget,
        body: { visitor_email: "vera@example.com" }
      })
      expect(escalation.status, escalation.text).toBe(201)
      const ticket = escalation.body.data.ticket.public_id as string
      const memberSays = (body: string) =>
        Effect.map(h.call("POST", `/v1/tickets/${ticket}/messages`, { key: ws.secretTest, body: { body } }), (r) =>
          expect(r.status, r.text).toBe(201)
        )

      // day 0: requested, active, the member's first message
      yield* memberSays("Hi Vera, looking now.")
      const old = yield* seqsOf(conversationId)
      expect(old).toEqual([1, 2, 3])

      // day 6: the member's second message
      yield* TestClock.adjust(Duration.days(6))
      yield* memberSays("Your parcel left today.")
      expect(yield* seqsOf(conversationId)).toEqual([1, 2, 3, 4])

      // past day 7 for the first ones only
      yield* TestClock.adjust(Duration.hours(25))
      // the pruner sleeps an hour after each pass, counted from the end of its pass: one hour more per look
      yield* eventually(Effect.zipRight(TestClock.adjust(Duration.hours(1)), seqsOf(conversationId)), (seqs) => seqs[0] === 4, {
        tries: 48,
        label: "old hand-off events pruned"
      })
      expect(yield* seqsOf(conversationId)).toEqual([4])

      // a widget away since event 1 (its next ones are gone) gets what remains; so does one with no Last-Event-ID
      for (const headers of [{ ...widget, "last-event-id": "1" }, widget]) {
        const resumed = yield* sse(h, `${path}/events`, { key: ws.widgetTest, headers, stopWhen: (events) => events.length >= 1 })
        expect(resumed.status).toBe(200)
        expect(resumed.events.map((e) => [e.id, e.data.type])).toEqual([["4", "message"]])
        expect(resumed.events[0]!.data.message.content).toBe("Your parcel left today.")
      }

      // the conversation keeps its messages, and new events go on from the last number
      const read = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
      expect(read.body.data.messages.filter((m: any) => m.role === "member").map((m: any) => m.content)).toEqual([
        "Hi Vera, looking now.",
        "Your parcel left today."
      ])
      yield* memberSays("Anything else?")
      expect(yield* seqsOf(conversationId)).toEqual([4, 5])
    })
  )

  it.effect("a backlog larger than one batch goes in one pass of several statements, all of it", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* h.call("POST", "/v1/agents", {
        key: ws.secretTest,
        body: { type: "support", name: "Shop bot", allowed_origins: [shop], widget: { handoff: true } }
      })
      const agentId = agent.body.data.id as string
      const opened = yield* h.call("POST", `/widget/v1/agents/${agentId}/conversations`, { key: ws.widgetTest, headers: widget, body: {} })
      const conversationId = opened.body.data.id as string
      const sql = yield* SqlClient.SqlClient
      // more than a batch of old rows, written straight in
      yield* sql`
        insert into conversation_events (conversation_id, seq, data, created_at)
        select ${conversationId}, n, '{}', ${new Date(0)} from generate_series(1, 1201) as n`.pipe(Effect.orDie)
      expect((yield* seqsOf(conversationId)).length).toBe(1201)
      // one pass drops it all, in statements of a batch each
      const lifecycle = yield* ConversationLifecycle
      expect(yield* lifecycle.pruneConversationEvents).toBe(1201)
      expect(yield* seqsOf(conversationId)).toEqual([])
    })
  )
})
