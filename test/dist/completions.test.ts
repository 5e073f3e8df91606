/**
 * The OpenAI-compatible chat through the bundle (`node server.mjs` from a copy of `dist/`), driven by OpenAI's
 * official client (`openai`) with the secret key as its API key and the service's `/v1` as its base URL: the
 * agents listed as models, a completion plain and streamed drawn from a knowledge source, a follow-up read with
 * its history and a stored conversation continued with `Conversation-Id`, and the refusals as the client's typed
 * errors (an unknown model, a wrong key, a widget key, a parameter it does not do, the rate limit).
 */
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  bootstrapWorkspace,
  cleanupAll,
  databaseName,
  expectCall,
  harbourShop,
  type Service,
  setupTimeout,
  startService,
  type Workspace
} from "./support.js"

let service: Service
let ws: Workspace
let agentId: string
let sourceId: string
let carrierQa: string

const client = (key: string, base = service.base) => new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 })

beforeAll(async () => {
  service = await startService()
  ws = await bootstrapWorkspace(service)
  const shop = await harbourShop(service, ws)
  agentId = shop.agentId
  sourceId = shop.sourceId
  carrierQa = (
    await expectCall(service, "POST", `/v1/agents/${agentId}/qa`, 201, {
      key: ws.secret,
      body: {
        question: "Which carrier delivers our parcels in Portugal?",
        answer: "Correos delivers our parcels in Portugal, within four working days."
      }
    })
  ).data.id
}, setupTimeout)

afterAll(async () => {
  await cleanupAll()
})

