/**
 * The MCP endpoint (`POST /v1/mcp`) over real HTTP, as JSON-RPC: `initialize` without a session, the tools a
 * key's scopes allow (and only those, listed and callable), `search_knowledge` answering what the search
 * endpoint answers, `ask_agent` replying from a source and counted as a reply, tickets made and read, knowledge
 * sources as resources; what a twin refuses is a tool error, the protocol's mistakes JSON-RPC errors, a missing
 * or wrong key the API's own refusal.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Usage } from "../../src/usage/Usage.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { createAgent, waitSettled } from "../knowledge/support.js"

const faq = `# Opening hours

The shop on Harbour Street opens from nine in the morning to five in the afternoon, Monday to Saturday.
On Sundays the shop is closed. Parcels can be collected at the counter during opening hours.`

const rpc = (h: HarnessShape, key: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
  h.call("POST", "/v1/mcp", { ...(key === undefined ? {} : { key }), body, headers })

let nextId = 1
const request = (method: string, params?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id: nextId++,
  method,
  ...(params === undefined ? {} : { params })
})

/** One request's response, which must be a JSON-RPC response to it. */
const call = (h: HarnessShape, key: string, method: string, params?: Record<string, unknown>) =>
  Effect.map(rpc(h, key, request(method, params)), (reply) => {
    expect(reply.status, reply.text).toBe(200)
    expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
    expect(reply.body.jsonrpc).toBe("2.0")
    return reply.body as { id: number; result?: any; error?: { code: number; message: string; data?: any } }
  })

const tool = (h: HarnessShape, key: string, name: string, args: Record<string, unknown>) =>
  call(h, key, "tools/call", { name, arguments: args })

/** An agent with an indexed text source titled "Opening hours". */
const agentWithSource = (h: HarnessShape, key: string) =>
  Effect.gen(function* () {
    const agentId = yield* createAgent(h, key)
    const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
      key,
      body: { type: "text", title: "Opening hours", content: faq }
    })
    expect(created.status, created.text).toBe(201)
    const sourceId = created.body.data.id as string
    const [settled] = yield* waitSettled(h, key, agentId, [sourceId])
    expect(settled!.status).toBe("indexed")
    return { agentId, sourceId }
  })

const initializeParams = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "test", version: "1.0.0" }
}

