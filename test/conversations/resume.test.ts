/**
 * Dropped connections, with a test model whose tokens the test releases: a
 * resume after `Last-Event-ID` gets exactly the remaining events while the
 * reply is still being generated; a reply nobody reads past the grace period
 * is interrupted (the model sees it) and nothing final is stored.
 */
import { expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import { eventually } from "../support/eventually.js"
import { Harness, type HarnessShape } from "../support/harness.js"
import { testServer } from "../support/harness.js"
import { pingInterval } from "../../src/conversations/Http.js"
import {
  addQa,
  createAgent,
  failHere,
  gatedModel,
  openStreamCount,
  received,
  sleepsEnding,
  soFar,
  sse,
  text,
  types
} from "./support.js"

const model = gatedModel()
const graceSeconds = 30
const question = "How long does delivery take?"

const setup = (h: HarnessShape) =>
  Effect.gen(function* () {
    const ws = yield* h.seed()
    const agentId = yield* createAgent(h, ws.secretTest)
    yield* addQa(h, ws.secretTest, agentId, question, "Two days.")
    return { ws, agentId }
  })

const tokenCount = (n: number) => (events: ReadonlyArray<{ data: any }>) => events.filter((e) => e.data.type === "token").length >= n

const pingMillis = Duration.toMillis(pingInterval)

/** The server has closed every stream but `n` (a dropped one too, its reply's grace timer armed as it did). */
const streamsOpen = (n: number, label: string) => eventually(openStreamCount, (open) => open === n, { label })

/** `n` more readers wait for their next frame than `before`: each has its ping due. */
const pingsDue = (before: number, n: number, label: string) =>
  eventually(sleepsEnding(pingMillis), (due) => due >= before + n, { label })

const statusOf = (messageId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ status: string }>`select status from messages where id = ${messageId}`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows[0]?.status)
    )
  )

