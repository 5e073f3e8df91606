/**
 * Leads through the real server: capture with its `lead.captured` event in the
 * same transaction, validation, the list and its filters, and the idempotent
 * delete (a tombstone without the personal data). Through the typed client,
 * so requests are checked against the contract; raw calls only where the test
 * is about what the edge does with a body the client could not send, or needs
 * the response headers.
 */
import { expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { ResourceMissing } from "../../schema/Errors.js"
import type { CreateLead, LeadListParams } from "../../schema/Leads.js"
import { ConversationId, LeadId } from "../../schema/Ids.js"
import type { Client } from "../../src/sdk/index.js"
import { expectFailure } from "../support/expect.js"
import { Harness, type HarnessShape, testEpoch, testServer } from "../support/harness.js"
import { eventsOf } from "../tickets/support.js"

const createAgent = (api: Client) =>
  Effect.map(api.agents.create({ payload: { type: "support", name: "Help desk" } }), (r) => r.data.id)

const createLead = (api: Client, payload: CreateLead) => Effect.map(api.leads.create({ payload }), (r) => r.data)

/** Raw, for bodies the typed client would refuse to send. */
const createLeadRaw = (h: HarnessShape, key: string, body: Record<string, unknown>) =>
  h.call("POST", "/v1/leads", { key, body })

const listIds = (api: Client, urlParams: LeadListParams = {}) =>
  Effect.map(api.leads.list({ urlParams }), (r) => r.data.map((l) => l.id))

layer(testServer())("leads", (it) => {

  it.effect("captures a lead: 201, the object, and lead.captured with the lead and conversation_id", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent_id = yield* createAgent(api)
      // raw: the client would refuse to send untrimmed values
      const created = yield* createLeadRaw(h, ws.secretTest, {
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
      const phoneOnly = yield* createLead(api, { agent_id, phone: "555-0100", metadata: { source: "crm" } })
      expect(phoneOnly).toMatchObject({ email: null, name: null, conversation_id: null, metadata: { source: "crm" } })
      const second = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "lead.captured")[1]!
      expect(second.body.data.conversation_id).toBeNull()

      expect((yield* api.leads.retrieve({ path: { id: lead.id } })).data).toEqual(lead)
    })
  )

  it.effect("the typed client: create, retrieve, list, delete twice; a missing lead is ResourceMissing", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const client = yield* h.client(ws.secretTest)
      const agent_id = yield* createAgent(client)
      const { data: lead } = yield* client.leads.create({
        payload: { agent_id, email: "typed@example.com", metadata: { page: "/docs" } }
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
      const agent_id = yield* createAgent(yield* h.client(ws.secretTest))
      const liveAgent = yield* createAgent(yield* h.client(ws.secretLive))
      // raw: these bodies break the contract on purpose
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
        const reply = yield* createLeadRaw(h, ws.secretTest, body)
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
      const api = yield* h.client(ws.secretTest)
      const a = yield* createAgent(api)
      const b = yield* createAgent(api)
      const conversation = ConversationId.make("cnv_conversation01")
      const ids: Array<LeadId> = []
      for (const [agent_id, email, conversation_id] of [
        [a, "one@example.com", null],
        [b, "two@example.com", conversation],
        [a, "Three@Example.com", conversation]
      ] as const) {
        ids.push((yield* createLead(api, { agent_id, email, conversation_id })).id)
      }
      expect(yield* listIds(api)).toEqual([ids[2], ids[1], ids[0]])
      expect(yield* listIds(api, { agent_id: a })).toEqual([ids[2], ids[0]])
      expect(yield* listIds(api, { email: "three@example.COM" })).toEqual([ids[2]])
      expect(yield* listIds(api, { conversation_id: conversation })).toEqual([ids[2], ids[1]])

      const first = yield* api.leads.list({ urlParams: { agent_id: a, limit: "1" } })
      expect(first.data.map((l) => l.id)).toEqual([ids[2]])
      expect(first.meta.pagination.has_more).toBe(true)
      const cursor = first.meta.pagination.next_cursor ?? ""
      const next = yield* api.leads.list({ urlParams: { agent_id: a, limit: "1", starting_after: cursor } })
      expect(next.data.map((l) => l.id)).toEqual([ids[0]])
      expect(next.meta.pagination).toEqual({ has_more: false, next_cursor: null })
      // the cursor is bound to its filters
      const crossed = yield* Effect.flip(api.leads.list({ urlParams: { agent_id: b, starting_after: cursor } }))
      expect(crossed).toMatchObject({ _tag: "InvalidCursor" })

      // the live environment and other workspaces see none of them
      expect(yield* listIds(yield* h.client(ws.secretLive))).toEqual([])
      const other = yield* h.client((yield* h.seed()).secretTest)
      expect(yield* listIds(other)).toEqual([])
      yield* expectFailure(other.leads.retrieve({ path: { id: ids[0]! } }), ResourceMissing)
    })
  )

  it.effect("delete is idempotent: the same answer twice, a tombstone without personal data, also in stored events and responses; a made-up id is 404", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const agent_id = yield* createAgent(api)
      const body = { agent_id, email: "gone@example.com", name: "Gone", phone: "555-0199", metadata: { page: "/contact" } }
      // raw: the replay below is told by its response header
      const headers = { "idempotency-key": "lead-to-delete" }
      const lead = (yield* h.call("POST", "/v1/leads", { key: ws.secretTest, body, headers })).body.data
      const kept = yield* createLead(api, { agent_id, email: "kept@example.com" })
      const first = yield* api.leads.delete({ path: { id: lead.id } })
      expect(first.data).toEqual({ id: lead.id, object: "lead", deleted: true })
      const second = yield* api.leads.delete({ path: { id: lead.id } })
      expect(second.data).toEqual(first.data)

      yield* expectFailure(api.leads.retrieve({ path: { id: lead.id } }), ResourceMissing)
      expect((yield* api.leads.list({ urlParams: {} })).data).toEqual([kept])
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
      expect((yield* api.leads.retrieve({ path: { id: kept.id } })).data).toEqual(kept)

      const never = yield* expectFailure(api.leads.delete({ path: { id: LeadId.make("ldx_neverexisted01") } }), ResourceMissing)
      expect(never.param).toBe("id")
      // another workspace cannot delete it either: 404, not the tombstone's answer
      const other = yield* h.client((yield* h.seed()).secretTest)
      yield* expectFailure(other.leads.delete({ path: { id: lead.id } }), ResourceMissing)
    })
  )
})
