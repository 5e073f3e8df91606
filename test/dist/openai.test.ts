/**
 * The `openai` AI provider through the bundle (its code is a lazy chunk, loaded
 * when the provider is built) against a stand-in OpenAI-compatible server on
 * 127.0.0.1: a text source is categorized, turned into Q&A and embedded by it;
 * a streamed reply comes from its SSE; an audio lesson source without a
 * transcript is transcribed by it. The same service exports its traces to a
 * stand-in OTLP/HTTP collector (tracing is another lazy chunk).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { wav } from "../training/audioBytes.js"
import {
  cleanupAll,
  bootstrapWorkspace,
  databaseName,
  eventTypes,
  eventually,
  expectCall,
  type Peer,
  readSse,
  type Received,
  sendJson,
  type Service,
  setupTimeout,
  startPeer,
  startService,
  tokenText,
  uploadFile,
  type Workspace
} from "./support.js"

const apiKey = "sk-stand-in-key"
const dimensions = 1536
const answerTokens = ["Parcels", " arrive", " in", " two", " days."]

const chunk = (content: string | null) =>
  JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta: content === null ? {} : { content } }] })

/** A deterministic embedding of `dimensions` numbers (not unit length: the provider normalises). */
const embedding = (text: string) => Array.from({ length: dimensions }, (_, i) => (i === text.length % dimensions ? 3 : 0) + (i === 0 ? 4 : 0))

/** Chat completions (JSON mode for categories and Q&A, SSE when `stream`), embeddings, transcriptions. */
const answer = (request: Received, res: Parameters<Parameters<typeof startPeer>[0]>[1]) => {
  if (request.path === "/v1/embeddings") {
    const body = JSON.parse(request.body)
    const inputs: Array<string> = Array.isArray(body.input) ? body.input : [body.input]
    return sendJson(res, 200, {
      object: "list",
      model: body.model,
      data: inputs.map((text, index) => ({ object: "embedding", index, embedding: embedding(text) })),
      usage: { prompt_tokens: inputs.length, total_tokens: inputs.length }
    })
  }
  if (request.path === "/v1/audio/transcriptions") {
    return sendJson(res, 200, { text: "Glazed pieces dry for a whole day before the second firing.", duration: 2 })
  }
  if (request.path === "/v1/chat/completions") {
    const body = JSON.parse(request.body)
    if (body.stream === true) {
      res.writeHead(200, { "content-type": "text/event-stream" })
      return res.end(`${answerTokens.map((t) => `data: ${chunk(t)}\n\n`).join("")}data: ${chunk(null)}\n\ndata: [DONE]\n\n`)
    }
    const system: string = body.messages[0].content
    const content = system.includes('"categories"')
      ? JSON.stringify({
          categories: [
            { name: "Shipping", description: "Delivery times and costs" },
            { name: "Payments", description: "Cards and invoices" },
            { name: "Returns", description: "Sending items back" }
          ]
        })
      : JSON.stringify({
          qa: [
            { question: "How long does delivery take?", answer: "Two days from the stand-in model.", category: "Shipping" },
            { question: "Can I pay by card?", answer: "Yes, every card.", category: "Payments" }
          ]
        })
    return sendJson(res, 200, {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1_700_000_000,
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }]
    })
  }
  sendJson(res, 404, { error: { message: `not found: ${request.path}` } })
}

let openai: Peer
let collector: Peer
let service: Service
let ws: Workspace

beforeAll(async () => {
  openai = await startPeer(answer)
  collector = await startPeer((_request, res) => sendJson(res, 200, {}))
  service = await startService({
    AI_PROVIDER: "openai",
    AI_BASE_URL: `${openai.origin}/v1`,
    AI_API_KEY: apiKey,
    AI_CHAT_MODEL: "stand-in-chat",
    AI_EMBEDDING_MODEL: "stand-in-embed",
    AI_TRANSCRIPTION_MODEL: "stand-in-whisper",
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin
  })
  ws = await bootstrapWorkspace(service)
}, setupTimeout)

afterAll(async () => {
  await cleanupAll()
})

const settled = (s: { status: string }) => s.status === "indexed" || s.status === "failed"