describe(`OpenAI-compatible chat through the bundle, with the official client (${databaseName})`, () => {
  it("lists the agents as models and retrieves one by id and by slug", async () => {
    const openai = client(ws.secret)
    const models = []
    for await (const model of openai.models.list()) models.push(model)
    expect(models.map((m) => m.id)).toEqual([agentId])
    expect(models[0]).toMatchObject({ object: "model", owned_by: ws.id, slug: "harbour-shop" })
    expect((await openai.models.retrieve(agentId)).id).toBe(agentId)
    expect((await openai.models.retrieve("harbour-shop")).id).toBe(agentId)
  })

  it("a plain completion is drawn from the agent's source, and is a stored conversation's reply", async () => {
    const openai = client(ws.secret)
    const { data: completion, response } = await openai.chat.completions
      .create({ model: agentId, messages: [{ role: "user", content: "When does the shop open on Saturday?" }], temperature: 0 })
      .withResponse()
    expect(completion.object).toBe("chat.completion")
    expect(completion.choices).toHaveLength(1)
    expect(completion.choices[0]!.finish_reason).toBe("stop")
    expect(completion.choices[0]!.message.role).toBe("assistant")
    expect(completion.choices[0]!.message.content).toMatch(/nine/i)
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens)
    const extension = completion as unknown as { sources: Array<{ id: string }>; conversation_id: string }
    expect(extension.sources.map((s) => s.id)).toContain(sourceId)
    const conversationId = response.headers.get("conversation-id")
    expect(conversationId).toBe(extension.conversation_id)
    const conversation = await expectCall(service, "GET", `/v1/conversations/${conversationId}`, 200, { key: ws.secret })
    expect(conversation.data.messages.at(-1).content).toBe(completion.choices[0]!.message.content)
  })

  it("a streamed completion is chunks whose content is the reply, usage last when asked", async () => {
    const openai = client(ws.secret)
    const stream = await openai.chat.completions.create({
      model: "harbour-shop",
      messages: [{ role: "user", content: "When does the shop open on Saturday?" }],
      stream: true,
      stream_options: { include_usage: true }
    })
    const chunks: Array<OpenAI.Chat.Completions.ChatCompletionChunk> = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === agentId)).toBe(true)
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant")
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")
    expect(content).toMatch(/nine/i)
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("stop")
    expect((chunks.at(-2) as unknown as { sources: Array<{ id: string }> }).sources.map((s) => s.id)).toContain(sourceId)
    expect(chunks.at(-1)!.choices).toEqual([])
    expect(chunks.at(-1)!.usage!.completion_tokens).toBeGreaterThan(0)
  })

  it("a follow-up is read with its history, and Conversation-Id continues a stored conversation", async () => {
    const openai = client(ws.secret)
    const followUp = await openai.chat.completions.create({
      model: agentId,
      messages: [
        { role: "system", content: "Answer in one sentence." },
        { role: "user", content: "Which carrier delivers our parcels in Portugal?" },
        { role: "assistant", content: "Correos delivers them." },
        { role: "user", content: "How long does that take?" }
      ]
    })
    expect(followUp.choices[0]!.message.content).toContain("four working days")
    expect((followUp as unknown as { sources: Array<{ id: string }> }).sources.map((s) => s.id)).toEqual([carrierQa])

    const { response } = await openai.chat.completions
      .create({ model: agentId, messages: [{ role: "user", content: "Which carrier delivers our parcels in Portugal?" }] })
      .withResponse()
    const conversationId = response.headers.get("conversation-id")!
    const { data: next, response: nextResponse } = await openai.chat.completions
      .create(
        { model: agentId, messages: [{ role: "user", content: "How long does that take?" }] },
        { headers: { "Conversation-Id": conversationId } }
      )
      .withResponse()
    expect(nextResponse.headers.get("conversation-id")).toBe(conversationId)
    expect(next.choices[0]!.message.content).toContain("four working days")
    const conversation = await expectCall(service, "GET", `/v1/conversations/${conversationId}`, 200, { key: ws.secret })
    expect(conversation.data.message_count).toBe(4)
  })

  it("refusals are the client's typed errors, with the envelope's code and type", async () => {
    const question = [{ role: "user" as const, content: "Hello?" }]
    const unknown = await client(ws.secret).chat.completions.create({ model: "gpt-4o", messages: question }).catch((e: unknown) => e)
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError)
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("model_not_found")
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).type).toBe("invalid_request")
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).param).toBe("model")

    const wrong = await client("sk_test_unknownunknownunknown00").models.list().catch((e: unknown) => e)
    expect(wrong).toBeInstanceOf(OpenAI.AuthenticationError)
    expect((wrong as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe("invalid_api_key")

    const widgetKey = (
      await expectCall(service, "POST", "/v1/keys", 201, { key: ws.secret, body: { kind: "widget", scopes: ["widget:chat"] } })
    ).data.secret as string
    const widget = await client(widgetKey).chat.completions.create({ model: agentId, messages: question }).catch((e: unknown) => e)
    expect(widget).toBeInstanceOf(OpenAI.PermissionDeniedError)
    expect((widget as InstanceType<typeof OpenAI.PermissionDeniedError>).code).toBe("key_scope_mismatch")

    const many = await client(ws.secret).chat.completions.create({ model: agentId, messages: question, n: 2 }).catch((e: unknown) => e)
    expect(many).toBeInstanceOf(OpenAI.BadRequestError)
    expect((many as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("n")
    const tools = await client(ws.secret)
      .chat.completions.create({
        model: agentId,
        messages: question,
        tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }]
      })
      .catch((e: unknown) => e)
    expect(tools).toBeInstanceOf(OpenAI.BadRequestError)
    expect((tools as InstanceType<typeof OpenAI.BadRequestError>).message).toContain("tools")
  })

  it(
    "past the rate limit the client gets a RateLimitError",
    async () => {
      const limited = await startService({ RATE_LIMIT_RPS: "1", RATE_LIMIT_BURST: "2" })
      const key = (await bootstrapWorkspace(limited)).secret
      const openai = client(key, limited.base)
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, () => openai.models.list().then(
          () => "ok",
          (e: unknown) => e
        ))
      )
      const refused = outcomes.filter((o) => o !== "ok")
      expect(refused.length).toBeGreaterThan(0)
      for (const error of refused) {
        expect(error).toBeInstanceOf(OpenAI.RateLimitError)
        expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe("rate_limited")
        expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers.get("retry-after")).toMatch(/^\d+$/)
      }
    },
    setupTimeout
  )
})
