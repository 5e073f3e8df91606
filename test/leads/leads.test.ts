/**
 * Leads through the real server: capture with its `lead.captured` event in the
 * same transaction, validation, the list and its filters, and the idempotent
 * delete (a tombstone without the personal data).
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { AgentId } from "../../schema/Ids.js"
import { Harness, type HarnessShape, type SeededWorkspace, testEpoch, testServer } from "../support/harness.js"
import { runSecurityMatrix, type SecuredEndpoint } from "../support/security.js"
import { createAgent, eventsOf } from "../tickets/support.js"

const createLead = (h: HarnessShape, key: string, body: Record<string, unknown>) =>
  h.call("POST", "/v1/leads", { key, body })

/** A path naming a fresh lead of `environment`. */
const leadPath = (environment: "test" | "live") => (ws: SeededWorkspace, h: HarnessShape) =>
  Effect.gen(function* () {
    const key = environment === "test" ? ws.secretTest : ws.secretLive
    const agent_id = yield* createAgent(h, key)
    const lead = yield* createLead(h, key, { agent_id, email: "ada@example.com" })
    return `/v1/leads/${lead.body.data.id}`
  })

export const leadEndpoints: ReadonlyArray<SecuredEndpoint> = [
  {
    name: "create",
    method: "POST",
    path: () => Effect.succeed("/v1/leads"),
    body: { agent_id: "agt_doesnotexist00", email: "ada@example.com" },
    scope: "write:leads"
  },
  { name: "list", method: "GET", path: () => Effect.succeed("/v1/leads"), scope: "read:leads" },
  { name: "retrieve", method: "GET", path: leadPath("test"), liveObjectPath: leadPath("live"), scope: "read:leads" },
  { name: "delete", method: "DELETE", path: leadPath("test"), liveObjectPath: leadPath("live"), scope: "write:leads" }
]