describe(`the openai provider through the bundle (${databaseName})`, () => {
  it("a text source is categorized, turned into Q&A and embedded by the stand-in server", async () => {
    const agent = await expectCall(service, "POST", "/v1/agents", 201, { key: ws.secret, body: { type: "support", name: "OpenAI desk" } })
    const agentId = agent.data.id as string
    const created = await expectCall(service, "POST", `/v1/agents/${agentId}/knowledge`, 201, {
      key: ws.secret,
      body: { type: "text", title: "Shop help", content: "## Shipping\n\nWe deliver in two days.\n\n## Payments\n\nCards are accepted." }
    })
    const done = await eventually(
      async () => (await expectCall(service, "GET", `/v1/agents/${agentId}/knowledge/${created.data.id}`, 200, { key: ws.secret })).data,
      (s: any) => settled(s) || s.attempts > 3,
      { label: "text source settled", tries: 300, intervalMs: 200, timeoutMs: 60_000 }
    )
    expect(done.status, JSON.stringify(done)).toBe("indexed")
    const calls = openai.received.filter((r) => r.path === "/v1/chat/completions" || r.path === "/v1/embeddings")
    expect(calls.map((r) => r.path)).toEqual(expect.arrayContaining(["/v1/chat/completions", "/v1/embeddings"]))
    for (const call of calls) expect(call.headers.authorization).toBe(`Bearer ${apiKey}`)
    const chat = calls.filter((r) => r.path === "/v1/chat/completions").map((r) => JSON.parse(r.body))
    expect(chat.every((b) => b.model === "stand-in-chat")).toBe(true)
    const qa = await expectCall(service, "GET", `/v1/agents/${agentId}/qa`, 200, { key: ws.secret })
    expect(qa.data.map((q: any) => q.answer).sort()).toEqual(["Two days from the stand-in model.", "Yes, every card."])

    // a streamed reply: the stand-in's tokens, relayed as the service's own events
    const reply = await readSse(`${service.base}/v1/agents/${agentId}/messages`, {
      key: ws.secret,
      body: { message: "How long does delivery take?" }
    })
    expect(reply.status, reply.text).toBe(200)
    expect(eventTypes(reply.events).at(-1), JSON.stringify(reply.events)).toBe("done")
    expect(tokenText(reply.events)).toBe(answerTokens.join(""))
    const streamed = openai.received.map((r) => (r.path === "/v1/chat/completions" ? JSON.parse(r.body) : {})).filter((b) => b.stream)
    expect(streamed).toHaveLength(1)
    expect(JSON.stringify(streamed[0].messages)).toContain("How long does delivery take?")
  }, 90_000)

  it("an audio lesson source without a transcript is transcribed by the stand-in server", async () => {
    const agent = await expectCall(service, "POST", "/v1/agents", 201, { key: ws.secret, body: { type: "training", name: "Course" } })
    const agentId = agent.data.id as string
    const module = await expectCall(service, "POST", `/v1/agents/${agentId}/modules`, 201, { key: ws.secret, body: { title: "Basics" } })
    const lesson = await expectCall(service, "POST", `/v1/agents/${agentId}/lessons`, 201, {
      key: ws.secret,
      body: { module_id: module.data.id, title: "Glazing" }
    })
    const fileId = await uploadFile(service, ws.secret, "glaze.wav", "audio/wav", wav(2))
    await expectCall(service, "POST", `/v1/agents/${agentId}/sources`, 201, {
      key: ws.secret,
      body: { lesson_id: lesson.data.id, type: "audio", file_id: fileId, title: "Glaze talk" }
    })
    const sources = await eventually(
      async () =>
        (await expectCall(service, "GET", `/v1/agents/${agentId}/sources?lesson_id=${lesson.data.id}`, 200, { key: ws.secret }))
          .data as Array<any>,
      (list) => list.length > 0 && list.every(settled),
      { label: "lesson source settled", tries: 300, intervalMs: 200, timeoutMs: 60_000 }
    )
    expect(sources[0], JSON.stringify(sources[0])).toMatchObject({ status: "indexed", type: "audio" })
    const upload = openai.received.find((r) => r.path === "/v1/audio/transcriptions")
    expect(upload?.headers["content-type"]).toMatch(/^multipart\/form-data/)
    expect(upload?.body).toContain("stand-in-whisper")
  }, 90_000)

  it("traces reach the OTLP/HTTP collector (the tracing chunk), request spans with their routes", async () => {
    await expectCall(service, "GET", "/v1/agents", 200, { key: ws.secret })
    const spanNames = (bodies: ReadonlyArray<Received>) =>
      bodies
        .filter((r) => r.method === "POST" && r.path === "/v1/traces")
        .flatMap((r) => {
          const parsed = JSON.parse(r.body) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<{ name: string }> }> }> }
          return (parsed.resourceSpans ?? []).flatMap((rs) => (rs.scopeSpans ?? []).flatMap((s) => (s.spans ?? []).map((span) => span.name)))
        })
    const names = await eventually(
      async () => spanNames(collector.received),
      (all) => all.some((n) => n.startsWith("http.server")),
      { label: "request spans exported", tries: 100, intervalMs: 100, timeoutMs: 15_000 }
    )
    expect(names.length).toBeGreaterThan(1)
    const body = collector.received.find((r) => r.path === "/v1/traces")!
    expect(body.body).toContain("assistant-platform")
    // the key never leaves in a span attribute
    expect(collector.received.some((r) => r.body.includes(ws.secret))).toBe(false)
  }, 30_000)
})
