import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { CreateAgent } from "../../schema/Agents.js"
import { ResourceMissing } from "../../schema/Errors.js"
import type { Client } from "../../src/sdk/index.js"
import { expectFailure } from "../support/expect.js"
import { Harness, type HarnessShape, testEpoch, testServer } from "../support/harness.js"

/** Raw, for the tests of what the edge does with the body as sent (trimming, unknown fields). */
const createAgentRaw = (h: HarnessShape, key: string, body: Record<string, unknown> = {}) =>
  h.call("POST", "/v1/agents", { key, body: { type: "support", name: "Support Bot", ...body } })

const createAgent = (api: Client, payload: Partial<CreateAgent> = {}) =>
  Effect.map(api.agents.create({ payload: { type: "support", name: "Support Bot", ...payload } }), (r) => r.data)

const eventsOf = (workspaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ type: string; environment: string; body: string }>`
      select type, environment, body from events where workspace_id = ${workspaceId} order by seq`
    return rows.map((r) => ({ ...r, body: JSON.parse(r.body) }))
  }).pipe(Effect.orDie)

layer(testServer())("agents", (it) => {

  it.effect("creates an agent with a slug derived from the name, and writes agent.created", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const reply = yield* createAgentRaw(h, ws.secretTest, { name: "  Ayuda Técnica 24/7 ", welcome_message: "Hola" })
      expect(reply.status).toBe(201)
      const agent = reply.body.data
      expect(agent).toMatchObject({
        object: "agent",
        type: "support",
        name: "Ayuda Técnica 24/7",
        slug: "ayuda-tecnica-24-7",
        instructions: null,
        welcome_message: "Hola"
      })
      expect(agent.id).toMatch(/^agt_[A-Za-z0-9]{24}$/)
      // time comes from the Clock: under TestClock, exactly the test epoch
      expect(agent.created_at).toBe(new Date(testEpoch).toISOString())
      expect(reply.headers.get("request-id")).toBe(reply.body.meta.request_id)

      const events = yield* eventsOf(ws.workspace.id)
      expect(events).toHaveLength(1)
      expect(events[0]!.type).toBe("agent.created")
      expect(events[0]!.body).toMatchObject({
        object: "event",
        type: "agent.created",
        api_version: "v1",
        livemode: false,
        workspace_id: ws.workspace.id,
        data: { agent: { id: agent.id, type: "support", name: agent.name, slug: agent.slug } }
      })
      expect(events[0]!.body.id).toMatch(/^evt_/)
      expect(Number.isInteger(events[0]!.body.created)).toBe(true)
    })
  )

  it.effect("keeps slugs unique per workspace and environment, even under concurrency", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      // each succeeds with the declared 201, or the client fails the test
      const agents = yield* Effect.all(
        Array.from({ length: 6 }, () => createAgent(api, { name: "Sales" })),
        { concurrency: "unbounded" }
      )
      const slugs = agents.map((a) => a.slug).sort()
      expect(slugs).toEqual(["sales", "sales-2", "sales-3", "sales-4", "sales-5", "sales-6"])
      // the live environment has its own namespace
      const live = yield* createAgent(yield* h.client(ws.secretLive), { name: "Sales" })
      expect(live.slug).toBe("sales")
    })
  )

  it.effect("isolates environments: a sandbox key never sees live agents", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const live = yield* createAgent(yield* h.client(ws.secretLive), { name: "Live one" })
      yield* createAgent(api, { name: "Test one" })
      const listed = yield* api.agents.list({ urlParams: {} })
      expect(listed.data.map((a) => a.name)).toEqual(["Test one"])
      yield* expectFailure(api.agents.retrieve({ path: { id: live.id } }), ResourceMissing)
      const events = yield* eventsOf(ws.workspace.id)
      expect(events.map((e) => [e.environment, e.body.livemode])).toEqual([
        ["live", true],
        ["test", false]
      ])
      // another workspace's agent is just as invisible
      const other = yield* h.seed()
      const foreign = yield* h.client(other.secretLive)
      yield* expectFailure(foreign.agents.retrieve({ path: { id: live.id } }), ResourceMissing)
    })
  )

  it.effect("updates fields, re-derives the slug, and records the changes", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const created = yield* createAgent(api, { name: "Old Name", instructions: "Be brief" })
      const updated = yield* api.agents.update({ path: { id: created.id }, payload: { name: "New Name", instructions: null } })
      expect(updated.data).toMatchObject({ name: "New Name", slug: "new-name", instructions: null })
      const events = yield* eventsOf(ws.workspace.id)
      expect(events.map((e) => e.type)).toEqual(["agent.created", "agent.updated"])
      expect(events[1]!.body.data.changes).toEqual({
        name: { from: "Old Name", to: "New Name" },
        slug: { from: "old-name", to: "new-name" },
        instructions: { from: "Be brief", to: null }
      })
      // a PATCH that changes nothing writes no event
      yield* api.agents.update({ path: { id: created.id }, payload: { name: "New Name" } })
      expect((yield* eventsOf(ws.workspace.id)).length).toBe(2)
      // the agent type cannot be changed, and unknown fields are refused by name (raw: the client cannot send them)
      const typed = yield* h.call("PATCH", `/v1/agents/${created.id}`, { key: ws.secretTest, body: { type: "training" } })
      expect(typed.status).toBe(400)
      expect(typed.body.error).toMatchObject({ code: "parameter_invalid", param: "type" })
    })
  )

  it.effect("soft-deletes: gone from reads and lists, row kept, agent.deleted written, slug reusable", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const created = yield* createAgent(api, { name: "Temp" })
      // raw: the exact body, which the client's decoding (dropping unknown fields) would not check
      const deleted = yield* h.call("DELETE", `/v1/agents/${created.id}`, { key: ws.secretTest })
      expect(deleted.status).toBe(200)
      expect(deleted.body.data).toEqual({ id: created.id, object: "agent", deleted: true })
      yield* expectFailure(api.agents.retrieve({ path: { id: created.id } }), ResourceMissing)
      yield* expectFailure(api.agents.delete({ path: { id: created.id } }), ResourceMissing)
      expect((yield* api.agents.list({ urlParams: {} })).data).toEqual([])
      const sql = yield* SqlClient.SqlClient
      const rows = yield* Effect.orDie(sql`select deleted_at from agents where id = ${created.id}`)
      expect(rows[0]!.deleted_at).toBeInstanceOf(Date)
      const events = yield* eventsOf(ws.workspace.id)
      expect(events.at(-1)!.body).toMatchObject({ type: "agent.deleted", data: { agent_id: created.id } })
      const again = yield* createAgent(api, { name: "Temp" })
      expect(again.slug).toBe("temp")
    })
  )

  it.effect("validates bodies with the offending parameter named", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const cases: Array<[unknown, string, string]> = [
        [{ name: "x" }, "parameter_missing", "type"],
        [{ type: "support" }, "parameter_missing", "name"],
        [{ type: "sales", name: "x" }, "parameter_invalid", "type"],
        [{ type: "support", name: "   " }, "parameter_invalid", "name"],
        [{ type: "support", name: 42 }, "parameter_invalid", "name"],
        [{ type: "support", name: "x".repeat(201) }, "parameter_invalid", "name"],
        [{ type: "support", name: "x", colour: "red" }, "parameter_invalid", "colour"]
      ]
      for (const [body, code, param] of cases) {
        const reply = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body })
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(reply.body.error, JSON.stringify(body)).toMatchObject({ type: "invalid_request", code, param })
      }
      const empty = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: "", headers: { "content-type": "application/json" } })
      expect(empty.status).toBe(400)
      expect(empty.body.error.code).toBe("parameter_missing")
    })
  )
})
