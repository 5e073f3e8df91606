/**
 * The MCP endpoint through the bundle (`node server.mjs` from a copy of `dist/`), driven by the official
 * client (`@modelcontextprotocol/sdk`, streamable HTTP) with the secret key as its bearer token: initialize,
 * the tools listed with their input schemas, `search_knowledge` and `ask_agent` (which draws on a source)
 * called, a tool outside the key's scopes refused, a client without a key refused; and, the server being
 * stateless, a client that initialized on one process carries on against another process of the same database.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
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

/** A connected client of `base`'s `/v1/mcp`, with `key` as its bearer token (none: no header). */
const connect = async (base: string, key: string | undefined) => {
  const client = new Client({ name: "dist-e2e", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), {
    requestInit: key === undefined ? {} : { headers: { Authorization: `Bearer ${key}` } }
  })
  await client.connect(transport)
  return { client, transport }
}

const clients: Array<Client> = []
const connected = async (base: string, key: string) => {
  const made = await connect(base, key)
  clients.push(made.client)
  return made
}

beforeAll(async () => {
  service = await startService()
  ws = await bootstrapWorkspace(service)
  const shop = await harbourShop(service, ws)
  agentId = shop.agentId
  sourceId = shop.sourceId
}, setupTimeout)

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()))
  await cleanupAll()
})

describe(`MCP through the bundle, with the official client (${databaseName})`, () => {
  it("initializes without a session and lists the tools with their input schemas", async () => {
    const { client, transport } = await connected(service.base, ws.secret)
    expect(client.getServerVersion()?.name).toBe("assistant-platform")
    expect(client.getServerCapabilities()?.tools).toBeDefined()
    // stateless: the server gave no session id
    expect(transport.sessionId).toBeUndefined()
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(["ask_agent", "create_ticket", "get_ticket", "list_agents", "search_knowledge"])
    const search = tools.find((t) => t.name === "search_knowledge")!
    expect(search.inputSchema.type).toBe("object")
    expect(search.inputSchema.required).toEqual(["agent", "query"])
    expect(Object.keys(search.inputSchema.properties ?? {}).sort()).toEqual(["agent", "limit", "query"])
  })

  it("search_knowledge answers the ranked passages with their scores and sources", async () => {
    const { client } = await connected(service.base, ws.secret)
    const result: any = await client.callTool({ name: "search_knowledge", arguments: { agent: agentId, query: "When does the shop open?" } })
    expect(result.isError).toBe(false)
    const found = result.structuredContent
    expect(found.object).toBe("knowledge_search")
    expect(found.hits.length).toBeGreaterThan(0)
    expect(found.hits[0]).toMatchObject({ source_id: sourceId, source_title: "Opening hours" })
    expect(typeof found.hits[0].score).toBe("number")
    expect(JSON.parse(result.content[0].text)).toEqual(found)
  })

  it("ask_agent replies drawing on the agent's source", async () => {
    const { client } = await connected(service.base, ws.secret)
    const result: any = await client.callTool({ name: "ask_agent", arguments: { agent: agentId, message: "When does the shop open on Saturday?" } })
    expect(result.isError, JSON.stringify(result)).toBe(false)
    const reply = result.structuredContent
    expect(reply).toMatchObject({ object: "message", role: "assistant", outcome: "answered" })
    expect(reply.content.length).toBeGreaterThan(0)
    expect(reply.sources.map((s: any) => s.id)).toContain(sourceId)
    // the reply is the conversation's, as the messages endpoint leaves it
    const conversation = await expectCall(service, "GET", `/v1/conversations/${reply.conversation_id}`, 200, { key: ws.secret })
    expect(conversation.data.messages.at(-1).id).toBe(reply.id)
  })

  it("refuses a tool outside the key's scopes, and does not list it", async () => {
    const narrow = (
      await expectCall(service, "POST", "/v1/keys", 201, { key: ws.secret, body: { kind: "secret", scopes: ["read:knowledge"] } })
    ).data.secret as string
    const { client } = await connected(service.base, narrow)
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(["search_knowledge"])
    await expect(client.callTool({ name: "ask_agent", arguments: { agent: agentId, message: "Hello?" } })).rejects.toThrow(
      /write:conversations/
    )
    // what it may call still works
    const allowed: any = await client.callTool({ name: "search_knowledge", arguments: { agent: agentId, query: "Sunday" } })
    expect(allowed.isError).toBe(false)
  })

  it("refuses a client without a key", async () => {
    const error = await connect(service.base, undefined).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(error).toBeInstanceOf(StreamableHTTPError)
    expect((error as StreamableHTTPError).code).toBe(401)
    expect(String((error as Error).message)).toContain("missing_authorization")
  })
})

describe.runIf(databaseName === "PostgreSQL")("MCP on two processes of one PostgreSQL database", () => {
  it("one client's requests, sent in turn to either process, are all answered", async () => {
    const other = await startService({ DATABASE_URL: service.env["DATABASE_URL"]! })
    const bases = [service.base, other.base]
    const served: Array<string> = []
    let turn = 0
    // every request of the client (initialize included) goes to the next process in turn
    const alternating = (url: string | URL, init?: RequestInit) => {
      const base = bases[turn++ % bases.length]!
      served.push(base)
      const target = new URL(String(url))
      return fetch(`${base}${target.pathname}${target.search}`, init)
    }
    const client = new Client({ name: "dist-e2e", version: "1.0.0" })
    const transport = new StreamableHTTPClientTransport(new URL(`${service.base}/v1/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${ws.secret}` } },
      fetch: alternating
    })
    await client.connect(transport)
    clients.push(client)
    const first = await client.listTools()
    const second = await client.listTools()
    expect(second.tools.map((t) => t.name)).toEqual(first.tools.map((t) => t.name))
    const result: any = await client.callTool({ name: "search_knowledge", arguments: { agent: agentId, query: "opening hours" } })
    expect(result.structuredContent.hits[0].source_id).toBe(sourceId)
    expect(new Set(served)).toEqual(new Set(bases))
  }, setupTimeout)
})
