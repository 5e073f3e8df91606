/**
 * The OpenAI-compatible chat (`POST /v1/chat/completions`, `GET /v1/models`) over real HTTP with the `local`
 * model: the agents as models (by id and by slug), a completion plain and streamed drawn from the agent's
 * knowledge and stored as a conversation's reply, a follow-up read with the request's history, a stored
 * conversation continued with `Conversation-Id`, `max_tokens` as a cap, a URL source as a `url_citation`, an
 * `Idempotency-Key`'s replay in the completions' shape, and the refusals (parameters that change the meaning,
 * an unknown model, keys).
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fetcher from "../../layers/Fetcher.js"
import { fallbackAnswer } from "../../src/conversations/Answering.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { waitSettled } from "../knowledge/support.js"
import { addQa, createAgent } from "../conversations/support.js"

const site = "https://docs.example/"
const pages = Fetcher.layerTest(
  () => Fetcher.response(200, "ok"),
  (request) =>
    request.url.startsWith(site)
      ? {
          _tag: "Response",
          status: 200,
          contentType: "text/plain",
          body: new TextEncoder().encode(
            "Warranty. Every kettle has a warranty of two years from the day of purchase; keep the receipt."
          ),
          url: request.url
        }
      : { _tag: "Failure", reason: "connect", message: `nothing answers ${request.url} here` }
)

const complete = (h: HarnessShape, key: string, body: unknown, headers: Record<string, string> = {}) =>
  h.call("POST", "/v1/chat/completions", { key, body, headers })

interface Streamed {
  readonly status: number
  readonly headers: Headers
  readonly frames: ReadonlyArray<string>
  readonly chunks: ReadonlyArray<any>
  readonly text: string
}

/** A streamed completion read whole: its `data:` frames, and those that are JSON parsed. */
const streamed = (h: HarnessShape, key: string, body: unknown, headers: Record<string, string> = {}) =>
  Effect.promise(async (): Promise<Streamed> => {
    const response = await fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      body: JSON.stringify(body)
    })
    const text = await response.text()
    const frames = text
      .split("\n\n")
      .filter((f) => f.startsWith("data: "))
      .map((f) => f.slice("data: ".length))
    return {
      status: response.status,
      headers: response.headers,
      frames,
      chunks: frames.filter((f) => f !== "[DONE]").map((f) => JSON.parse(f)),
      text
    }
  })

const shop = Effect.gen(function* () {
  const h = yield* Harness
  const ws = yield* h.seed()
  const agentId = yield* createAgent(h, ws.secretTest)
  const canada = yield* addQa(h, ws.secretTest, agentId, "Do you ship to Canada?", "Yes: parcels to Canada arrive in six days.")
  const spain = yield* addQa(h, ws.secretTest, agentId, "Do you ship to Spain?", "Yes: parcels to Spain arrive in ten days.")
  const carrier = yield* addQa(
    h,
    ws.secretTest,
    agentId,
    "Which carrier delivers our parcels in Portugal?",
    "Correos delivers our parcels in Portugal, within four working days."
  )
  yield* addQa(h, ws.secretTest, agentId, "Can I return an item?", "Returns are accepted within 30 days of delivery.")
  return { h, ws, agentId, canada, spain, carrier }
})

