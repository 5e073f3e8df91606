/**
 * Tickets through the real server under TestClock: creation (origins, events,
 * owner e-mail), the status transitions of SPEC section 3 with the events each
 * writes, the thread, filters, and erasure.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { MemoryMailbox } from "../../layers/Mailer.js"
import { ResourceMissing } from "../../schema/Errors.js"
import { type CreateTicket, TicketPublicId } from "../../schema/Tickets.js"
import { eventually } from "../support/eventually.js"
import { expectFailure } from "../support/expect.js"
import { Harness, type HarnessShape, type SeededWorkspace, testEpoch, testServer } from "../support/harness.js"
import { createAgent, createTicket, eventsOf } from "./support.js"
import { loopbackServer } from "../support/loopback.js"

const ticketEvents = (workspaceId: string) =>
  Effect.map(eventsOf(workspaceId), (events) => events.filter((e) => e.type.startsWith("ticket.")))

const mailTo = (address: string) =>
  Effect.map(
    Effect.flatMap(MemoryMailbox, (m) => m.sent),
    (sent) => sent.filter((message) => message.to === address)
  )

/**
 * A workspace with an agent and a ticket (no first message) made with the sandbox
 * secret key, and the typed client of that key (`id` is the ticket's path parameter).
 */
const setup = (h: HarnessShape, payload: Partial<Omit<CreateTicket, "agent_id">> = {}) =>
  Effect.gen(function* () {
    const ws = yield* h.seed({ plan: "pro" })
    const api = yield* h.client(ws.secretTest)
    const agent = yield* api.agents.create({ payload: { type: "support", name: "Help desk" } })
    // the client checks the declared 201
    const created = yield* api.tickets.create({
      headers: {},
      payload: { subject: "Printer on fire", ...payload, agent_id: agent.data.id }
    })
    const ticket = created.data
    return { ws, api, agentId: agent.data.id, ticket, id: { public_id: ticket.public_id }, path: `/v1/tickets/${ticket.public_id}` }
  })

const keyIdOf = (ws: SeededWorkspace) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`
      select id from api_keys where workspace_id = ${ws.workspace.id} and environment = 'test' and kind = 'secret'
      order by created_at, id limit 1`
  ).pipe(
    Effect.map((rows) => rows[0]!.id),
    Effect.orDie
  )

/** A receiver that answers 503 to everything, so deliveries stay pending and retry. */
const failingReceiver = Effect.map(
  loopbackServer((_, res) => void res.writeHead(503).end("busy")),
  (server) => ({ url: `${server.origin}/hook`, received: server.received })
)