layer(testServer())("leads", (it) => {
  describe("security matrix", () => {
    for (const endpoint of leadEndpoints) {
      it.effect(`${endpoint.method} ${endpoint.name}`, () => Effect.flatMap(Harness, (h) => runSecurityMatrix(h, endpoint)))
    }
  })

  it.effect("captures a lead: 201, the object, and lead.captured with the lead and conversation_id", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent_id = yield* createAgent(h, ws.secretTest)
      const created = yield* createLead(h, ws.secretTest, {
        agent_id,
        email: "  Ada@Example.com ",
        name: " Ada Lovelace ",
        phone: "+44 20 7946 0958",
        metadata: { page: "https://shop.example.com/pricing", plan: "pro" },
        conversation_id: "cnv_abcdefgh1234"
      })
      expect(created.status).toBe(201)
      const lead = created.body.data
      expect(lead).toEqual({
        id: expect.stringMatching(/^ldx_/),
        object: "lead",
        agent_id,
        email: "Ada@Example.com",
        name: "Ada Lovelace",
        phone: "+44 20 7946 0958",
        metadata: { source: "api", page: "https://shop.example.com/pricing", plan: "pro" },
        conversation_id: "cnv_abcdefgh1234",
        created_at: new Date(testEpoch).toISOString()
      })
      const events = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "lead.captured")
      expect(events).toHaveLength(1)
      expect(events[0]!.body.data).toEqual({ lead, conversation_id: "cnv_abcdefgh1234" })

      // a phone alone is enough; a caller's own `source` wins
      const phoneOnly = yield* createLead(h, ws.secretTest, { agent_id, phone: "555-0100", metadata: { source: "crm" } })
      expect(phoneOnly.status).toBe(201)
      expect(phoneOnly.body.data).toMatchObject({ email: null, name: null, conversation_id: null, metadata: { source: "crm" } })
      const second = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "lead.captured")[1]!
      expect(second.body.data.conversation_id).toBeNull()

      const read = yield* h.call("GET", `/v1/leads/${lead.id}`, { key: ws.secretTest })
      expect(read.body.data).toEqual(lead)
    })
  )

  it.effect("the typed client: create, retrieve, list, delete twice; a missing lead is ResourceMissing", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const client = yield* h.client(ws.secretTest)
      const agent_id = yield* createAgent(h, ws.secretTest)
      const { data: lead } = yield* client.leads.create({
        payload: { agent_id: AgentId.make(agent_id), email: "typed@example.com", metadata: { page: "/docs" } }
      })
      expect(lead).toMatchObject({ object: "lead", email: "typed@example.com", metadata: { source: "api", page: "/docs" } })
      expect((yield* client.leads.retrieve({ path: { id: lead.id } })).data).toEqual(lead)
      expect((yield* client.leads.list({ urlParams: { agent_id } })).data).toEqual([lead])
      const gone = { id: lead.id, object: "lead", deleted: true }
      expect((yield* client.leads.delete({ path: { id: lead.id } })).data).toEqual(gone)
      expect((yield* client.leads.delete({ path: { id: lead.id } })).data).toEqual(gone)
      const missing = yield* Effect.flip(client.leads.retrieve({ path: { id: lead.id } }))
      expect(missing).toMatchObject({ _tag: "ResourceMissing", param: "id" })
    })
  )

  it.effect("refuses a lead without e-mail or phone, bad values, and another environment's agent", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent_id = yield* createAgent(h, ws.secretTest)
      const liveAgent = yield* createAgent(h, ws.secretLive)
      const refused = [
        [{ agent_id, name: "Nobody" }, 400, "parameter_missing", "email"],
        [{ agent_id, email: null, phone: null }, 400, "parameter_missing", "email"],
        [{ agent_id, email: "not-an-email" }, 400, "parameter_invalid", "email"],
        [{ agent_id, phone: "call me" }, 400, "parameter_invalid", "phone"],
        [{ agent_id, phone: "12" }, 400, "parameter_invalid", "phone"],
        [{ agent_id, email: "a@b.co", conversation_id: "tck_abcdefgh" }, 400, "parameter_invalid", "conversation_id"],
        [{ agent_id, email: "a@b.co", colour: "red" }, 400, "parameter_invalid", "colour"],
        [{ email: "a@b.co" }, 400, "parameter_missing", "agent_id"],
        [{ agent_id: liveAgent, email: "a@b.co" }, 404, "resource_missing", "agent_id"]
      ] as const
      for (const [body, status, code, param] of refused) {
        const reply = yield* createLead(h, ws.secretTest, body)
        expect(reply.status, JSON.stringify(body)).toBe(status)
        expect(reply.body.error, JSON.stringify(body)).toMatchObject({ code, param })
      }
      // nothing was written, nothing announced
      expect((yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "lead.captured")).toEqual([])
    })
  )

  it.effect("lists newest first, filters by agent, e-mail (ignoring case) and conversation, pages with cursors", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const a = yield* createAgent(h, ws.secretTest)
      const b = yield* createAgent(h, ws.secretTest)
      const ids: Array<string> = []
      for (const [agent_id, email, conversation_id] of [
        [a, "one@example.com", null],
        [b, "two@example.com", "cnv_conversation01"],
        [a, "Three@Example.com", "cnv_conversation01"]
      ] as const) {
        ids.push((yield* createLead(h, ws.secretTest, { agent_id, email, conversation_id })).body.data.id)
      }
      const list = (query: string) =>
        Effect.map(h.call("GET", `/v1/leads${query}`, { key: ws.secretTest }), (r) => {
          expect(r.status, r.text).toBe(200)
          return r.body
        })
      expect((yield* list("")).data.map((l: any) => l.id)).toEqual([ids[2], ids[1], ids[0]])
      expect((yield* list(`?agent_id=${a}`)).data.map((l: any) => l.id)).toEqual([ids[2], ids[0]])
      expect((yield* list("?email=three@example.COM")).data.map((l: any) => l.id)).toEqual([ids[2]])
      expect((yield* list("?conversation_id=cnv_conversation01")).data.map((l: any) => l.id)).toEqual([ids[2], ids[1]])

      const first = yield* list(`?agent_id=${a}&limit=1`)
      expect(first.data.map((l: any) => l.id)).toEqual([ids[2]])
      expect(first.meta.pagination.has_more).toBe(true)
      const next = yield* list(`?agent_id=${a}&limit=1&starting_after=${first.meta.pagination.next_cursor}`)
      expect(next.data.map((l: any) => l.id)).toEqual([ids[0]])
      expect(next.meta.pagination).toEqual({ has_more: false, next_cursor: null })
      // the cursor is bound to its filters
      const crossed = yield* h.call("GET", `/v1/leads?agent_id=${b}&starting_after=${first.meta.pagination.next_cursor}`, {
        key: ws.secretTest
      })
      expect(crossed.body.error.code).toBe("invalid_cursor")

      // the live environment and other workspaces see none of them
      expect((yield* h.call("GET", "/v1/leads", { key: ws.secretLive })).body.data).toEqual([])
      const other = yield* h.seed()
      expect((yield* h.call("GET", "/v1/leads", { key: other.secretTest })).body.data).toEqual([])
      expect((yield* h.call("GET", `/v1/leads/${ids[0]}`, { key: other.secretTest })).status).toBe(404)
    })
  )

  it.effect("delete is idempotent: the same answer twice, a tombstone without personal data, also in stored events and responses; a made-up id is 404", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent_id = yield* createAgent(h, ws.secretTest)
      const body = { agent_id, email: "gone@example.com", name: "Gone", phone: "555-0199", metadata: { page: "/contact" } }
      const headers = { "idempotency-key": "lead-to-delete" }
      const lead = (yield* h.call("POST", "/v1/leads", { key: ws.secretTest, body, headers })).body.data
      const kept = (yield* createLead(h, ws.secretTest, { agent_id, email: "kept@example.com" })).body.data
      const first = yield* h.call("DELETE", `/v1/leads/${lead.id}`, { key: ws.secretTest })
      expect(first.status).toBe(200)
      expect(first.body.data).toEqual({ id: lead.id, object: "lead", deleted: true })
      const second = yield* h.call("DELETE", `/v1/leads/${lead.id}`, { key: ws.secretTest })
      expect(second.status).toBe(200)
      expect(second.body.data).toEqual(first.body.data)

      expect((yield* h.call("GET", `/v1/leads/${lead.id}`, { key: ws.secretTest })).body.error.code).toBe("resource_missing")
      expect((yield* h.call("GET", "/v1/leads", { key: ws.secretTest })).body.data).toEqual([kept])
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ email: string | null; name: string | null; phone: string | null; metadata: unknown }>`
        select email, name, phone, metadata from leads where id = ${lead.id}`.pipe(Effect.orDie)
      expect(row).toMatchObject({ email: null, name: null, phone: null })
      expect(typeof row!.metadata === "string" ? JSON.parse(row!.metadata) : row!.metadata).toEqual({})

      // the stored copies lose it too: its lead.captured event and the replayable response
      const captured = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "lead.captured")
      expect(captured.map((e) => e.body.data.lead)).toEqual([
        { ...lead, email: null, name: null, phone: null, metadata: {} },
        kept
      ])
      const replay = yield* h.call("POST", "/v1/leads", { key: ws.secretTest, body, headers })
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.body.data).toEqual({ ...lead, email: null, name: null, phone: null, metadata: {} })
      expect(JSON.stringify(yield* eventsOf(ws.workspace.id))).not.toContain("gone@example.com")
      expect((yield* h.call("GET", `/v1/leads/${kept.id}`, { key: ws.secretTest })).body.data).toEqual(kept)

      const never = yield* h.call("DELETE", "/v1/leads/ldx_neverexisted01", { key: ws.secretTest })
      expect(never.status).toBe(404)
      expect(never.body.error).toMatchObject({ code: "resource_missing", param: "id" })
      // another workspace cannot delete it either: 404, not the tombstone's answer
      const other = yield* h.seed()
      expect((yield* h.call("DELETE", `/v1/leads/${lead.id}`, { key: other.secretTest })).status).toBe(404)
    })
  )
})