layer(testServer())("MCP endpoint", (it) => {
  it.effect("initialize answers the protocol version and the capabilities, and sets no session", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const reply = yield* rpc(h, ws.secretTest, request("initialize", initializeParams))
      expect(reply.status, reply.text).toBe(200)
      expect(reply.headers.get("mcp-session-id")).toBeNull()
      expect(reply.headers.get("request-id")).toMatch(/^req_/)
      expect(reply.body.result.protocolVersion).toBe("2025-06-18")
      expect(reply.body.result.serverInfo.name).toBe("assistant-platform")
      expect(reply.body.result.capabilities.tools).toBeDefined()
      // an older version the server speaks is kept; an unknown one gets the latest
      const older = yield* call(h, ws.secretTest, "initialize", { ...initializeParams, protocolVersion: "2025-03-26" })
      expect(older.result.protocolVersion).toBe("2025-03-26")
      const future = yield* call(h, ws.secretTest, "initialize", { ...initializeParams, protocolVersion: "2099-01-01" })
      expect(future.result.protocolVersion).toBe("2025-06-18")
      // the client's `initialized` notification asks nothing: 202, no body
      const notified = yield* rpc(h, ws.secretTest, { jsonrpc: "2.0", method: "notifications/initialized" })
      expect(notified.status).toBe(202)
      expect(notified.text).toBe("")
      const pong = yield* call(h, ws.secretTest, "ping")
      expect(pong.result).toEqual({})
    })
  )

  it.effect("tools/list lists the tools the key's scopes allow, with their input schemas", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const all = yield* call(h, ws.secretTest, "tools/list")
      const names = all.result.tools.map((t: any) => t.name).sort()
      expect(names).toEqual(["ask_agent", "create_ticket", "get_ticket", "list_agents", "search_knowledge"])
      const search = all.result.tools.find((t: any) => t.name === "search_knowledge")
      expect(search.inputSchema.type).toBe("object")
      expect(search.inputSchema.required).toEqual(["agent", "query"])
      expect(Object.keys(search.inputSchema.properties).sort()).toEqual(["agent", "limit", "query"])
      expect(search.inputSchema.additionalProperties).toBe(false)
      expect(search.annotations.readOnlyHint).toBe(true)
      const ask = all.result.tools.find((t: any) => t.name === "ask_agent")
      expect(ask.inputSchema.required).toEqual(["agent", "message"])
      const ticket = all.result.tools.find((t: any) => t.name === "create_ticket")
      expect(ticket.inputSchema.required).toEqual(["agent_id", "subject"])

      const reader = yield* ws.key({ kind: "secret", scopes: ["read:knowledge", "read:tickets"] })
      const few = yield* call(h, reader.secret, "tools/list")
      expect(few.result.tools.map((t: any) => t.name).sort()).toEqual(["get_ticket", "search_knowledge"])
      const none = yield* ws.key({ kind: "secret", scopes: ["read:usage"] })
      expect((yield* call(h, none.secret, "tools/list")).result.tools).toEqual([])
    })
  )

  it.effect("search_knowledge answers what the search endpoint answers", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId, sourceId } = yield* agentWithSource(h, ws.secretTest)
      const query = "When does the shop open?"
      const rest = yield* h.call("POST", `/v1/agents/${agentId}/knowledge/search`, { key: ws.secretTest, body: { query, limit: 3 } })
      expect(rest.status, rest.text).toBe(200)
      const answer = yield* tool(h, ws.secretTest, "search_knowledge", { agent: agentId, query, limit: 3 })
      expect(answer.result.isError).toBe(false)
      expect(answer.result.structuredContent).toEqual(rest.body.data)
      expect(JSON.parse(answer.result.content[0].text)).toEqual(rest.body.data)
      const hits = answer.result.structuredContent.hits
      expect(hits.length).toBeGreaterThan(0)
      expect(hits[0].source_id).toBe(sourceId)
      expect(hits[0].source_title).toBe("Opening hours")
      expect(typeof hits[0].score).toBe("number")
    })
  )

  it.effect("ask_agent replies from the agent's source, follows up in its conversation, and counts as a reply", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId, sourceId } = yield* agentWithSource(h, ws.secretTest)
      const usedBefore = (yield* h.call("GET", "/v1/usage", { key: ws.secretTest })).body.data.replies.used
      const first = yield* tool(h, ws.secretTest, "ask_agent", { agent: agentId, message: "When does the shop open?" })
      expect(first.result.isError, JSON.stringify(first)).toBe(false)
      const reply = first.result.structuredContent
      expect(reply.object).toBe("message")
      expect(reply.role).toBe("assistant")
      expect(reply.outcome).toBe("answered")
      expect(reply.content.length).toBeGreaterThan(0)
      expect(reply.sources.map((s: any) => s.id)).toContain(sourceId)
      expect(reply.conversation_id).toMatch(/^cnv_/)
      const follow = yield* tool(h, ws.secretTest, "ask_agent", {
        agent: agentId,
        message: "And on Sundays?",
        conversation: reply.conversation_id
      })
      expect(follow.result.structuredContent.conversation_id).toBe(reply.conversation_id)
      // the conversation holds both turns, as the messages endpoint would have left it
      const stored = yield* h.call("GET", `/v1/conversations/${reply.conversation_id}`, { key: ws.secretTest })
      expect(stored.body.data.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
      const usedAfter = (yield* h.call("GET", "/v1/usage", { key: ws.secretTest })).body.data.replies.used
      expect(usedAfter).toBe(usedBefore + 2)
    })
  )

  it.effect("ask_agent on a live key consumes a credit; over the plan's cap it is the twin's limit_reached", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const usage = yield* Usage
      const ws = yield* h.seed({ plan: "free" })
      const { agentId } = yield* agentWithSource(h, ws.secretLive)
      const tenant = { workspaceId: ws.workspace.id, environment: "live" } as const
      // the month's replies but one used up
      yield* Effect.forEach(Array.from({ length: 99 }), () => usage.reserveReply(tenant), { discard: true })
      const last = yield* tool(h, ws.secretLive, "ask_agent", { agent: agentId, message: "When does the shop open?" })
      expect(last.result.isError, JSON.stringify(last)).toBe(false)
      const summary = (yield* h.call("GET", "/v1/usage", { key: ws.secretLive })).body.data
      expect(summary.replies).toEqual({ used: 100, cap: 100 })
      expect(summary.credits.consumed).toBe(100)
      const over = yield* tool(h, ws.secretLive, "ask_agent", { agent: agentId, message: "And on Sundays?" })
      expect(over.result.isError).toBe(true)
      expect(over.result.structuredContent.error.code).toBe("limit_reached")
      const conversations = yield* h.call("GET", "/v1/conversations", { key: ws.secretLive })
      expect(conversations.body.data).toHaveLength(1)
    })
  )

  it.effect("list_agents, create_ticket and get_ticket answer as their twins", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest, "Front desk")
      const listed = yield* tool(h, ws.secretTest, "list_agents", { limit: 10 })
      const rest = yield* h.call("GET", "/v1/agents?limit=10", { key: ws.secretTest })
      expect(listed.result.structuredContent.data).toEqual(rest.body.data)
      expect(listed.result.structuredContent.pagination).toEqual(rest.body.meta.pagination)
      const made = yield* tool(h, ws.secretTest, "create_ticket", { agent_id: agentId, subject: "Lost parcel", body: "It never came." })
      expect(made.result.isError, JSON.stringify(made)).toBe(false)
      const ticket = made.result.structuredContent
      expect(ticket.public_id).toMatch(/^tck_/)
      expect(ticket.subject).toBe("Lost parcel")
      const read = yield* tool(h, ws.secretTest, "get_ticket", { ticket: ticket.public_id })
      const twin = yield* h.call("GET", `/v1/tickets/${ticket.public_id}`, { key: ws.secretTest })
      expect(read.result.structuredContent).toEqual(twin.body.data)
    })
  )

  it.effect("a tool outside the key's scopes is refused, and runs nothing", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const reader = yield* ws.key({ kind: "secret", scopes: ["read:knowledge"] })
      const refused = yield* tool(h, reader.secret, "create_ticket", { agent_id: agentId, subject: "Nope" })
      expect(refused.result).toBeUndefined()
      expect(refused.error!.code).toBe(-32602)
      expect(refused.error!.message).toContain("write:tickets")
      expect(refused.error!.data).toEqual({ code: "key_scope_mismatch", scope: "write:tickets" })
      const asked = yield* tool(h, reader.secret, "ask_agent", { agent: agentId, message: "Hi" })
      expect(asked.error!.data.code).toBe("key_scope_mismatch")
      const tickets = yield* h.call("GET", "/v1/tickets", { key: ws.secretTest })
      expect(tickets.body.data).toEqual([])
      const conversations = yield* h.call("GET", "/v1/conversations", { key: ws.secretTest })
      expect(conversations.body.data).toEqual([])
    })
  )

  it.effect("no key, a wrong key, a widget or forms key: the API's refusal, before any JSON-RPC", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const body = request("tools/list")
      const none = yield* rpc(h, undefined, body)
      expect(none.status).toBe(401)
      expect(none.body.error.code).toBe("missing_authorization")
      const wrong = yield* rpc(h, "sk_test_unknownunknownunknown00", body)
      expect(wrong.status).toBe(401)
      expect(wrong.body.error.code).toBe("invalid_api_key")
      const widget = yield* rpc(h, ws.widgetTest, body)
      expect(widget.status).toBe(403)
      expect(widget.body.error.code).toBe("key_scope_mismatch")
      const forms = yield* rpc(h, ws.formsTest, body)
      expect(forms.status).toBe(403)
    })
  )

  it.effect("what a twin refuses is the tool's error result, with the twin's code", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const other = yield* h.seed()
      const foreign = yield* createAgent(h, other.secretTest)
      const missing = yield* tool(h, ws.secretTest, "search_knowledge", { agent: foreign, query: "hours" })
      expect(missing.result.isError).toBe(true)
      expect(missing.result.structuredContent.error.code).toBe("resource_missing")
      const empty = yield* tool(h, ws.secretTest, "search_knowledge", { agent: foreign, query: "   " })
      expect(empty.result.isError).toBe(true)
      expect(empty.result.structuredContent.error).toMatchObject({ code: "parameter_invalid", param: "query" })
      const unknownArg = yield* tool(h, ws.secretTest, "list_agents", { limit: 5, colour: "red" })
      expect(unknownArg.result.structuredContent.error).toMatchObject({ code: "parameter_invalid", param: "colour" })
      const badTicket = yield* tool(h, ws.secretTest, "get_ticket", { ticket: "tck_doesnotexist000" })
      expect(badTicket.result.structuredContent.error.code).toBe("resource_missing")
    })
  )

  it.effect("the protocol's mistakes are JSON-RPC errors; a body that is not JSON-RPC is 400", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const unknownMethod = yield* call(h, ws.secretTest, "prompts/dance")
      expect(unknownMethod.error!.code).toBe(-32601)
      const unknownTool = yield* tool(h, ws.secretTest, "launch_rocket", {})
      expect(unknownTool.error!.code).toBe(-32602)
      const badInit = yield* call(h, ws.secretTest, "initialize", { protocolVersion: 7 })
      expect(badInit.error!.code).toBe(-32602)
      const notRpc = yield* rpc(h, ws.secretTest, { hello: "world" })
      expect(notRpc.status).toBe(400)
      expect(notRpc.body.error.code).toBe("parameter_missing")
      const wrongVersion = yield* rpc(h, ws.secretTest, { jsonrpc: "1.0", id: 1, method: "ping" })
      expect(wrongVersion.status).toBe(400)
      expect(wrongVersion.body.error.code).toBe("parameter_invalid")
      const text = yield* h.call("POST", "/v1/mcp", { key: ws.secretTest, body: "{not json", headers: { "content-type": "application/json" } })
      expect(text.status).toBe(400)
      // a batch: one response per request, in order, none for its notification
      const batch = yield* rpc(h, ws.secretTest, [
        { jsonrpc: "2.0", id: "a", method: "ping" },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 9, method: "nope" }
      ])
      expect(batch.status).toBe(200)
      expect(batch.body.map((r: any) => r.id)).toEqual(["a", 9])
      expect(batch.body[0].result).toEqual({})
      expect(batch.body[1].error.code).toBe(-32601)
      // the transport's event stream is not served: the router's 405 with what is allowed
      const get = yield* h.call("GET", "/v1/mcp", { key: ws.secretTest })
      expect(get.status).toBe(405)
      expect(get.headers.get("allow")).toContain("POST")
    })
  )

  it.effect("an agent's knowledge sources are resources, with read:knowledge", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId, sourceId } = yield* agentWithSource(h, ws.secretTest)
      const listed = yield* call(h, ws.secretTest, "resources/list")
      const uri = `knowledge://agents/${agentId}/sources/${sourceId}`
      expect(listed.result.resources).toEqual([expect.objectContaining({ uri, name: "Opening hours", mimeType: "application/json" })])
      const read = yield* call(h, ws.secretTest, "resources/read", { uri })
      const source = JSON.parse(read.result.contents[0].text)
      expect(source).toMatchObject({ id: sourceId, title: "Opening hours", status: "indexed" })
      const missing = yield* call(h, ws.secretTest, "resources/read", { uri: `knowledge://agents/${agentId}/sources/src_nope00000000` })
      expect(missing.error!.code).toBe(-32002)
      const templates = yield* call(h, ws.secretTest, "resources/templates/list")
      expect(templates.result.resourceTemplates[0].uriTemplate).toBe("knowledge://agents/{agent_id}/sources/{source_id}")
      const tickets = yield* ws.key({ kind: "secret", scopes: ["read:tickets"] })
      expect((yield* call(h, tickets.secret, "resources/list")).result.resources).toEqual([])
      expect((yield* call(h, tickets.secret, "resources/read", { uri })).error!.data.code).toBe("key_scope_mismatch")
    })
  )
})
