/**
 * Test retrieval (`POST /v1/agents/{agent_id}/knowledge/search`) over real
 * HTTP: after a CSV of Q&A and a text source are indexed, a question gets
 * ranked hits with scores, `relevant` flags against the replies' threshold
 * and the sources they came from; the relevant hits are what a reply to the
 * same question draws on, and a question with nothing relevant is one a reply
 * falls back on. Bad bodies, a key without `read:knowledge`, another
 * workspace's or environment's agent are refused; nothing is charged or sent;
 * a provider outage is the replies' `503 ai_unavailable`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AgentId } from "../../schema/Ids.js"
import * as Ai from "../../layers/Ai.js"
import { relevanceThreshold } from "../../src/knowledge/Retrieval.js"
import { Harness, type HarnessShape, type SeededWorkspace, testServer } from "../support/harness.js"
import { createAgent, waitSettled } from "./support.js"

const csv = `question,answer,category
How long does delivery take?,Orders arrive within five business days anywhere in Europe.,Shipping
Can I return an item?,You can send any item back within 30 days for a full refund.,Returns
How do I reset my password?,Use the link on the sign-in page to choose a new password.,Account
`

const faq = `# Shipping and returns

## Shipping
We ship every order within two business days. Delivery takes five days in Europe.

## Returns
You can return any item within 30 days of delivery for a full refund.`

const offTopic = "What is the airspeed velocity of an unladen swallow?"

interface Hit {
  readonly kind: "chunk" | "qa"
  readonly id: string
  readonly source_id: string | null
  readonly source_title: string | null
  readonly score: number
  readonly relevant: boolean
  readonly text: string
  readonly question: string | null
}

/** An agent with an indexed CSV of Q&A ("Store FAQ") and an indexed text source ("Shipping page"). */
const knowledgeableAgent = (h: HarnessShape, key: string) =>
  Effect.gen(function* () {
    const agentId = yield* createAgent(h, key)
    const add = (body: Record<string, unknown>) =>
      Effect.map(h.call("POST", `/v1/agents/${agentId}/knowledge`, { key, body }), (r) => {
        expect(r.status, r.text).toBe(201)
        return r.body.data.id as string
      })
    const csvSource = yield* add({ type: "csv_qa", content: csv, title: "Store FAQ" })
    const textSource = yield* add({ type: "text", title: "Shipping page", content: faq })
    const settled = yield* waitSettled(h, key, agentId, [csvSource, textSource])
    expect(settled.map((s) => s.status)).toEqual(["indexed", "indexed"])
    return { agentId, csvSource, textSource }
  })

const search = (h: HarnessShape, key: string, agentId: string, body: unknown) =>
  h.call("POST", `/v1/agents/${agentId}/knowledge/search`, { key, body })

const eventCount = (ws: SeededWorkspace) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`select count(*)::int as n from events where workspace_id = ${ws.workspace.id}`
  ).pipe(Effect.map((rows) => rows[0]!.n), Effect.orDie)

/** A hit under the threshold is never relevant, and they come best first. */
const expectRanked = (hits: ReadonlyArray<Hit>) => {
  for (const hit of hits) {
    expect(hit.score).toBeGreaterThanOrEqual(0)
    expect(hit.score).toBeLessThanOrEqual(1)
    if (hit.score < relevanceThreshold) expect(hit.relevant, JSON.stringify(hit)).toBe(false)
  }
  const scores = hits.map((hit) => hit.score)
  expect(scores).toEqual([...scores].sort((a, b) => b - a))
}

