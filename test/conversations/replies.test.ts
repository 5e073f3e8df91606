/**
 * Replies and conversations through the real server with the `local` model:
 * the event stream read by an independent parser, the JSON reply, errors
 * before the stream, conversations (continuing, listing, the idle timeout on
 * the TestClock). Keys and isolation: test/http/security-matrix.test.ts.
 */
import { expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as Duration from "effect/Duration"
import { JobQueue } from "../../layers/JobQueue.js"
import { catalogues } from "../../schema/texts/Catalogue.js"
import { ReplyRequestError, type StreamEvent, streamReply } from "../../src/sdk/index.js"
import { IDLE_QUEUE } from "../../src/conversations/Lifecycle.js"
import { Harness, testServer } from "../support/harness.js"
import { createAgent, knowledgeableAgent, sse, text, types } from "./support.js"

const eventsOf = (workspaceId: string, type: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ body: string }>`select body from events where workspace_id = ${workspaceId} and type = ${type} order by seq`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows.map((r) => JSON.parse(r.body)))
    )
  )

const idleMinutes = 30

layer(testServer({ conversationIdleMinutes: idleMinutes }))("replies", (it) => {

  it.effect("streams conversation, tokens, sources, done; the tokens are the stream:false reply", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId, deliveryQa } = yield* knowledgeableAgent(h, ws.secretTest)
      const question = "how many days does delivery take"
      const streamed = yield* sse(h, `/v1/agents/${agentId}/messages`, { key: ws.secretTest, body: { message: question } })
      expect(streamed.status).toBe(200)
      expect(streamed.headers.get("content-type")).toMatch(/^text\/event-stream/)
      expect(streamed.headers.get("cache-control")).toBe("no-cache")
      expect(streamed.headers.get("x-accel-buffering")).toBe("no")
      expect(streamed.headers.get("request-id")).toMatch(/^req_/)

      const kinds = types(streamed.events)
      expect(kinds[0]).toBe("conversation")
      expect(kinds.slice(-2)).toEqual(["sources", "done"])
      const tokens = kinds.slice(1, -2)
      expect(tokens.length).toBeGreaterThan(3)
      expect(new Set(tokens)).toEqual(new Set(["token"]))
      // every event has an id: 1, 2, 3, ...
      expect(streamed.events.map((e) => e.id)).toEqual(streamed.events.map((_, i) => String(i + 1)))

      const [first] = streamed.events
      const done = streamed.events[streamed.events.length - 1]!.data
      expect(first!.data.conversation_id).toMatch(/^cnv_/)
      expect(done).toEqual({
        type: "done",
        message_id: first!.data.message_id,
        conversation_id: first!.data.conversation_id,
        usage: { input_tokens: expect.any(Number), output_tokens: tokens.length, credits: 0 },
        outcome: "answered"
      })
      const sources = streamed.events[streamed.events.length - 2]!.data.sources
      expect(sources[0]).toEqual({ type: "qa", id: deliveryQa, title: "How long does delivery take?", url: null })
      expect(text(streamed.events)).toContain("five business days")

      const json = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: question, stream: false }
      })
      expect(json.status).toBe(201)
      expect(json.body.data).toEqual({
        id: expect.stringMatching(/^msg_/),
        object: "message",
        conversation_id: expect.stringMatching(/^cnv_/),
        role: "assistant",
        content: text(streamed.events),
        sources,
        feedback: null,
        outcome: "answered",
        created_at: expect.any(String)
      })
      expect(json.body.data.conversation_id).not.toBe(first!.data.conversation_id)

      // the streamed reply was stored final, after its question
      const conversation = yield* h.call("GET", `/v1/conversations/${first!.data.conversation_id}`, { key: ws.secretTest })
      expect(conversation.status).toBe(200)
      expect(conversation.body.data).toMatchObject({
        id: first!.data.conversation_id,
        object: "conversation",
        agent_id: agentId,
        channel: "api",
        status: "open",
        lead_id: null,
        message_count: 2,
        ended_at: null,
        metadata: {}
      })
      expect(conversation.body.data.messages.map((m: any) => [m.role, m.content])).toEqual([
        ["user", question],
        ["assistant", text(streamed.events)]
      ])
      expect(conversation.body.data.messages[1].id).toBe(done.message_id)

      // a live key's reply costs a credit
      const live = yield* knowledgeableAgent(h, ws.secretLive)
      const paid = yield* sse(h, `/v1/agents/${live.agentId}/messages`, { key: ws.secretLive, body: { message: question } })
      expect(paid.events[paid.events.length - 1]!.data.usage.credits).toBe(1)
    })
  )

  it.effect("continues a conversation; conversation.started once; the agent's instructions do not break the local model", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId } = yield* knowledgeableAgent(h, ws.secretTest)
      const first = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: "Can I return an item?", stream: false }
      })
      const conversationId = first.body.data.conversation_id
      const second = yield* sse(h, `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: "How do I reset my password?", conversation_id: conversationId }
      })
      expect(second.events[0]!.data.conversation_id).toBe(conversationId)
      const conversation = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
      expect(conversation.body.data.message_count).toBe(4)
      expect(conversation.body.data.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
      const started = yield* eventsOf(ws.workspace.id, "conversation.started")
      expect(started).toHaveLength(1)
      expect(started[0].data.conversation).toMatchObject({ id: conversationId, status: "open", channel: "api" })
    })
  )

  it.effect("answers with an escalation and a fallback when nothing relevant is known", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId } = yield* knowledgeableAgent(h, ws.secretTest)
      const reply = yield* sse(h, `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: "What is the airspeed velocity of an unladen swallow?" }
      })
      const kinds = types(reply.events)
      expect(kinds[0]).toBe("conversation")
      expect(kinds.slice(-3)).toEqual(["sources", "escalation", "done"])
      expect(reply.events[reply.events.length - 3]!.data.sources).toEqual([])
      expect(text(reply.events)).toMatch(/connect you with a person/)

      // an agent without any knowledge escalates too
      const empty = yield* createAgent(h, ws.secretTest)
      const bare = yield* sse(h, `/v1/agents/${empty}/messages`, { key: ws.secretTest, body: { message: "Hello?" } })
      expect(types(bare.events)).toContain("escalation")
    })
  )

  it.effect("errors before the stream are envelopes with their status", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const other = yield* createAgent(h, ws.secretTest)
      const post = (body: unknown, headers: Record<string, string> = {}, agent = agentId) =>
        h.call("POST", `/v1/agents/${agent}/messages`, { key: ws.secretTest, body, headers })
      const expectError = (reply: { status: number; body: any }, status: number, code: string, param?: string) => {
        expect(reply.status, JSON.stringify(reply.body)).toBe(status)
        expect(reply.body.error.code).toBe(code)
        if (param !== undefined) expect(reply.body.error.param).toBe(param)
        expect(reply.body.meta.request_id).toMatch(/^req_/)
      }

      expectError(yield* post({ message: "Hi" }, {}, "agt_doesnotexist000"), 404, "resource_missing")
      expectError(yield* post({}), 400, "parameter_missing", "message")
      expectError(yield* post({ message: "   " }), 400, "parameter_invalid", "message")
      expectError(yield* post({ message: "x".repeat(4001) }), 400, "parameter_invalid", "message")
      expectError(yield* post({ message: "Hi", stream: "yes" }), 400, "parameter_invalid", "stream")
      expectError(yield* post({ message: "Hi", conversation_id: "cnv_doesnotexist000" }), 404, "resource_missing", "conversation_id")
      expectError(yield* post({ message: "Hi", extra: 1 }), 400, "parameter_invalid")

      const elsewhere = yield* post({ message: "Hi", stream: false }, {}, other)
      expectError(
        yield* post({ message: "Hi", conversation_id: elsewhere.body.data.conversation_id }),
        400,
        "parameter_invalid",
        "conversation_id"
      )
      // a live conversation is not the sandbox's
      const liveAgent = yield* createAgent(h, ws.secretLive)
      const live = yield* h.call("POST", `/v1/agents/${liveAgent}/messages`, {
        key: ws.secretLive,
        body: { message: "Hi", stream: false }
      })
      expectError(yield* post({ message: "Hi", conversation_id: live.body.data.conversation_id }), 404, "resource_missing")

      // Idempotency-Key with stream:false replays the JSON reply (streams: see idempotent-streams.test.ts)
      const once = yield* post({ message: "Hi", stream: false }, { "idempotency-key": "k-2" })
      const again = yield* post({ message: "Hi", stream: false }, { "idempotency-key": "k-2" })
      expect(once.status).toBe(201)
      expect(again.body).toEqual(once.body)
      expect(again.headers.get("idempotent-replayed")).toBe("true")

      // resume: unknown conversation, reply, or a Last-Event-ID that is no event id
      const path = `/v1/conversations/${once.body.data.conversation_id}/messages/${once.body.data.id}/stream`
      expectError(yield* h.call("GET", path, { key: ws.secretTest, headers: { "last-event-id": "abc" } }), 400, "parameter_invalid", "Last-Event-ID")
      expectError(
        yield* h.call("GET", `/v1/conversations/cnv_doesnotexist000/messages/${once.body.data.id}/stream`, { key: ws.secretTest }),
        404,
        "resource_missing"
      )
      expectError(
        yield* h.call("GET", `/v1/conversations/${once.body.data.conversation_id}/messages/msg_doesnotexist000/stream`, {
          key: ws.secretTest
        }),
        404,
        "resource_missing"
      )
      expectError(yield* h.call("GET", "/v1/conversations/cnv_doesnotexist000", { key: ws.secretTest }), 404, "resource_missing")
      expectError(yield* h.call("GET", "/v1/conversations/not-an-id", { key: ws.secretTest }), 400, "parameter_invalid")
    })
  )

  it.effect("a finished reply is resumed from the database after any event, exactly", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId } = yield* knowledgeableAgent(h, ws.secretTest)
      const full = yield* sse(h, `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: "Can I return an item?" }
      })
      const { conversation_id, message_id } = full.events[0]!.data
      const path = `/v1/conversations/${conversation_id}/messages/${message_id}/stream`
      const all = yield* sse(h, path, { key: ws.secretTest })
      expect(all.events).toEqual(full.events)
      const rest = yield* sse(h, path, { key: ws.secretTest, headers: { "last-event-id": "3" } })
      expect(rest.events).toEqual(full.events.slice(3))
      const none = yield* sse(h, path, { key: ws.secretTest, headers: { "last-event-id": String(full.events.length) } })
      expect(none.events).toEqual([])
    })
  )

  it.effect("lists conversations newest first, filtered by agent and status, page by page", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const a = yield* createAgent(h, ws.secretTest)
      const b = yield* createAgent(h, ws.secretTest)
      const open = (agent: string) =>
        Effect.map(
          h.call("POST", `/v1/agents/${agent}/messages`, { key: ws.secretTest, body: { message: "Hi", stream: false } }),
          (r) => r.body.data.conversation_id as string
        )
      const a1 = yield* open(a)
      const b1 = yield* open(b)
      const a2 = yield* open(a)
      const a3 = yield* open(a)

      const all = yield* h.call("GET", "/v1/conversations?limit=100", { key: ws.secretTest })
      expect(all.body.data.map((c: any) => c.id)).toEqual([a3, a2, b1, a1])
      const first = yield* h.call("GET", `/v1/conversations?agent_id=${a}&limit=2`, { key: ws.secretTest })
      expect(first.body.data.map((c: any) => c.id)).toEqual([a3, a2])
      expect(first.body.meta.pagination.has_more).toBe(true)
      const second = yield* h.call(
        "GET",
        `/v1/conversations?agent_id=${a}&limit=2&starting_after=${first.body.meta.pagination.next_cursor}`,
        { key: ws.secretTest }
      )
      expect(second.body.data.map((c: any) => c.id)).toEqual([a1])
      expect(second.body.meta.pagination).toEqual({ has_more: false, next_cursor: null })
      // a cursor of other filters is refused
      const crossed = yield* h.call(
        "GET",
        `/v1/conversations?agent_id=${b}&limit=2&starting_after=${first.body.meta.pagination.next_cursor}`,
        { key: ws.secretTest }
      )
      expect(crossed.body.error.code).toBe("invalid_cursor")
      const ended = yield* h.call("GET", "/v1/conversations?status=ended", { key: ws.secretTest })
      expect(ended.body.data).toEqual([])
      const bad = yield* h.call("GET", "/v1/conversations?status=closed", { key: ws.secretTest })
      expect(bad.status).toBe(400)
      // other environments and workspaces are not listed
      const other = yield* h.seed()
      const foreign = yield* h.call("GET", "/v1/conversations", { key: other.secretTest })
      expect(foreign.body.data).toEqual([])
      const live = yield* h.call("GET", "/v1/conversations", { key: ws.secretLive })
      expect(live.body.data).toEqual([])
    })
  )

  it.effect("ends an idle conversation once, on the clock; a later message opens a new one", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const queue = yield* JobQueue
      const ws = yield* h.seed()
      const { agentId } = yield* knowledgeableAgent(h, ws.secretTest)
      const send = (body: Record<string, unknown>) =>
        h.call("POST", `/v1/agents/${agentId}/messages`, { key: ws.secretTest, body: { stream: false, ...body } })
      const first = yield* send({ message: "Can I return an item?" })
      const conversationId = first.body.data.conversation_id

      // activity 20 minutes in moves the deadline: at 30 minutes it is still open
      yield* TestClock.adjust(Duration.minutes(20))
      yield* send({ message: "How do I reset my password?", conversation_id: conversationId })
      yield* TestClock.adjust(Duration.minutes(idleMinutes - 20))
      yield* queue.awaitIdle(IDLE_QUEUE)
      const still = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
      expect(still.body.data.status).toBe("open")
      expect(yield* eventsOf(ws.workspace.id, "conversation.ended")).toHaveLength(0)

      yield* TestClock.adjust(Duration.minutes(20))
      yield* queue.awaitIdle(IDLE_QUEUE)
      const ended = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
      expect(ended.body.data.status).toBe("ended")
      expect(ended.body.data.ended_at).not.toBeNull()
      yield* TestClock.adjust(Duration.hours(2))
      yield* queue.awaitIdle(IDLE_QUEUE)
      const endedEvents = yield* eventsOf(ws.workspace.id, "conversation.ended")
      expect(endedEvents).toHaveLength(1)
      expect(endedEvents[0].data.conversation).toMatchObject({ id: conversationId, status: "ended" })

      const later = yield* send({ message: "Can I return an item?", conversation_id: conversationId })
      expect(later.status).toBe(201)
      expect(later.body.data.conversation_id).not.toBe(conversationId)
      const listed = yield* h.call("GET", `/v1/conversations?agent_id=${agentId}&status=ended`, { key: ws.secretTest })
      expect(listed.body.data.map((c: any) => c.id)).toEqual([conversationId])
      expect(yield* eventsOf(ws.workspace.id, "conversation.started")).toHaveLength(2)
    })
  )

  it.effect("the SDK's streamReply yields every event once and resumes by itself after a drop", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId } = yield* knowledgeableAgent(h, ws.secretTest)
      let cuts = 0
      // the first response breaks off after its third event, mid-stream, like a dropped connection
      const cutting: typeof fetch = async (input, init) => {
        const response = await fetch(input, init)
        if (cuts > 0 || response.body === null) return response
        cuts++
        const source = response.body.pipeThrough(new TextDecoderStream()).getReader()
        let seen = ""
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            const { done, value } = await source.read()
            if (done) return controller.close()
            seen += value
            const frames = seen.split("\n\n")
            if (frames.length > 3) {
              controller.enqueue(new TextEncoder().encode(frames.slice(0, 3).join("\n\n") + "\n\nid: 4\nda"))
              await source.cancel()
              controller.error(new TypeError("network connection lost"))
              return
            }
          }
        })
        return new Response(body, { status: response.status, headers: response.headers })
      }
      const collect = (options: Partial<Parameters<typeof streamReply>[0]>) =>
        Effect.promise(async () => {
          const out: Array<StreamEvent> = []
          try {
            for await (const event of streamReply({ baseUrl: h.url, apiKey: ws.secretTest, agentId, message: "Can I return an item?", resumeDelayMillis: 1, ...options })) {
              out.push(event)
            }
            return { events: out, error: undefined }
          } catch (error) {
            return { events: out, error: error as ReplyRequestError }
          }
        })
      const result = yield* collect({ fetch: cutting })
      expect(cuts).toBe(1)
      expect(result.error).toBeUndefined()
      const first = result.events[0]
      if (first?.type !== "conversation") return expect.fail("the first event is not `conversation`")
      const stored = yield* sse(h, `/v1/conversations/${first.conversation_id}/messages/${first.message_id}/stream`, {
        key: ws.secretTest
      })
      expect(result.events).toEqual(stored.events.map((e) => e.data))
      expect(types(stored.events).slice(-2)).toEqual(["sources", "done"])

      // a `locale` goes with the message: a question too short to tell gets the fallback and its offer in it
      const spanish = yield* collect({ message: "ok", locale: "es" })
      expect(spanish.events.filter((e) => e.type === "escalation")).toEqual([
        { type: "escalation", message: catalogues.es["answer.escalation"] }
      ])

      const refused = yield* collect({ agentId: "agt_doesnotexist000" })
      expect(refused.error).toBeInstanceOf(ReplyRequestError)
      expect([refused.error?.status, refused.error?.code]).toEqual([404, "resource_missing"])
    })
  )
})