layer(testServer({}, { fetcher: pages }))("OpenAI-compatible chat", (it) => {
  it.effect("lists the workspace's agents as models, and finds one by id or slug", () =>
    Effect.gen(function* () {
      const { h, ws, agentId } = yield* shop
      const listed = yield* h.call("GET", "/v1/models", { key: ws.secretTest })
      expect(listed.status, listed.text).toBe(200)
      expect(listed.body.object).toBe("list")
      expect(listed.body.data).toHaveLength(1)
      const model = listed.body.data[0]
      expect(model).toMatchObject({ id: agentId, object: "model", owned_by: ws.workspace.id, name: "Reply bot", slug: "reply-bot" })
      expect(typeof model.created).toBe("number")
      const byId = yield* h.call("GET", `/v1/models/${agentId}`, { key: ws.secretTest })
      expect(byId.body).toEqual(model)
      const bySlug = yield* h.call("GET", "/v1/models/reply-bot", { key: ws.secretTest })
      expect(bySlug.body).toEqual(model)
      const unknown = yield* h.call("GET", "/v1/models/gpt-4o", { key: ws.secretTest })
      expect(unknown.status).toBe(404)
      expect(unknown.body.error).toMatchObject({ type: "invalid_request", code: "model_not_found", param: "model" })
      // the live environment has no agents
      const live = yield* h.call("GET", "/v1/models", { key: ws.secretLive })
      expect(live.body.data).toEqual([])
    })
  )

  it.effect("a plain completion is the agent's reply drawn from its knowledge, stored in a conversation", () =>
    Effect.gen(function* () {
      const { h, ws, agentId, canada } = yield* shop
      const reply = yield* complete(h, ws.secretTest, {
        model: agentId,
        messages: [{ role: "user", content: "Do you ship to Canada?" }],
        temperature: 0.2,
        user: "someone"
      })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
      const body = reply.body
      expect(body).toMatchObject({ object: "chat.completion", model: agentId })
      expect(body.id).toBe(`chatcmpl-${body.message_id}`)
      expect(body.choices).toHaveLength(1)
      expect(body.choices[0]).toMatchObject({ index: 0, finish_reason: "stop", logprobs: null })
      expect(body.choices[0].message).toMatchObject({ role: "assistant", refusal: null, annotations: [] })
      expect(body.choices[0].message.content).toContain("six days")
      expect(body.usage.completion_tokens).toBeGreaterThan(0)
      expect(body.usage.prompt_tokens).toBeGreaterThan(0)
      expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens)
      expect(body.sources[0].id).toBe(canada)
      expect(reply.headers.get("conversation-id")).toBe(body.conversation_id)
      expect(reply.headers.get("message-id")).toBe(body.message_id)
      // a conversation like any other: the question and the reply, on the `api` channel
      const conversation = yield* h.call("GET", `/v1/conversations/${body.conversation_id}`, { key: ws.secretTest })
      expect(conversation.body.data).toMatchObject({ agent_id: agentId, channel: "api", message_count: 2 })
      expect(conversation.body.data.messages.map((m: any) => m.role)).toEqual(["user", "assistant"])
      expect(conversation.body.data.messages[1]).toMatchObject({ id: body.message_id, content: body.choices[0].message.content })
      // and counted as a reply
      const usage = yield* h.call("GET", "/v1/usage", { key: ws.secretTest })
      expect(usage.status, usage.text).toBe(200)
      expect(JSON.stringify(usage.body.data)).toMatch(/"replies":{"used":1/)
    })
  )

  it.effect("a streamed completion is chat.completion.chunk events ending with [DONE], usage when asked", () =>
    Effect.gen(function* () {
      const { h, ws, agentId, spain } = yield* shop
      const reply = yield* streamed(h, ws.secretTest, {
        model: "reply-bot",
        messages: [{ role: "user", content: "Do you ship to Spain?" }],
        stream: true,
        stream_options: { include_usage: true }
      })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.headers.get("content-type")).toMatch(/^text\/event-stream/)
      expect(reply.frames.at(-1)).toBe("[DONE]")
      const chunks = reply.chunks
      for (const chunk of chunks) {
        expect(chunk).toMatchObject({ object: "chat.completion.chunk", model: agentId })
        expect(chunk.id).toBe(chunks[0].id)
      }
      expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "" })
      const content = chunks
        .flatMap((c) => c.choices)
        .map((c: any) => c.delta.content ?? "")
        .join("")
      expect(content).toContain("ten days")
      const last = chunks.at(-2)
      expect(last.choices[0].finish_reason).toBe("stop")
      expect(last.sources[0].id).toBe(spain)
      expect(last.conversation_id).toBe(reply.headers.get("conversation-id"))
      const usage = chunks.at(-1)
      expect(usage.choices).toEqual([])
      expect(usage.usage.completion_tokens).toBeGreaterThan(0)
      // the stored reply is what was streamed
      const conversation = yield* h.call("GET", `/v1/conversations/${last.conversation_id}`, { key: ws.secretTest })
      expect(conversation.body.data.messages[1].content).toBe(content)
      // without include_usage there is no usage chunk
      const plain = yield* streamed(h, ws.secretTest, {
        model: agentId,
        messages: [{ role: "user", content: "Do you ship to Spain?" }],
        stream: true
      })
      expect(plain.chunks.every((c) => c.usage === undefined)).toBe(true)
      expect(plain.chunks.at(-1).choices[0].finish_reason).toBe("stop")
    })
  )

  it.effect("a follow-up is read with the request's history; Conversation-Id continues a stored conversation", () =>
    Effect.gen(function* () {
      const { h, ws, agentId, carrier } = yield* shop
      const followUp = yield* complete(h, ws.secretTest, {
        model: agentId,
        messages: [
          { role: "system", content: "Answer briefly." },
          { role: "user", content: "Which carrier delivers our parcels in Portugal?" },
          { role: "assistant", content: "Correos delivers them." },
          { role: "user", content: "How long does that take?" }
        ]
      })
      expect(followUp.status, followUp.text).toBe(200)
      expect(followUp.body.sources.map((s: any) => s.id)).toEqual([carrier])
      expect(followUp.body.choices[0].message.content).toContain("four working days")
      // the same question without its history says nothing the knowledge holds
      const alone = yield* complete(h, ws.secretTest, { model: agentId, messages: [{ role: "user", content: "How long does that take?" }] })
      expect(alone.body.sources).toEqual([])
      expect(alone.body.choices[0].message.content).toBe(fallbackAnswer)

      // a stored conversation continued: its own history is read when the request brings none
      const first = yield* complete(h, ws.secretTest, {
        model: agentId,
        messages: [{ role: "user", content: "Which carrier delivers our parcels in Portugal?" }]
      })
      const conversationId = first.body.conversation_id as string
      const next = yield* complete(
        h,
        ws.secretTest,
        { model: agentId, messages: [{ role: "user", content: "How long does that take?" }] },
        { "conversation-id": conversationId }
      )
      expect(next.status, next.text).toBe(200)
      expect(next.headers.get("conversation-id")).toBe(conversationId)
      expect(next.body.conversation_id).toBe(conversationId)
      expect(next.body.sources.map((s: any) => s.id)).toEqual([carrier])
      const conversation = yield* h.call("GET", `/v1/conversations/${conversationId}`, { key: ws.secretTest })
      expect(conversation.body.data.message_count).toBe(4)
      // a conversation of no one
      const unknown = yield* complete(
        h,
        ws.secretTest,
        { model: agentId, messages: [{ role: "user", content: "Hello?" }] },
        { "conversation-id": "cnv_0000000000000000000000" }
      )
      expect(unknown.status, unknown.text).toBe(404)
      expect(unknown.body.error.code).toBe("resource_missing")
    })
  )

  it.effect("max_tokens caps the reply: finish_reason length", () =>
    Effect.gen(function* () {
      const { h, ws, agentId } = yield* shop
      const reply = yield* complete(h, ws.secretTest, {
        model: agentId,
        messages: [{ role: "user", content: "Do you ship to Canada?" }],
        max_tokens: 2
      })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.usage.completion_tokens).toBe(2)
      expect(reply.body.choices[0].finish_reason).toBe("length")
    })
  )

  it.effect("a source with a URL is a url_citation annotation", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "url", url: `${site}warranty` }
      })
      expect(created.status, created.text).toBe(201)
      const [settled] = yield* waitSettled(h, ws.secretTest, agentId, [created.body.data.id])
      expect(settled!.status).toBe("indexed")
      const reply = yield* complete(h, ws.secretTest, {
        model: agentId,
        messages: [{ role: "user", content: "How long is the kettle warranty?" }]
      })
      expect(reply.status, reply.text).toBe(200)
      const message = reply.body.choices[0].message
      expect(message.annotations).toEqual([
        {
          type: "url_citation",
          url_citation: { url: `${site}warranty`, title: expect.any(String), start_index: 0, end_index: message.content.length }
        }
      ])
      expect(reply.body.sources[0]).toMatchObject({ type: "chunk", url: `${site}warranty` })
    })
  )

  it.effect("an Idempotency-Key's retry of a streamed completion replays it as chunks", () =>
    Effect.gen(function* () {
      const { h, ws, agentId } = yield* shop
      const body = { model: agentId, messages: [{ role: "user", content: "Do you ship to Canada?" }], stream: true }
      const headers = { "idempotency-key": "completion-once-1" }
      const first = yield* streamed(h, ws.secretTest, body, headers)
      const again = yield* streamed(h, ws.secretTest, body, headers)
      expect(again.status).toBe(200)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.headers.get("conversation-id")).toBe(first.headers.get("conversation-id"))
      expect(again.frames).toEqual(first.frames)
      const conversation = yield* h.call("GET", `/v1/conversations/${first.headers.get("conversation-id")}`, { key: ws.secretTest })
      expect(conversation.body.data.message_count).toBe(2)
    })
  )

  it.effect("refuses what it does not do, an unknown model, and keys that may not ask", () =>
    Effect.gen(function* () {
      const { h, ws, agentId } = yield* shop
      const question = [{ role: "user", content: "Do you ship to Canada?" }]
      const refused = (body: Record<string, unknown>, param: string) =>
        Effect.map(complete(h, ws.secretTest, { model: agentId, messages: question, ...body }), (r) => {
          expect(r.status, r.text).toBe(400)
          expect(r.body.error).toMatchObject({ type: "invalid_request", code: "parameter_invalid", param })
          expect(r.body.error.message).toContain(param.replace(/\[.*$/, ""))
        })
      yield* refused({ n: 2 }, "n")
      yield* refused({ tools: [{ type: "function", function: { name: "f", parameters: {} } }] }, "tools")
      yield* refused({ response_format: { type: "json_object" } }, "response_format")
      yield* refused({ messages: [...question, { role: "assistant", content: "Yes." }] }, "messages[1].role")
      yield* refused({ messages: [{ role: "tool", content: "x" }, ...question] }, "messages[0].role")
      yield* refused({ messages: [{ role: "user", content: [{ type: "image_url" }] }] }, "messages[0].content[0].type")
      yield* refused({ messages: [] }, "messages")
      // harmless ones are accepted: n 1, text format, no tools
      const fine = yield* complete(h, ws.secretTest, {
        model: agentId,
        messages: [{ role: "user", content: [{ type: "text", text: "Do you ship to Canada?" }] }],
        n: 1,
        response_format: { type: "text" },
        tools: [],
        top_p: 1,
        presence_penalty: 0
      })
      expect(fine.status, fine.text).toBe(200)

      const unknown = yield* complete(h, ws.secretTest, { model: "gpt-4o", messages: question })
      expect(unknown.status).toBe(404)
      expect(unknown.body.error).toMatchObject({ type: "invalid_request", code: "model_not_found", param: "model" })
      // an agent of the other environment is no model of this key
      const live = yield* complete(h, ws.secretLive, { model: agentId, messages: question })
      expect(live.body.error.code).toBe("model_not_found")

      const wrongKey = yield* complete(h, "sk_test_unknownunknownunknown00", { model: agentId, messages: question })
      expect(wrongKey.status).toBe(401)
      expect(wrongKey.body.error).toMatchObject({ type: "authentication_error", code: "invalid_api_key" })
      const widget = yield* complete(h, ws.widgetTest, { model: agentId, messages: question })
      expect(widget.status).toBe(403)
      expect(widget.body.error).toMatchObject({ type: "permission_error", code: "key_scope_mismatch" })
      // nothing refused was stored
      const conversations = yield* h.call("GET", `/v1/conversations?agent_id=${agentId}`, { key: ws.secretTest })
      expect(conversations.body.data).toHaveLength(1)
    })
  )
})