layer(testServer())("knowledge search", (it) => {
  it.effect("ranks chunks and Q&A with scores, relevant flags and their sources", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId, csvSource, textSource } = yield* knowledgeableAgent(h, ws.secretTest)
      const eventsBefore = yield* eventCount(ws)

      const reply = yield* search(h, ws.secretTest, agentId, { query: "  how many days does delivery take in Europe  ", limit: 10 })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.meta.request_id).toMatch(/^req_/)
      const result = reply.body.data
      expect(result).toMatchObject({
        object: "knowledge_search",
        agent_id: agentId,
        query: "how many days does delivery take in Europe",
        threshold: relevanceThreshold
      })
      const hits: ReadonlyArray<Hit> = result.hits
      expect(hits.length).toBeGreaterThan(1)
      expect(hits.length).toBeLessThanOrEqual(10)
      expectRanked(hits)
      expect(hits[0]!.relevant, JSON.stringify(hits[0])).toBe(true)

      const qa = hits.find((hit) => hit.kind === "qa" && hit.question === "How long does delivery take?")
      expect(qa, JSON.stringify(hits)).toMatchObject({
        id: expect.stringMatching(/^qa_/),
        source_id: csvSource,
        source_title: "Store FAQ",
        text: "Orders arrive within five business days anywhere in Europe.",
        relevant: true
      })
      const chunk = hits.find((hit) => hit.kind === "chunk")
      expect(chunk, JSON.stringify(hits)).toMatchObject({
        id: expect.stringMatching(/^chk_/),
        source_id: textSource,
        source_title: "Shipping page",
        question: null
      })
      expect(chunk!.text).toContain("Delivery takes five days in Europe")

      // without a limit: as many as a reply draws on
      const fewer = yield* search(h, ws.secretTest, agentId, { query: "delivery" })
      expect(fewer.status, fewer.text).toBe(200)
      expect(fewer.body.data.hits.length).toBeGreaterThan(0)
      expect(fewer.body.data.hits.length).toBeLessThanOrEqual(5)
      const one = yield* search(h, ws.secretTest, agentId, { query: "delivery", limit: 1 })
      expect(one.body.data.hits).toEqual([fewer.body.data.hits[0]])

      // a read: no event, no conversation
      expect(yield* eventCount(ws)).toBe(eventsBefore)
      const conversations = yield* h.call("GET", `/v1/conversations?agent_id=${agentId}`, { key: ws.secretTest })
      expect(conversations.body.data).toEqual([])
    })
  )

  it.effect("the relevant hits are what a reply draws on; with none, the reply falls back", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId } = yield* knowledgeableAgent(h, ws.secretTest)
      const answered = "Can I send an item back for a refund?"
      const found = yield* search(h, ws.secretTest, agentId, { query: answered })
      const hits: ReadonlyArray<Hit> = found.body.data.hits
      const relevant = hits.filter((hit) => hit.relevant)
      expect(relevant.length, JSON.stringify(hits)).toBeGreaterThan(0)
      const message = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: answered, stream: false }
      })
      expect(message.status, message.text).toBe(201)
      // a reply names a Q&A by its id and a passage by its source, once
      const drawnOn = [...new Set(relevant.map((hit) => (hit.kind === "qa" ? hit.id : hit.source_id)))]
      expect(message.body.data.sources.map((s: { id: string }) => s.id)).toEqual(drawnOn)

      const nothing = yield* search(h, ws.secretTest, agentId, { query: offTopic })
      expect(nothing.status, nothing.text).toBe(200)
      const unrelated: ReadonlyArray<Hit> = nothing.body.data.hits
      expectRanked(unrelated)
      expect(unrelated.filter((hit) => hit.relevant), JSON.stringify(unrelated)).toEqual([])
      const fallback = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: offTopic, stream: false }
      })
      expect(fallback.body.data.sources).toEqual([])

      // an agent that knows nothing yet finds nothing
      const empty = yield* createAgent(h, ws.secretTest, "Empty")
      const none = yield* search(h, ws.secretTest, empty, { query: "delivery" })
      expect(none.status, none.text).toBe(200)
      expect(none.body.data.hits).toEqual([])
    })
  )

  it.effect("the typed client of the SDK has it", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId } = yield* knowledgeableAgent(h, ws.secretTest)
      const api = yield* h.client(ws.secretTest)
      const { data } = yield* Effect.orDie(
        api.knowledge.search({ path: { agent_id: AgentId.make(agentId) }, payload: { query: "reset my password", limit: 3 } })
      )
      expect(data.hits.length).toBeLessThanOrEqual(3)
      expect(data.hits[0]).toMatchObject({ kind: "qa", question: "How do I reset my password?", relevant: true })
    })
  )

  it.effect("refuses a bad body with the field at fault", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const refused = (body: unknown, code: string, param: string, message: RegExp) =>
        Effect.map(search(h, ws.secretTest, agentId, body), (reply) => {
          expect(reply.status, `${JSON.stringify(body)}: ${reply.text}`).toBe(400)
          expect(reply.body.error, JSON.stringify(body)).toMatchObject({ type: "invalid_request", code, param })
          expect(reply.body.error.message).toMatch(message)
          expect(reply.body.meta.request_id).toMatch(/^req_/)
        })
      yield* refused({}, "parameter_missing", "query", /Missing required parameter: query/)
      yield* refused({ query: "" }, "parameter_invalid", "query", /must not be empty/)
      yield* refused({ query: "   \n " }, "parameter_invalid", "query", /must not be empty/)
      yield* refused({ query: "x".repeat(1001) }, "parameter_invalid", "query", /at most 1000 characters/)
      yield* refused({ query: 42 }, "parameter_invalid", "query", /expected a string/)
      // a body's limit is not a list's: its own range, not `invalid_limit`'s 1 to 100
      yield* refused({ query: "delivery", limit: 0 }, "parameter_invalid", "limit", /from 1 to 20/)
      yield* refused({ query: "delivery", limit: 21 }, "parameter_invalid", "limit", /from 1 to 20/)
      yield* refused({ query: "delivery", limit: 2.5 }, "parameter_invalid", "limit", /expected an integer/)
      yield* refused({ query: "delivery", limit: "5" }, "parameter_invalid", "limit", /expected a number/)
      yield* refused({ query: "delivery", terms: [] }, "parameter_invalid", "terms", /unknown parameter: terms/)
      // the longest query and the largest limit pass
      const longest = yield* search(h, ws.secretTest, agentId, { query: "x".repeat(1000), limit: 20 })
      expect(longest.status, longest.text).toBe(200)
    })
  )

  it.effect("needs read:knowledge; another workspace's or environment's agent is 404", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const other = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const body = { query: "delivery" }

      const reader = yield* ws.key({ kind: "secret", scopes: ["read:knowledge"] })
      expect((yield* search(h, reader.secret, agentId, body)).status).toBe(200)
      for (const scopes of [["write:knowledge"], ["read:agents", "write:conversations"]] as const) {
        const lacking = yield* ws.key({ kind: "secret", scopes })
        const refused = yield* search(h, lacking.secret, agentId, body)
        expect(refused.status, scopes.join(" ")).toBe(403)
        expect(refused.body.error.code).toBe("key_scope_mismatch")
      }
      const widget = yield* search(h, ws.widgetTest, agentId, body)
      expect(widget.status).toBe(403)

      const missing = (key: string, agent: string, label: string) =>
        Effect.map(search(h, key, agent, body), (reply) => {
          expect(reply.status, `${label}: ${reply.text}`).toBe(404)
          expect(reply.body.error, label).toMatchObject({ code: "resource_missing", param: "agent_id" })
        })
      yield* missing(other.secretTest, agentId, "another workspace's key")
      yield* missing(ws.secretLive, agentId, "a live key on a sandbox agent")
      yield* missing(ws.secretTest, "agt_unknown000000000000000", "an unknown agent")
    })
  )
})

const outageQuery = "Is the embedding provider there?"

/** The local provider, except that it times out on one question. */
const outageOnQuery = Layer.sync(Ai.Ai, () => {
  const local = Ai.makeLocal()
  return {
    ...local,
    embed: (texts: ReadonlyArray<string>) =>
      texts.includes(outageQuery)
        ? Effect.fail(new Ai.AiError({ message: "embeddings request timed out", transient: true }))
        : local.embed(texts)
  }
})

layer(testServer({}, { ai: outageOnQuery }))("knowledge search during an AI outage", (it) => {
  it.effect("answers the replies' 503 ai_unavailable with Retry-After", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const reply = yield* search(h, ws.secretTest, agentId, { query: outageQuery })
      expect(reply.status, reply.text).toBe(503)
      expect(reply.headers.get("retry-after")).toBe("5")
      expect(reply.body.error).toMatchObject({ type: "api_error", code: "ai_unavailable" })
    })
  )
})