layer(testServer())("tickets", (it) => {

  describe("create", () => {
    it.effect("opens a ticket, writes ticket.created with the first message, and e-mails the owner", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        const reply = yield* createTicket(h, ws.secretTest, {
          agent_id: agentId,
          subject: "  Cannot log in ",
          body: "I forgot my password",
          visitor_name: "Ada",
          visitor_email: "ada@example.com",
          tags: ["login", "login", "web"],
          metadata: { plan: "gold" },
          conversation_id: "cnv_123"
        })
        expect(reply.status).toBe(201)
        const ticket = reply.body.data
        expect(ticket).toMatchObject({
          object: "ticket",
          agent_id: agentId,
          status: "open",
          priority: "normal",
          origin: "api",
          visitor_name: "Ada",
          visitor_email: "ada@example.com",
          subject: "Cannot log in",
          assigned_to: null,
          tags: ["login", "web"],
          metadata: { plan: "gold" },
          conversation_id: "cnv_123",
          created_at: new Date(testEpoch).toISOString(),
          resolved_at: null,
          first_response_at: null
        })
        expect(ticket.public_id).toMatch(/^tck_[A-Za-z0-9]{24}$/)
        expect(ticket.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)

        const events = yield* ticketEvents(ws.workspace.id)
        expect(events.map((e) => e.type)).toEqual(["ticket.created"])
        expect(events[0]!.body.data.ticket).toEqual(ticket)
        expect(events[0]!.body.data.first_message).toMatchObject({
          object: "ticket_message",
          ticket_public_id: ticket.public_id,
          author_type: "visitor",
          author_id: null,
          body: "I forgot my password"
        })
        expect(events[0]!.body.data.first_message.id).toMatch(/^tmsg_/)

        // the owner's notice: written in the transaction, sent 1 s later by the sender fiber
        yield* TestClock.adjust("1 second")
        const mail = yield* eventually(
          Effect.map(mailTo("owner@acme.test"), (sent) => sent.filter((m) => m.subject.includes(ticket.public_id))),
          (sent) => sent.length === 1
        )
        expect(mail[0]!.subject).toContain(ticket.public_id)
        expect(mail[0]!.subject).toContain("Cannot log in")
        // no visitor data in e-mail: a sent message could not be erased
        expect(mail[0]!.text).not.toContain("ada@example.com")
        expect(mail[0]!.text).not.toContain("I forgot my password")
      })
    )

    it.effect("without a body: first_message is null and the thread holds only the creation", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { ws, api, id } = yield* setup(h)
        const events = yield* ticketEvents(ws.workspace.id)
        expect(events[0]!.body.data.first_message).toBeNull()
        const read = yield* api.tickets.retrieve({ path: id })
        expect(read.data.thread.map((t) => [t.object, "type" in t ? t.type : undefined])).toEqual([["ticket_event", "created"]])
      })
    )

    it.effect("the agent must exist in the key's environment", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const liveAgent = yield* createAgent(h, ws.secretLive)
        for (const agentId of ["agt_doesnotexist0000", liveAgent]) {
          const reply = yield* createTicket(h, ws.secretTest, { agent_id: agentId })
          expect(reply.status).toBe(404)
          expect(reply.body.error).toMatchObject({ code: "resource_missing", param: "agent_id" })
        }
        // a rejected creation does not count against the plan
        const rows = yield* Effect.orDie(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql`select * from ticket_usage where workspace_id = ${ws.workspace.id}`)
        )
        expect(rows).toEqual([])
      })
    )

    it.effect("validates the body, naming the parameter", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent_id = yield* createAgent(h, ws.secretTest)
        const cases: Array<[Record<string, unknown>, string, string]> = [
          [{ subject: "x" }, "parameter_missing", "agent_id"],
          [{ agent_id, subject: "" }, "parameter_invalid", "subject"],
          [{ agent_id, priority: "critical" }, "parameter_invalid", "priority"],
          [{ agent_id, origin: "email" }, "parameter_invalid", "origin"],
          [{ agent_id, visitor_email: "not-an-email" }, "parameter_invalid", "visitor_email"],
          [{ agent_id, body: "   " }, "parameter_invalid", "body"],
          [{ agent_id, colour: "red" }, "parameter_invalid", "colour"]
        ]
        for (const [body, code, param] of cases) {
          const reply = yield* h.call("POST", "/v1/tickets", { key: ws.secretTest, body: { subject: "s", ...body } })
          expect(reply.status, JSON.stringify(body)).toBe(400)
          expect(reply.body.error, JSON.stringify(body)).toMatchObject({ code, param })
        }
      })
    )
  })

  describe("origins and widget keys", () => {
    it.effect("secret keys (write:tickets) create origin api only: widget origins and form are 403 key_scope_mismatch", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent_id = yield* createAgent(h, ws.secretTest)
        expect((yield* createTicket(h, ws.secretTest, { agent_id })).body.data.origin).toBe("api")
        const api = yield* createTicket(h, ws.secretTest, { agent_id, origin: "api" })
        expect(api.status).toBe(201)
        expect(api.body.data.origin).toBe("api")
        for (const origin of ["widget_button", "ai_escalation", "form"]) {
          const reply = yield* createTicket(h, ws.secretTest, { agent_id, origin })
          expect(reply.status, origin).toBe(403)
          expect(reply.body.error, origin).toMatchObject({ type: "permission_error", code: "key_scope_mismatch", param: "origin" })
        }
        const widgetOrigin = yield* createTicket(h, ws.secretTest, { agent_id, origin: "widget_button" })
        expect(widgetOrigin.status).toBe(403)
        expect(widgetOrigin.body.error.message).toContain("widget:tickets")
        // nothing was created by the refused ones
        const listed = yield* h.call("GET", "/v1/tickets?limit=100", { key: ws.secretTest })
        expect(listed.body.data.map((t: any) => t.origin)).toEqual(["api", "api"])
        // write:tickets is what a secret key needs
        const readOnly = yield* ws.key({ kind: "secret", scopes: ["read:tickets"] })
        const refused = yield* createTicket(h, readOnly.secret, { agent_id, origin: "api" })
        expect(refused.status).toBe(403)
      })
    )

    it.effect("widget keys create widget_button (default) and ai_escalation tickets as the visitor; api is 403", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent_id = yield* createAgent(h, ws.secretTest)
        const button = yield* createTicket(h, ws.widgetTest, { agent_id, body: "help", visitor_name: "Vi" })
        expect(button.status).toBe(201)
        expect(button.body.data.origin).toBe("widget_button")
        const escalated = yield* createTicket(h, ws.widgetTest, { agent_id, origin: "ai_escalation" })
        expect(escalated.body.data.origin).toBe("ai_escalation")
        for (const origin of ["api", "form"]) {
          const reply = yield* createTicket(h, ws.widgetTest, { agent_id, origin })
          expect(reply.status, origin).toBe(403)
          expect(reply.body.error, origin).toMatchObject({ code: "key_scope_mismatch", param: "origin" })
        }
        const read = yield* h.call("GET", `/v1/tickets/${button.body.data.public_id}`, { key: ws.secretTest })
        expect(read.body.data.thread[0]).toMatchObject({ type: "created", actor: { type: "visitor", id: null } })
        // a widget key without widget:tickets is refused
        const chatOnly = yield* ws.key({ kind: "widget", scopes: ["widget:chat"] })
        const refused = yield* createTicket(h, chatOnly.secret, { agent_id })
        expect(refused.status).toBe(403)
        expect(refused.body.error.code).toBe("key_scope_mismatch")
        const refusedMessage = yield* h.call("POST", `/v1/tickets/${button.body.data.public_id}/messages`, {
          key: chatOnly.secret,
          body: { body: "x" }
        })
        expect(refusedMessage.status).toBe(403)
      })
    )

    it.effect("widget keys add visitor messages; the live widget cannot reach a sandbox ticket", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { ws, id, ticket } = yield* setup(h)
        const widget = yield* h.client(ws.widgetTest)
        // the client checks the declared 201
        const reply = yield* widget.tickets.addMessage({ path: id, headers: {}, payload: { body: "still broken" } })
        expect(reply.data).toMatchObject({
          object: "ticket_message",
          ticket_public_id: ticket.public_id,
          author_type: "visitor",
          author_id: null,
          body: "still broken"
        })
        const liveWidget = yield* ws.key({ kind: "widget", environment: "live", scopes: ["widget:tickets"] })
        const live = yield* h.client(liveWidget.secret)
        yield* expectFailure(live.tickets.addMessage({ path: id, headers: {}, payload: { body: "x" } }), ResourceMissing)
      })
    )
  })

  describe("transitions (SPEC section 3)", () => {
    it.effect("PATCH status: any to the value given, ticket.status.changed with actor api (the key id)", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { ws, api, id, ticket } = yield* setup(h)
        const keyId = yield* keyIdOf(ws)
        yield* TestClock.adjust("1 minute")
        const patched = (yield* api.tickets.update({ path: id, headers: {}, payload: { status: "pending_user" } })).data
        expect(patched).toMatchObject({ status: "pending_user", resolved_at: null })
        expect(patched.updated_at).not.toBe(ticket.updated_at)
        const events = yield* ticketEvents(ws.workspace.id)
        expect(events.map((e) => e.type)).toEqual(["ticket.created", "ticket.status.changed"])
        expect(events[1]!.body.data).toEqual({
          ticket_public_id: ticket.public_id,
          from: "open",
          to: "pending_user",
          actor: { type: "api", id: keyId },
          changed_at: patched.updated_at
        })
        // the same status again changes nothing and writes nothing
        const same = yield* api.tickets.update({ path: id, headers: {}, payload: { status: "pending_user" } })
        expect(same.data.updated_at).toBe(patched.updated_at)
        expect(yield* ticketEvents(ws.workspace.id)).toHaveLength(2)
      })
    )

    it.effect("PATCH with Service-Member-Id acts as that member; to resolved also writes ticket.resolved", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { ws, api, id, ticket } = yield* setup(h)
        const resolved = (yield* api.tickets.update({
          path: id,
          headers: { "service-member-id": "mem_42" },
          payload: { status: "resolved" }
        })).data
        expect(resolved.status).toBe("resolved")
        expect(resolved.resolved_at).toBe(resolved.updated_at)
        const events = yield* ticketEvents(ws.workspace.id)
        expect(events.map((e) => e.type)).toEqual(["ticket.created", "ticket.status.changed", "ticket.resolved"])
        expect(events[1]!.body.data).toMatchObject({ from: "open", to: "resolved", actor: { type: "member", id: "mem_42" } })
        expect(events[2]!.body.data.ticket).toEqual(resolved)

        // leaving resolved by PATCH clears resolved_at
        yield* TestClock.adjust("1 minute")
        const pending = yield* api.tickets.update({ path: id, headers: {}, payload: { status: "pending_user" } })
        expect(pending.data).toMatchObject({ status: "pending_user", resolved_at: null })
        const after = yield* ticketEvents(ws.workspace.id)
        expect(after.map((e) => e.type)).toEqual([
          "ticket.created",
          "ticket.status.changed",
          "ticket.resolved",
          "ticket.status.changed"
        ])
        expect(after[3]!.body.data).toMatchObject({ ticket_public_id: ticket.public_id, from: "resolved", to: "pending_user" })
      })
    )

    it.effect("resolve: sets resolved_at and writes both events; idempotent", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { ws, api, id } = yield* setup(h)
        yield* TestClock.adjust("5 minutes")
        const resolvedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
        // the client checks the declared 200 of each call
        const first = (yield* api.tickets.resolve({ path: id, headers: {} })).data
        expect(first.status).toBe("resolved")
        expect(first.resolved_at).toBe(resolvedAt)
        yield* TestClock.adjust("5 minutes")
        const second = (yield* api.tickets.resolve({ path: id, headers: {} })).data
        expect(second).toEqual(first)
        const types = (yield* ticketEvents(ws.workspace.id)).map((e) => e.type)
        expect(types).toEqual(["ticket.created", "ticket.status.changed", "ticket.resolved"])
      })
    )

    it.effect("reopen: resolved to open clears resolved_at with ticket.status.changed; otherwise a no-op", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { ws, api, id } = yield* setup(h)
        const noop = yield* api.tickets.reopen({ path: id, headers: {} })
        expect(noop.data.status).toBe("open")
        expect(yield* ticketEvents(ws.workspace.id)).toHaveLength(1)

        yield* api.tickets.resolve({ path: id, headers: {} })
        const reopened = yield* api.tickets.reopen({ path: id, headers: {} })
        expect(reopened.data).toMatchObject({ status: "open", resolved_at: null })
        const events = yield* ticketEvents(ws.workspace.id)
        expect(events.map((e) => e.type)).toEqual([
          "ticket.created",
          "ticket.status.changed",
          "ticket.resolved",
          "ticket.status.changed"
        ])
        expect(events[3]!.body.data).toMatchObject({ from: "resolved", to: "open", actor: { type: "api" } })
        const thread = (yield* api.tickets.retrieve({ path: id })).data.thread
        expect(thread.map((t) => ("type" in t ? t.type : t.object))).toEqual(["created", "resolved", "reopened"])
      })
    )

    it.effect("a member reply on an open ticket sets pending_user and first_response_at once (actor system)", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { ws, api, id, ticket } = yield* setup(h, { body: "help me" })
        yield* TestClock.adjust("2 minutes")
        const firstResponse = new Date(yield* Clock.currentTimeMillis).toISOString()
        // the client checks the declared 201
        const reply = (yield* api.tickets.addMessage({
          path: id,
          headers: { "service-member-id": "mem_7" },
          payload: { body: "On it" }
        })).data
        expect(reply).toMatchObject({ author_type: "member", author_id: "mem_7", body: "On it" })
        const read = (yield* api.tickets.retrieve({ path: id })).data
        expect(read).toMatchObject({ status: "pending_user", first_response_at: firstResponse })
        const events = yield* ticketEvents(ws.workspace.id)
        expect(events.map((e) => e.type)).toEqual(["ticket.created", "ticket.message.created", "ticket.status.changed"])
        expect(events[1]!.body.data).toEqual({ ticket_public_id: ticket.public_id, message: reply })
        expect(events[2]!.body.data).toMatchObject({
          from: "open",
          to: "pending_user",
          actor: { type: "system", id: null },
          changed_at: firstResponse
        })

        // a second member reply: no status change, first_response_at kept
        yield* TestClock.adjust("2 minutes")
        yield* api.tickets.addMessage({ path: id, headers: {}, payload: { body: "Any news?" } })
        const again = (yield* api.tickets.retrieve({ path: id })).data
        expect(again).toMatchObject({ status: "pending_user", first_response_at: firstResponse })
        expect((yield* ticketEvents(ws.workspace.id)).map((e) => e.type).slice(3)).toEqual(["ticket.message.created"])
      })
    )

    it.effect("a visitor message on pending_user or resolved sets open (actor system); on open nothing changes", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { ws, api, id } = yield* setup(h)
        const widget = yield* h.client(ws.widgetTest)
        const visitor = (body: string) => widget.tickets.addMessage({ path: id, headers: {}, payload: { body } })
        const statusOf = Effect.map(api.tickets.retrieve({ path: id }), (r) => r.data)

        yield* visitor("on open")
        expect((yield* statusOf).status).toBe("open")
        expect((yield* ticketEvents(ws.workspace.id)).map((e) => e.type)).toEqual([
          "ticket.created",
          "ticket.message.created"
        ])

        yield* api.tickets.update({ path: id, headers: {}, payload: { status: "pending_user" } })
        yield* visitor("on pending")
        expect((yield* statusOf).status).toBe("open")
        let events = yield* ticketEvents(ws.workspace.id)
        expect(events.slice(-2).map((e) => e.type)).toEqual(["ticket.message.created", "ticket.status.changed"])
        expect(events.at(-1)!.body.data).toMatchObject({ from: "pending_user", to: "open", actor: { type: "system", id: null } })

        yield* api.tickets.resolve({ path: id, headers: {} })
        yield* visitor("on resolved")
        const reopened = yield* statusOf
        expect(reopened).toMatchObject({ status: "open", resolved_at: null })
        events = yield* ticketEvents(ws.workspace.id)
        expect(events.at(-1)!.body.data).toMatchObject({ from: "resolved", to: "open", actor: { type: "system" } })
        expect(events.filter((e) => e.type === "ticket.message.created")).toHaveLength(3)
      })
    )

    it.effect("a member message on a resolved ticket leaves it resolved", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { ws, api, id } = yield* setup(h)
        const resolved = (yield* api.tickets.resolve({ path: id, headers: {} })).data
        yield* api.tickets.addMessage({ path: id, headers: {}, payload: { body: "closing note" } })
        const read = (yield* api.tickets.retrieve({ path: id })).data
        expect(read).toMatchObject({ status: "resolved", resolved_at: resolved.resolved_at })
        expect(read.first_response_at).not.toBeNull()
        expect((yield* ticketEvents(ws.workspace.id)).at(-1)!.type).toBe("ticket.message.created")
      })
    )

    it.effect("PATCH assigned_to, tags (replace), metadata (shallow merge, null removes), priority", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { ws, api, id, path } = yield* setup(h, { tags: ["a", "b"], metadata: { keep: 1, drop: "x", nested: { a: 1 } } })
        const patched = yield* api.tickets.update({
          path: id,
          headers: {},
          payload: { assigned_to: "mem_1", tags: ["c"], metadata: { drop: null, nested: { b: 2 }, added: true }, priority: "urgent" }
        })
        expect(patched.data).toMatchObject({
          assigned_to: "mem_1",
          tags: ["c"],
          metadata: { keep: 1, nested: { b: 2 }, added: true },
          priority: "urgent",
          status: "open"
        })
        expect(patched.data.metadata).not.toHaveProperty("drop")
        const unassigned = yield* api.tickets.update({ path: id, headers: {}, payload: { assigned_to: null } })
        expect(unassigned.data.assigned_to).toBeNull()
        // no status change: no webhook event; the thread records the assignments
        expect((yield* ticketEvents(ws.workspace.id)).map((e) => e.type)).toEqual(["ticket.created"])
        const thread = (yield* api.tickets.retrieve({ path: id })).data.thread
        expect(thread.map((t) => ("type" in t ? [t.type, t.from, t.to] : [t.object]))).toEqual([
          ["created", null, "open"],
          ["assigned", null, "mem_1"],
          ["assigned", "mem_1", null]
        ])
        // raw: the client cannot send an unknown status
        const bad = yield* h.call("PATCH", path, { key: ws.secretTest, body: { status: "closed" } })
        expect(bad.status).toBe(400)
        expect(bad.body.error).toMatchObject({ code: "parameter_invalid", param: "status" })
      })
    )
  })

  describe("reads", () => {
    it.effect("the thread interleaves messages and events in order; messages list oldest first, paginated", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { ws, api, id, path } = yield* setup(h, { body: "m1" })
        const widget = yield* h.client(ws.widgetTest)
        yield* api.tickets.addMessage({ path: id, headers: {}, payload: { body: "m2" } })
        yield* widget.tickets.addMessage({ path: id, headers: {}, payload: { body: "m3" } })
        yield* api.tickets.resolve({ path: id, headers: {} })
        const thread = (yield* api.tickets.retrieve({ path: id })).data.thread
        expect(thread.map((t) => (t.object === "ticket_message" ? `msg:${t.body}` : `evt:${t.type}`))).toEqual([
          "evt:created",
          "msg:m1",
          "evt:message_added",
          "msg:m2",
          "evt:message_added",
          "evt:status_changed",
          "msg:m3",
          "evt:message_added",
          "evt:status_changed",
          "evt:resolved"
        ])
        const page1 = yield* api.tickets.messages({ path: id, urlParams: { limit: "2" } })
        expect(page1.data.map((m) => m.body)).toEqual(["m1", "m2"])
        expect(page1.meta.pagination.has_more).toBe(true)
        // raw: the exact pagination object, which the client's decoding (dropping unknown fields) would not check
        const page2 = yield* h.call("GET", `${path}/messages?limit=2&starting_after=${page1.meta.pagination.next_cursor}`, {
          key: ws.secretTest
        })
        expect(page2.body.data.map((m: any) => m.body)).toEqual(["m3"])
        expect(page2.body.meta.pagination).toEqual({ has_more: false, next_cursor: null })
        yield* expectFailure(
          api.tickets.messages({ path: { public_id: TicketPublicId.make("tck_doesnotexist000") }, urlParams: {} }),
          ResourceMissing
        )
        // raw: the client cannot send a malformed id
        const malformed = yield* h.call("GET", "/v1/tickets/nope", { key: ws.secretTest })
        expect(malformed.status).toBe(400)
        expect(malformed.body.error).toMatchObject({ code: "parameter_invalid", param: "public_id" })
      })
    )

    it.effect("filters: every pair of statuses and of priorities, assigned_to, agent_id, origin, tag, total_count, pages", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed({ plan: "pro" })
        const agentA = yield* createAgent(h, ws.secretTest)
        const agentB = yield* createAgent(h, ws.secretTest)
        const statuses = ["open", "pending_user", "resolved"] as const
        const priorities: ReadonlyArray<string> = ["low", "normal", "high", "urgent"]
        const seeded: Array<{
          id: string
          status: string
          priority: string
          agent: string
          origin: string
          assigned: string | null
          tags: Array<string>
        }> = []
        let i = 0
        for (const status of statuses) {
          for (const priority of priorities) {
            const agent = i % 2 === 0 ? agentA : agentB
            const origin = i % 3 === 0 ? "widget_button" : "api"
            const tags = i % 4 === 0 ? ["vip", "billing"] : ["billing"]
            const assigned = i % 5 === 0 ? "mem_x" : null
            // widget_button tickets come from widget keys (a secret key creates origin api only)
            const created = yield* createTicket(h, origin === "api" ? ws.secretTest : ws.widgetTest, {
              agent_id: agent,
              priority,
              origin,
              tags
            })
            const path = `/v1/tickets/${created.body.data.public_id}`
            if (status !== "open") yield* h.call("PATCH", path, { key: ws.secretTest, body: { status } })
            if (assigned !== null) yield* h.call("PATCH", path, { key: ws.secretTest, body: { assigned_to: assigned } })
            seeded.push({ id: created.body.data.public_id, status, priority, agent, origin, assigned, tags })
            i++
          }
        }
        const newestFirst = [...seeded].reverse()
        const list = (query: string) =>
          Effect.map(h.call("GET", `/v1/tickets?limit=100&include=total_count&${query}`, { key: ws.secretTest }), (r) => {
            expect(r.status, query).toBe(200)
            return { ids: r.body.data.map((t: any) => t.public_id), total: r.body.meta.pagination.total_count }
          })
        const check = (query: string, keep: (t: (typeof seeded)[number]) => boolean) =>
          Effect.gen(function* () {
            const got = yield* list(query)
            const want = newestFirst.filter(keep).map((t) => t.id)
            expect(got.ids, query).toEqual(want)
            expect(got.total, query).toBe(want.length)
          })

        for (const [s1, s2] of [["open", "pending_user"], ["open", "resolved"], ["pending_user", "resolved"]]) {
          for (let a = 0; a < priorities.length; a++) {
            for (let b = a + 1; b < priorities.length; b++) {
              const [p1, p2] = [priorities[a]!, priorities[b]!]
              yield* check(`status=${s1}&status=${s2}&priority=${p1}&priority=${p2}`, (t) =>
                [s1, s2].includes(t.status) && [p1, p2].includes(t.priority)
              )
            }
          }
        }
        yield* check("status=resolved", (t) => t.status === "resolved")
        yield* check("priority=urgent", (t) => t.priority === "urgent")
        yield* check("assigned_to=mem_x", (t) => t.assigned === "mem_x")
        yield* check(`agent_id=${agentB}`, (t) => t.agent === agentB)
        yield* check("origin=widget_button", (t) => t.origin === "widget_button")
        yield* check("tag=vip", (t) => t.tags.includes("vip"))
        yield* check(`tag=vip&agent_id=${agentA}&status=open&status=resolved`, (t) =>
          t.tags.includes("vip") && t.agent === agentA && ["open", "resolved"].includes(t.status)
        )
        yield* check("", () => true)

        // pagination under a filter: pages of 3 over open+resolved, in order, no gaps
        const want = newestFirst.filter((t) => t.status !== "pending_user").map((t) => t.id)
        const got: Array<string> = []
        let cursor: string | null = null
        do {
          const reply: any = yield* h.call(
            "GET",
            `/v1/tickets?status=open&status=resolved&limit=3&include=total_count${cursor ? `&starting_after=${cursor}` : ""}`,
            { key: ws.secretTest }
          )
          expect(reply.body.meta.pagination.total_count).toBe(want.length)
          got.push(...reply.body.data.map((t: any) => t.public_id))
          cursor = reply.body.meta.pagination.next_cursor
        } while (cursor !== null)
        expect(got).toEqual(want)

        // without include there is no total_count
        const plain = yield* h.call("GET", "/v1/tickets?limit=1", { key: ws.secretTest })
        expect(plain.body.meta.pagination).not.toHaveProperty("total_count")
        for (const [query, param] of [
          ["status=closed", "status"],
          ["status=open&status=bogus", "status"],
          ["priority=critical", "priority"],
          ["origin=email", "origin"],
          ["include=everything", "include"]
        ]) {
          const bad = yield* h.call("GET", `/v1/tickets?${query}`, { key: ws.secretTest })
          expect(bad.status, query).toBe(400)
          expect(bad.body.error, query).toMatchObject({ code: "parameter_invalid", param })
        }
        const badLimit = yield* h.call("GET", "/v1/tickets?limit=0", { key: ws.secretTest })
        expect(badLimit.body.error.code).toBe("invalid_limit")
      })
    )
  })

  describe("erasure", () => {
    it.scoped("leaves no trace of the name, e-mail or bodies in any column; keeps the events; is idempotent", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const sql = yield* SqlClient.SqlClient
        const ws = yield* h.seed({ plan: "pro" })
        const agent_id = yield* createAgent(h, ws.secretTest)
        const receiver = yield* failingReceiver
        const hook = yield* h.call("POST", "/v1/webhooks", {
          key: ws.secretTest,
          body: { url: receiver.url, events: ["ticket.created", "ticket.message.created"] }
        })
        expect(hook.status).toBe(201)

        const secrets = {
          name: "Zebulon Quixotic-Farnsworth",
          email: "zebulon.qf.7781@erase-me.test",
          first: "FIRSTBODY my account number is 99-ZQ-4410",
          member: "MEMBERBODY please confirm your address",
          visitor: "VISITORBODY I live at 12 Nowhere Lane"
        }
        // with idempotency keys, so the replayable responses hold the data too
        const created = yield* createTicket(
          h,
          ws.secretTest,
          { agent_id, visitor_name: secrets.name, visitor_email: secrets.email, body: secrets.first },
          { "idempotency-key": "erase-create" }
        )
        const path = `/v1/tickets/${created.body.data.public_id}`
        yield* h.call("POST", `${path}/messages`, {
          key: ws.secretTest,
          body: { body: secrets.member },
          headers: { "idempotency-key": "erase-member" }
        })
        yield* h.call("POST", `${path}/messages`, {
          key: ws.widgetTest,
          body: { body: secrets.visitor },
          headers: { "idempotency-key": "erase-visitor" }
        })
        // an unrelated ticket of the same visitor's workspace keeps its data
        const other = yield* createTicket(h, ws.secretTest, { agent_id, visitor_name: "Other Person", body: "other body" })

        // the first attempts went out (and failed): deliveries now wait 30 s to retry
        yield* eventually(Effect.sync(() => receiver.received.length), (n) => n >= 3, { label: "first attempts" })
        const threadBefore = (yield* h.call("GET", path, { key: ws.secretTest })).body.data.thread
        const eventsBefore = yield* ticketEvents(ws.workspace.id)

        const erased = yield* h.call("DELETE", path, { key: ws.secretTest })
        expect(erased.status).toBe(200)
        expect(erased.body.data).toMatchObject({
          public_id: created.body.data.public_id,
          visitor_name: "[deleted]",
          visitor_email: "[deleted]",
          subject: created.body.data.subject
        })

        // every text, varchar and json(b) column of every table
        const columns = yield* Effect.orDie(sql<{ table_name: string; column_name: string }>`
          select table_name, column_name from information_schema.columns
          where table_schema = 'public' and data_type in ('text', 'character varying', 'json', 'jsonb', 'ARRAY')
          order by table_name, column_name`)
        expect(columns.map((c) => `${c.table_name}.${c.column_name}`)).toEqual(
          expect.arrayContaining(["events.body", "tickets.visitor_name", "ticket_messages.body", "idempotency_keys.response_body", "emails.body_text"])
        )
        const traces: Array<string> = []
        for (const { table_name, column_name } of columns) {
          for (const value of Object.values(secrets)) {
            const rows = yield* Effect.orDie(
              sql<{ n: string }>`select count(*) as n from ${sql(table_name)} where strpos(${sql(column_name)}::text, ${value}) > 0`
            )
            if (Number(rows[0]!.n) > 0) traces.push(`${table_name}.${column_name}: ${value}`)
          }
        }
        expect(traces).toEqual([])

        // the thread keeps every event (plus the erasure); messages stay, bodies replaced
        const read = (yield* h.call("GET", path, { key: ws.secretTest })).body.data
        expect(read.thread.length).toBe(threadBefore.length + 1)
        expect(read.thread.filter((t: any) => t.object === "ticket_event").map((t: any) => t.id)).toEqual([
          ...threadBefore.filter((t: any) => t.object === "ticket_event").map((t: any) => t.id),
          expect.any(String)
        ])
        expect(read.thread.at(-1)).toMatchObject({ type: "erased", actor: { type: "api" } })
        expect(read.thread.filter((t: any) => t.object === "ticket_message").map((t: any) => t.body)).toEqual([
          "[deleted]",
          "[deleted]",
          "[deleted]"
        ])
        // the stored events are all still there, same ids and types, bodies scrubbed
        const eventsAfter = yield* ticketEvents(ws.workspace.id)
        expect(eventsAfter.map((e) => [e.body.id, e.type])).toEqual(eventsBefore.map((e) => [e.body.id, e.type]))
        expect(eventsAfter[0]!.body.data.ticket.visitor_name).toBe("[deleted]")
        expect(eventsAfter[0]!.body.data.first_message.body).toBe("[deleted]")
        // the other ticket is untouched
        const otherRead = (yield* h.call("GET", `/v1/tickets/${other.body.data.public_id}`, { key: ws.secretTest })).body.data
        expect(otherRead.visitor_name).toBe("Other Person")
        expect(otherRead.thread.find((t: any) => t.object === "ticket_message").body).toBe("other body")

        // a pending delivery's next attempt sends the scrubbed body
        const sentBefore = receiver.received.length
        yield* TestClock.adjust("30 seconds")
        yield* eventually(Effect.sync(() => receiver.received.length), (n) => n >= sentBefore + 3, { label: "retries" })
        for (const { body } of receiver.received.slice(sentBefore)) {
          for (const value of Object.values(secrets)) expect(body).not.toContain(value)
        }
        expect(receiver.received.slice(sentBefore).map((r) => r.body).join("\n")).toContain("[deleted]")

        // a replay of the creation returns the scrubbed response
        const replay = yield* createTicket(
          h,
          ws.secretTest,
          { agent_id, visitor_name: secrets.name, visitor_email: secrets.email, body: secrets.first },
          { "idempotency-key": "erase-create" }
        )
        expect(replay.headers.get("idempotent-replayed")).toBe("true")
        expect(replay.body.data.visitor_name).toBe("[deleted]")

        const again = yield* h.call("DELETE", path, { key: ws.secretTest })
        expect(again.status).toBe(200)
        expect(again.body.data).toEqual(erased.body.data)
        expect((yield* h.call("GET", path, { key: ws.secretTest })).body.data.thread.length).toBe(read.thread.length)
        expect(yield* ticketEvents(ws.workspace.id)).toHaveLength(eventsAfter.length)
      })
    )
  })
})
