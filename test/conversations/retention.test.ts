/**
 * A reply's stream events are dropped 7 days after the reply ends (the pruner
 * runs hourly on the TestClock); the reply stays listed, resuming its stream
 * then answers 404 saying why, and a recent reply keeps its events.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { eventually } from "../support/eventually.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { createAgent } from "./support.js"

const eventCount = (messageId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: string }>`select count(*)::text as n from message_events where message_id = ${messageId}`
  ).pipe(Effect.map((rows) => Number(rows[0]!.n)), Effect.orDie)

const reply = (h: HarnessShape, key: string, agentId: string) =>
  Effect.map(h.call("POST", `/v1/agents/${agentId}/messages`, { key, body: { message: "Hello", stream: false } }), (r) => {
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return { conversationId: r.body.data.conversation_id as string, messageId: r.body.data.id as string }
  })

layer(testServer())("reply stream retention", (it) => {
  it.effect("events go 7 days after the reply ends; resuming then is a 404 that says why; the reply stays", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const agentId = yield* createAgent(h, key)
      const old = yield* reply(h, key, agentId)
      const stream = `/v1/conversations/${old.conversationId}/messages/${old.messageId}/stream`
      expect(yield* eventCount(old.messageId)).toBeGreaterThan(0)

      yield* TestClock.adjust(Duration.days(6))
      const recent = yield* reply(h, key, agentId)
      yield* TestClock.adjust(Duration.hours(25))
      // the pruner sleeps an hour after each pass, counted from the end of its pass: one hour more per look
      yield* eventually(Effect.zipRight(TestClock.adjust(Duration.hours(1)), eventCount(old.messageId)), (n) => n === 0, {
        tries: 48,
        label: "old events pruned"
      })
      expect(yield* eventCount(recent.messageId)).toBeGreaterThan(0)

      const gone = yield* h.call("GET", stream, { key })
      expect(gone.status).toBe(404)
      expect(gone.body.error).toMatchObject({ code: "resource_missing", param: "message_id" })
      expect(gone.body.error.message).toContain("no longer kept")
      const conversation = yield* h.call("GET", `/v1/conversations/${old.conversationId}`, { key })
      expect(conversation.status).toBe(200)
      expect(conversation.body.data.messages.map((m: any) => m.id)).toContain(old.messageId)
      // the recent reply still resumes
      const kept = yield* h.call("GET", `/v1/conversations/${recent.conversationId}/messages/${recent.messageId}/stream`, { key })
      expect(kept.status).toBe(200)
    })
  )
})