layer(testServer({ replyResumeGraceSeconds: graceSeconds }, { ai: model.layer }))("resume", (it) => {
  it.effect("a dropped stream resumed after Last-Event-ID gets exactly the remaining events, live", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const { ws, agentId } = yield* setup(h)
      const open = yield* openStreamCount
      yield* model.offer("Orders", " arrive", " in")
      const dropped = yield* sse(h, `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: question },
        stopWhen: tokenCount(3)
      })
      expect(types(dropped.events)).toEqual(["conversation", "token", "token", "token"])
      const { conversation_id, message_id } = dropped.events[0]!.data
      const path = `/v1/conversations/${conversation_id}/messages/${message_id}/stream`
      const lastId = dropped.events[3]!.id!
      expect(lastId).toBe("4")

      yield* streamsOpen(open, "the dropped stream closed")
      const pings = yield* sleepsEnding(pingMillis)

      // the resume follows the reply while the model is still producing it
      const following = soFar()
      const resumed = yield* Effect.fork(sse(h, path, { key: ws.secretTest, headers: { "last-event-id": lastId }, soFar: following }))
      // one past the end gets nothing, and ends with the reply
      const beyond = yield* Effect.fork(sse(h, path, { key: ws.secretTest, headers: { "last-event-id": "99" } }))
      yield* pingsDue(pings, 2, "both readers following the reply")
      yield* model.offer(" two", " days.")
      yield* received(following, 2, "the new tokens, live")
      yield* model.offer(null)
      const rest = yield* Fiber.join(resumed)
      expect(rest.status).toBe(200)
      expect((yield* Fiber.join(beyond)).events).toEqual([])

      const full = yield* sse(h, path, { key: ws.secretTest })
      expect(types(full.events)).toEqual(["conversation", "token", "token", "token", "token", "token", "sources", "done"])
      expect(full.events.map((e) => e.id)).toEqual(["1", "2", "3", "4", "5", "6", "7", "8"])
      expect(rest.events).toEqual(full.events.slice(4))
      expect(full.events.slice(0, 4)).toEqual(dropped.events)
      expect(text(full.events)).toBe("Orders arrive in two days.")

      const conversation = yield* h.call("GET", `/v1/conversations/${conversation_id}`, { key: ws.secretTest })
      expect(conversation.body.data.messages.map((m: any) => m.content)).toEqual([question, "Orders arrive in two days."])
    })
  )

  it.effect("a reader back within the grace keeps the reply going", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const { ws, agentId } = yield* setup(h)
      const open = yield* openStreamCount
      yield* model.offer("Two")
      const dropped = yield* sse(h, `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: question },
        stopWhen: tokenCount(1)
      })
      const { conversation_id, message_id } = dropped.events[0]!.data
      yield* streamsOpen(open, "the dropped stream closed")
      yield* TestClock.adjust(Duration.seconds(graceSeconds - 10))
      const path = `/v1/conversations/${conversation_id}/messages/${message_id}/stream`
      const pings = yield* sleepsEnding(pingMillis)
      const resumed = yield* Effect.fork(sse(h, path, { key: ws.secretTest, headers: { "last-event-id": "2" } }))
      yield* pingsDue(pings, 1, "the reader back")
      yield* TestClock.adjust(Duration.seconds(graceSeconds))
      yield* model.offer(" days.", null)
      const rest = yield* Fiber.join(resumed)
      expect(types(rest.events)).toEqual(["token", "sources", "done"])
      expect(yield* statusOf(message_id)).toBe("complete")
    })
  )

  it.effect("a reply nobody reads past the grace is interrupted and nothing final is stored", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const { ws, agentId } = yield* setup(h)
      const interruptedBefore = model.record.interrupted
      const open = yield* openStreamCount
      yield* model.offer("Orders")
      const dropped = yield* sse(h, `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: question },
        stopWhen: tokenCount(1)
      })
      const { conversation_id, message_id } = dropped.events[0]!.data

      // still generating just before the grace ends (the grace timer armed as the stream closed)
      yield* streamsOpen(open, "the dropped stream closed")
      yield* TestClock.adjust(Duration.seconds(graceSeconds - 1))
      // a check that nothing happens: a short real pause gives an early interruption its chance to show
      yield* TestServices.provideLive(Effect.sleep("200 millis"))
      expect(model.record.interrupted).toBe(interruptedBefore)
      expect(yield* statusOf(message_id)).toBe("generating")

      // the server may notice the hang-up after a step: each try moves the clock past another grace
      yield* eventually(
        Effect.zipRight(TestClock.adjust(Duration.seconds(graceSeconds + 1)), Effect.sync(() => model.record.interrupted)),
        (n) => n === interruptedBefore + 1,
        { tries: 50, label: "generation interrupted" }
      )
      yield* eventually(statusOf(message_id), (s) => s === "interrupted", { label: "message marked interrupted" })

      const conversation = yield* h.call("GET", `/v1/conversations/${conversation_id}`, { key: ws.secretTest })
      expect(conversation.body.data.message_count).toBe(1)
      expect(conversation.body.data.messages.map((m: any) => m.role)).toEqual(["user"])

      // a late resume gets what was sent, then the error that ended it
      const late = yield* sse(h, `/v1/conversations/${conversation_id}/messages/${message_id}/stream`, {
        key: ws.secretTest,
        headers: { "last-event-id": "1" }
      })
      expect(types(late.events)).toEqual(["token", "error"])
      expect(late.events[1]!.data.code).toBe("service_unavailable")
    })
  )

  it.effect("pings while the model is silent for 15 s, on the clock", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const { ws, agentId } = yield* setup(h)
      const pings = yield* sleepsEnding(pingMillis)
      const reader = soFar()
      const reading = yield* Effect.fork(
        sse(h, `/v1/agents/${agentId}/messages`, { key: ws.secretTest, body: { message: question }, soFar: reader })
      )
      // the reader has the conversation and waits for the model's first token
      yield* received(reader, 1, "the conversation event")
      yield* pingsDue(pings, 1, "the reader waiting")
      yield* TestClock.adjust(Duration.seconds(16))
      yield* eventually(Effect.sync(() => reader.comments.length), (n) => n >= 1, { label: "the ping" })
      yield* model.offer("Two days.", null)
      const reply = yield* Fiber.join(reading)
      expect(reply.comments.map((c) => c.trim())).toEqual(["ping"])
      expect(types(reply.events)).toEqual(["conversation", "token", "sources", "done"])
    })
  )

  it.effect("a provider failure after the stream started is an error event; nothing final is stored", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const { ws, agentId } = yield* setup(h)
      yield* h.call("PATCH", `/v1/agents/${agentId}`, { key: ws.secretTest, body: { instructions: "Answer in one sentence." } })
      yield* h.call("POST", `/v1/agents/${agentId}/glossary/terms`, {
        key: ws.secretTest,
        body: { term: "delivery", synonyms: ["shipping"] }
      })
      yield* model.offer("Orders", failHere)
      const reply = yield* sse(h, `/v1/agents/${agentId}/messages`, { key: ws.secretTest, body: { message: question } })
      expect(reply.status).toBe(200)
      expect(types(reply.events)).toEqual(["conversation", "token", "error"])
      // the provider's outage: the event says how long to wait before sending again
      expect(reply.events[2]!.data).toEqual({ type: "error", code: "service_unavailable", message: expect.any(String), retry_after: 5 })
      // the model was asked with the agent's instructions, the knowledge and the glossary's synonyms
      const asked = model.record.inputs[model.record.inputs.length - 1]!
      expect(asked.instructions).toBe("Answer in one sentence.")
      expect(asked.grounding[0]).toMatchObject({ kind: "qa", title: question, text: "Two days." })
      expect(asked.expandedQuery).toContain("shipping")

      const { conversation_id, message_id } = reply.events[0]!.data
      expect(yield* statusOf(message_id)).toBe("failed")
      const conversation = yield* h.call("GET", `/v1/conversations/${conversation_id}`, { key: ws.secretTest })
      expect(conversation.body.data.messages.map((m: any) => m.role)).toEqual(["user"])

      // stream:false turns the same failure into a 503 envelope
      yield* model.offer(failHere)
      const json = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: question, stream: false }
      })
      expect(json.status).toBe(503)
      expect(json.body.error.code).toBe("service_unavailable")
    })
  )
})
