/**
 * `Idempotency-Key` on streamed messages, on the API and the widget surface,
 * read by an independent SSE parser: the same key again sends no second
 * message and replays the reply's events from the first with
 * `Idempotent-Replayed: true` (following it live while it is still being
 * generated); the key with another body is `422 idempotency_key_mismatch`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { addQa, gatedModel, received, soFar, sse, text, types } from "./support.js"

const model = gatedModel()
const question = "How long does delivery take?"
const shop = "https://shop.example.com"

const messagesOf = (workspaceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ role: string; n: string }>`
      select role, count(*) as n from messages where workspace_id = ${workspaceId} group by role order by role`.pipe(
      Effect.orDie,
      Effect.map((rows) => Object.fromEntries(rows.map((r) => [r.role, Number(r.n)])))
    )
  )

const setup = (h: HarnessShape) =>
  Effect.gen(function* () {
    const ws = yield* h.seed()
    const created = yield* h.call("POST", "/v1/agents", {
      key: ws.secretTest,
      body: { type: "support", name: "Replay bot", allowed_origins: [shop] }
    })
    const agentId = created.body.data.id as string
    yield* addQa(h, ws.secretTest, agentId, question, "Two days.")
    return { ws, agentId }
  })

layer(testServer({ replyResumeGraceSeconds: 30 }, { ai: model.layer }))("idempotent streams", (it) => {
  it.effect("API: the same key twice sends one message; the second answer replays every event", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const { ws, agentId } = yield* setup(h)
      const path = `/v1/agents/${agentId}/messages`
      const headers = { "idempotency-key": "stream-once-1" }
      const started = model.record.started
      yield* model.offer("Orders", " arrive", " in two days.", null)
      const first = yield* sse(h, path, { key: ws.secretTest, body: { message: question }, headers })
      expect(first.status).toBe(200)
      expect(first.headers.get("idempotent-replayed")).toBeNull()
      expect(types(first.events)).toEqual(["conversation", "token", "token", "token", "sources", "done"])

      const second = yield* sse(h, path, { key: ws.secretTest, body: { message: question }, headers })
      expect(second.status).toBe(200)
      expect(second.headers.get("content-type")).toMatch(/^text\/event-stream/)
      expect(second.headers.get("idempotent-replayed")).toBe("true")
      expect(second.headers.get("request-id")).toMatch(/^req_/)
      expect(second.headers.get("conversation-id")).toBe(first.headers.get("conversation-id"))
      expect(second.headers.get("message-id")).toBe(first.headers.get("message-id"))
      expect(second.events).toEqual(first.events)
      expect(text(second.events)).toBe("Orders arrive in two days.")
      expect(yield* messagesOf(ws.workspace.id)).toEqual({ assistant: 1, user: 1 })
      expect(model.record.started).toBe(started + 1)

      // another body (another message, or the same one as JSON) with the key: 422, nothing sent
      for (const body of [{ message: "Something else" }, { message: question, stream: false }]) {
        const other = yield* h.call("POST", path, { key: ws.secretTest, body, headers })
        expect(other.status, other.text).toBe(422)
        expect(other.body.error).toMatchObject({ type: "idempotency_error", code: "idempotency_key_mismatch", param: "Idempotency-Key" })
        expect(other.body.meta.request_id).toMatch(/^req_/)
      }
      expect(yield* messagesOf(ws.workspace.id)).toEqual({ assistant: 1, user: 1 })

      // another key is another message
      yield* model.offer("Again.", null)
      const fresh = yield* sse(h, path, {
        key: ws.secretTest,
        body: { message: question },
        headers: { "idempotency-key": "stream-once-2" }
      })
      expect(fresh.headers.get("idempotent-replayed")).toBeNull()
      expect(fresh.headers.get("message-id")).not.toBe(first.headers.get("message-id"))
      expect(yield* messagesOf(ws.workspace.id)).toEqual({ assistant: 2, user: 2 })
    })
  )

  it.effect("API: a retry while the reply is still generated replays it from the first event and follows it live", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const { ws, agentId } = yield* setup(h)
      const path = `/v1/agents/${agentId}/messages`
      const headers = { "idempotency-key": "stream-live-1" }
      const started = model.record.started
      yield* model.offer("Orders", " arrive")
      // the connection drops after the second token
      const dropped = yield* sse(h, path, {
        key: ws.secretTest,
        body: { message: question },
        headers,
        stopWhen: (events) => events.filter((e) => e.data.type === "token").length >= 2
      })
      expect(types(dropped.events)).toEqual(["conversation", "token", "token"])

      const following = soFar()
      const retry = yield* Effect.fork(sse(h, path, { key: ws.secretTest, body: { message: question }, headers, soFar: following }))
      // the retry has had the events so far replayed, and follows the reply
      yield* received(following, 3, "the events so far replayed")
      yield* model.offer(" in", " two days.")
      yield* received(following, 5, "the new tokens, live")
      yield* model.offer(null)
      const replayed = yield* Fiber.join(retry)
      expect(replayed.status).toBe(200)
      expect(replayed.headers.get("idempotent-replayed")).toBe("true")
      expect(types(replayed.events)).toEqual(["conversation", "token", "token", "token", "token", "sources", "done"])
      expect(replayed.events.map((e) => e.id)).toEqual(["1", "2", "3", "4", "5", "6", "7"])
      expect(replayed.events.slice(0, 3)).toEqual(dropped.events)
      expect(text(replayed.events)).toBe("Orders arrive in two days.")
      expect(model.record.started).toBe(started + 1)
      expect(yield* messagesOf(ws.workspace.id)).toEqual({ assistant: 1, user: 1 })

      const conversation = yield* h.call("GET", `/v1/conversations/${dropped.events[0]!.data.conversation_id}`, {
        key: ws.secretTest
      })
      expect(conversation.body.data.messages.map((m: any) => m.content)).toEqual([question, "Orders arrive in two days."])
    })
  )

  it.effect("widget: the same key twice sends one message and replays every event; another body is 422", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const { ws, agentId } = yield* setup(h)
      const opened = yield* h.call("POST", `/widget/v1/agents/${agentId}/conversations`, {
        key: ws.widgetTest,
        headers: { origin: shop },
        body: {}
      })
      expect(opened.status, opened.text).toBe(201)
      const path = `/widget/v1/agents/${agentId}/conversations/${opened.body.data.id}/messages`
      const headers = { origin: shop, "idempotency-key": "widget-stream-1" }
      yield* model.offer("Two", " days.", null)
      const first = yield* sse(h, path, { key: ws.widgetTest, body: { message: question }, headers })
      expect(first.status).toBe(200)
      expect(first.headers.get("idempotent-replayed")).toBeNull()
      expect(types(first.events)).toEqual(["conversation", "token", "token", "sources", "done"])

      const second = yield* sse(h, path, { key: ws.widgetTest, body: { message: question }, headers })
      expect(second.status).toBe(200)
      expect(second.headers.get("idempotent-replayed")).toBe("true")
      expect(second.headers.get("access-control-allow-origin")).toBe(shop)
      expect(second.events).toEqual(first.events)
      expect(yield* messagesOf(ws.workspace.id)).toEqual({ assistant: 1, user: 1 })

      const other = yield* h.call("POST", path, { key: ws.widgetTest, body: { message: "Something else" }, headers })
      expect(other.status, other.text).toBe(422)
      expect(other.body.error).toMatchObject({ code: "idempotency_key_mismatch", param: "Idempotency-Key" })
      expect(other.headers.get("access-control-allow-origin")).toBe(shop)
      expect(yield* messagesOf(ws.workspace.id)).toEqual({ assistant: 1, user: 1 })

      const conversation = yield* h.call("GET", `/v1/conversations/${opened.body.data.id}`, { key: ws.secretTest })
      expect(conversation.body.data.messages.map((m: any) => m.role)).toEqual(["user", "assistant"])
    })
  )
})
