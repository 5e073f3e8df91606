/**
 * The submit pipeline through the real server: each response code, the order
 * of the checks (a request failing two gets the earlier one), the honeypot that
 * stores nothing, the per-IP rate limit under TestClock, the plan cap, and the
 * ticket a submission creates through the tickets program.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { MemoryMailbox } from "../../layers/Mailer.js"
import { monthOf } from "../../src/tickets/Rules.js"
import { eventually } from "../support/eventually.js"
import { Harness, testServer } from "../support/harness.js"
import { eventsOf, goodFields, origin, setPlan, submit, ticketsOf, useUpTicketCap, withForm } from "./support.js"

const thisMonth = Effect.map(Clock.currentTimeMillis, (ms) => monthOf(new Date(ms)))

layer(testServer({ secretKey: Redacted.make("forms-test-secret-key") }))("form submit", (it) => {
  it.effect("creates a ticket of origin form through the tickets program: event, owner e-mail", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { formId, agentId } = yield* withForm(h, ws)
      const reply = yield* submit(h, formId, ws.formsTest, { fields: { ...goodFields, page: "/pricing" } })
      expect(reply.status, reply.text).toBe(201)
      expect(reply.body.data).toEqual({
        object: "form_submission",
        form_id: formId,
        ticket: { public_id: expect.stringMatching(/^tck_/) }
      })
      expect(reply.body.meta.request_id).toMatch(/^req_/)
      expect(reply.headers.get("access-control-allow-origin")).toBe(origin)
      const publicId = reply.body.data.ticket.public_id

      const ticket = yield* h.call("GET", `/v1/tickets/${publicId}`, { key: ws.secretTest })
      expect(ticket.body.data).toMatchObject({
        origin: "form",
        agent_id: agentId,
        status: "open",
        visitor_name: "Ana Pérez",
        visitor_email: "ana@example.com",
        subject: "Where is my order?",
        metadata: { form_id: formId, identity: { verified: false } }
      })
      const first = ticket.body.data.thread.find((t: any) => t.object === "ticket_message")
      expect(first.author_type).toBe("visitor")
      expect(first.body).toBe("It has not arrived yet.\n\nTopic: billing\nOrder number: ORD-1234\nI agree: yes\nPage: /pricing")
      const created = ticket.body.data.thread.find((t: any) => t.type === "created")
      expect(created.actor).toEqual({ type: "visitor", id: null })

      const events = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "ticket.created")
      expect(events).toHaveLength(1)
      expect(events[0]!.body.data.ticket).toMatchObject({ public_id: publicId, origin: "form" })
      expect(events[0]!.body.data.first_message.body).toContain("Topic: billing")

      const mail = yield* eventually(
        Effect.flatMap(MemoryMailbox, (m) => m.sent),
        (sent) => sent.some((m) => m.to === "owner@acme.test" && m.subject.includes(publicId)),
        { label: "owner e-mail" }
      )
      const notice = mail.find((m) => m.subject.includes(publicId))!
      expect(notice.text).toContain("origin: form")
      expect(notice.text).not.toContain("ana@example.com")

      // a hidden field falls back to its default; the form title is the subject when there is none
      const plain = yield* submit(h, formId, ws.formsTest, {
        fields: { name: "Bo", email: "bo@example.com", body: "Hello there", consent: true }
      })
      expect(plain.status).toBe(201)
      const rows = yield* ticketsOf(ws.workspace.id)
      expect(rows.find((r) => r.public_id === plain.body.data.ticket.public_id)).toMatchObject({
        subject: "Contact us",
        visitor_name: "Bo"
      })
      const again = yield* h.call("GET", `/v1/tickets/${plain.body.data.ticket.public_id}`, { key: ws.secretTest })
      expect(again.body.data.thread.find((t: any) => t.object === "ticket_message").body).toBe("Hello there\n\nI agree: yes\nPage: unknown")
    })
  )

  it.effect("answers validation_failed with every field error", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { formId } = yield* withForm(h, ws)
      const reply = yield* submit(h, formId, ws.formsTest, {
        fields: {
          name: "   ",
          email: "not-an-email",
          body: "hey",
          topic: "sales",
          order: "ORD-12",
          consent: false,
          extra: "x"
        }
      })
      expect(reply.status).toBe(400)
      expect(reply.body.error.code).toBe("validation_failed")
      const errors = Object.fromEntries(reply.body.error.field_errors.map((e: any) => [e.field, e.message]))
      expect(Object.keys(errors).sort()).toEqual(["body", "consent", "email", "extra", "name", "order", "topic"])
      expect(errors.name).toBe("This field is required")
      expect(errors.body).toBe("At least 5 characters")

      const shapes: ReadonlyArray<unknown> = [undefined, [], '"text"', { fields: [] }, { fields: { name: 3 } }, { fields: {}, other: 1 }]
      for (const body of shapes) {
        const r = yield* submit(h, formId, ws.formsTest, body ?? "")
        expect(r.status, JSON.stringify(body)).toBe(400)
        expect(r.body.error.code, r.text).toBe("validation_failed")
        expect(r.body.error.field_errors.length).toBeGreaterThan(0)
      }
      const tooLong = yield* submit(h, formId, ws.formsTest, { fields: { ...goodFields, name: "x".repeat(101) } })
      expect(tooLong.body.error.field_errors).toEqual([{ field: "name", message: "At most 100 characters" }])
      // a pattern never runs on a huge value
      const huge = yield* submit(h, formId, ws.formsTest, { fields: { ...goodFields, order: "ORD-1".repeat(1000) } })
      expect(huge.body.error.field_errors).toEqual([{ field: "order", message: "The value does not have the expected format" }])
      const flood = yield* submit(h, formId, ws.formsTest, {
        fields: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`junk${i}`, "x"]))
      })
      expect(flood.body.error.field_errors).toHaveLength(100)
      expect(yield* ticketsOf(ws.workspace.id)).toHaveLength(0)
    })
  )

  it.effect("the honeypot answers 204 and stores nothing", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { formId } = yield* withForm(h, ws)
      const eventsBefore = (yield* eventsOf(ws.workspace.id)).length
      const reply = yield* submit(h, formId, ws.formsTest, { fields: { ...goodFields, website: "http://spam.example" } })
      expect(reply.status).toBe(204)
      expect(reply.text).toBe("")
      // even with fields that would fail validation: the bot learns nothing
      const sloppy = yield* submit(h, formId, ws.formsTest, { fields: { website: "x", email: "nope" } })
      expect(sloppy.status).toBe(204)
      expect(yield* ticketsOf(ws.workspace.id)).toHaveLength(0)
      expect((yield* eventsOf(ws.workspace.id)).length).toBe(eventsBefore)
      // an empty honeypot is what people send
      const person = yield* submit(h, formId, ws.formsTest, { fields: { ...goodFields, website: "" } })
      expect(person.status).toBe(201)
    })
  )

  it.effect("the component's decoy `_hp`: filled answers 204 and stores nothing, empty is ignored, on any form", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      // a form without a honeypot of its own: the component's decoy still works
      const { formId } = yield* withForm(h, ws, { honeypot_field: null })
      const bot = yield* submit(h, formId, ws.formsTest, { fields: { ...goodFields, _hp: "http://spam.example" } })
      expect(bot.status).toBe(204)
      expect(yield* ticketsOf(ws.workspace.id)).toHaveLength(0)
      const person = yield* submit(h, formId, ws.formsTest, { fields: { ...goodFields, _hp: "" } })
      expect(person.status, JSON.stringify(person.body)).toBe(201)
    })
  )

  it.effect("honours Idempotency-Key: a retried submission creates one ticket and replays its answer", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { formId } = yield* withForm(h, ws)
      const body = { fields: goodFields }
      const headers = { origin, "idempotency-key": "form-retry-1" }
      const first = yield* submit(h, formId, ws.formsTest, body, headers)
      expect(first.status, first.text).toBe(201)
      const again = yield* submit(h, formId, ws.formsTest, body, headers)
      expect(again.status).toBe(201)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.body.data.ticket.public_id).toBe(first.body.data.ticket.public_id)
      expect(yield* ticketsOf(ws.workspace.id)).toHaveLength(1)
      const other = yield* submit(h, formId, ws.formsTest, { fields: { ...goodFields, name: "Someone Else" } }, headers)
      expect(other.status).toBe(422)
      expect(other.body.error.code).toBe("idempotency_key_mismatch")
      // a bad forms key is refused as before, whatever its Idempotency-Key
      const badKey = yield* submit(h, formId, "pk_test_unknownunknownunknown00", body, headers)
      expect(badKey.status).toBe(401)
    })
  )

  it.effect("refuses keys and origins: 401, 403, 404", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { formId } = yield* withForm(h, ws)
      const body = { fields: goodFields }
      const expectCode = (reply: { status: number; body: any }, status: number, code: string) => {
        expect(reply.status, JSON.stringify(reply.body)).toBe(status)
        expect(reply.body.error.code).toBe(code)
        expect(reply.body.meta.request_id).toMatch(/^req_/)
      }
      expectCode(yield* submit(h, formId, undefined, body), 401, "missing_authorization")
      expectCode(yield* submit(h, formId, "pk_test_unknownunknownunknown00", body), 401, "invalid_api_key")
      expectCode(yield* submit(h, formId, ws.secretTest, body), 403, "key_scope_mismatch")
      expectCode(yield* submit(h, formId, ws.widgetTest, body), 403, "key_scope_mismatch")
      const live = yield* ws.key({ kind: "forms", environment: "live" })
      expectCode(yield* submit(h, formId, live.secret, body), 404, "resource_missing")
      expectCode(yield* submit(h, "frm_doesnotexist0000", ws.formsTest, body), 404, "resource_missing")
      const evil = yield* submit(h, formId, ws.formsTest, body, { origin: "https://evil.example.net" })
      expectCode(evil, 403, "origin_not_allowed")
      expect(evil.headers.get("access-control-allow-origin")).toBeNull()
      expect(yield* ticketsOf(ws.workspace.id)).toHaveLength(0)
      // a request without Origin is not from a page: it passes, as on the widget surface
      expect((yield* submit(h, formId, ws.formsTest, body, {})).status).toBe(201)
    })
  )

  it.effect("rate limits per IP and form with Retry-After, refilled by the clock", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed({ plan: "pro" })
      const { formId } = yield* withForm(h, ws, { rate_limit: { max: 2, window_seconds: 120 } })
      const other = yield* withForm(h, ws, { rate_limit: { max: 2, window_seconds: 120 } })
      const body = { fields: goodFields }
      expect((yield* submit(h, formId, ws.formsTest, body)).status).toBe(201)
      // failed submissions count as well
      expect((yield* submit(h, formId, ws.formsTest, { fields: {} })).status).toBe(400)
      const limited = yield* submit(h, formId, ws.formsTest, body)
      expect(limited.status).toBe(429)
      expect(limited.body.error.code).toBe("rate_limited")
      const retryAfter = Number(limited.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThan(0)
      expect(retryAfter).toBeLessThanOrEqual(120)
      expect(limited.headers.get("access-control-allow-origin")).toBe(origin)
      // another form has its own budget
      expect((yield* submit(h, other.formId, ws.formsTest, body)).status).toBe(201)

      yield* TestClock.adjust(`${retryAfter - 1} seconds`)
      expect((yield* submit(h, formId, ws.formsTest, body)).status).toBe(429)
      yield* TestClock.adjust("1 second")
      expect((yield* submit(h, formId, ws.formsTest, body)).status).toBe(201)
    })
  )

  it.effect("plan cap: 402 limit_reached once the month's tickets are used up", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed({ plan: "free" })
      const { formId } = yield* withForm(h, ws)
      yield* useUpTicketCap(ws.workspace.id, yield* thisMonth)
      const capped = yield* submit(h, formId, ws.formsTest, { fields: goodFields })
      expect(capped.status).toBe(402)
      expect(capped.body.error.code).toBe("limit_reached")
      expect(yield* ticketsOf(ws.workspace.id)).toHaveLength(0)
      yield* setPlan(ws.workspace.id, "pro")
      expect((yield* submit(h, formId, ws.formsTest, { fields: goodFields })).status).toBe(201)
    })
  )

  describe("order of the checks", () => {
    it.effect("a request failing two checks gets the earlier one", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed({ plan: "pro" })
        yield* h.call("POST", "/v1/identity_secret/rotate", { key: ws.secretTest })
        const { formId } = yield* withForm(h, ws, { identity_mode: "required", rate_limit: { max: 2, window_seconds: 600 } })
        yield* useUpTicketCap(ws.workspace.id, yield* thisMonth)
        yield* setPlan(ws.workspace.id, "pro")
        const evil = { origin: "https://evil.example.net" }
        const bad = { fields: { email: "nope" }, identity_token: "not.a.jwt" }
        const honey = { fields: { website: "spam", email: "nope" } }
        const code = (r: { status: number; body: any }) => `${r.status} ${r.status === 204 ? "" : r.body?.error?.code}`.trim()

        // key before form, origin, everything else
        expect(code(yield* submit(h, "frm_doesnotexist0000", undefined, bad, evil))).toBe("401 missing_authorization")
        // form before origin
        expect(code(yield* submit(h, "frm_doesnotexist0000", ws.formsTest, bad, evil))).toBe("404 resource_missing")
        // origin before the rate limit, honeypot and identity (and it costs no rate-limit token)
        for (let i = 0; i < 5; i++) expect(code(yield* submit(h, formId, ws.formsTest, honey, evil))).toBe("403 origin_not_allowed")
        // honeypot before identity and validation
        expect(code(yield* submit(h, formId, ws.formsTest, honey))).toBe("204")
        // identity before validation
        expect(code(yield* submit(h, formId, ws.formsTest, { fields: { email: "nope" } }))).toBe("401 identity_required")
        // rate limit (2 per window, both used now) before the honeypot
        expect(code(yield* submit(h, formId, ws.formsTest, honey))).toBe("429 rate_limited")

        const open = yield* withForm(h, ws, { identity_mode: "required" })
        expect(code(yield* submit(h, open.formId, ws.formsTest, bad))).toBe("401 identity_invalid")
        // validation before the plan cap (the workspace is back on free: capped)
        yield* setPlan(ws.workspace.id, "free")
        const noIdentity = yield* withForm(h, ws)
        expect(code(yield* submit(h, noIdentity.formId, ws.formsTest, { fields: { email: "nope" } }))).toBe("400 validation_failed")
        expect(code(yield* submit(h, noIdentity.formId, ws.formsTest, { fields: goodFields }))).toBe("402 limit_reached")
        expect(yield* ticketsOf(ws.workspace.id)).toHaveLength(0)
      })
    )
  })

  it.effect("a form whose target is a lead captures a lead of its agent, with lead.captured, and creates no ticket", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { formId, agentId } = yield* withForm(h, ws)
      // a lead target names its agent, as a ticket target does
      const noAgent = yield* h.call("PATCH", `/v1/forms/${formId}`, { key: ws.secretTest, body: { target: { type: "lead" } } })
      expect(noAgent.status).toBe(400)
      expect(noAgent.body.error.param).toMatch(/^target/)
      const patched = yield* h.call("PATCH", `/v1/forms/${formId}`, {
        key: ws.secretTest,
        body: { target: { type: "lead", agent_id: agentId } }
      })
      expect(patched.status).toBe(200)

      const reply = yield* submit(h, formId, ws.formsTest, { fields: goodFields }, { origin })
      expect(reply.status).toBe(201)
      const leadId = reply.body.data.lead.id
      expect(leadId).toMatch(/^ldx_/)
      expect(reply.body.data.ticket).toBeUndefined()

      const lead = (yield* h.call("GET", `/v1/leads/${leadId}`, { key: ws.secretTest })).body.data
      expect(lead).toMatchObject({ agent_id: agentId, email: goodFields.email, name: goodFields.name, conversation_id: null })
      expect(lead.metadata).toMatchObject({ source: "form", form_id: formId, page: origin, identity_verified: false })
      expect(lead.metadata.fields.subject).toBe(goodFields.subject)

      const captured = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "lead.captured")
      expect(captured).toHaveLength(1)
      expect(yield* ticketsOf(ws.workspace.id)).toHaveLength(0)
    })
  )
})

// the service-wide limit: three requests per address, then one each quarter of an hour
layer(testServer({ rateLimit: { rps: 1 / 900, burst: 3 } }))("form endpoints under the service's rate limit", (it) => {
  it.effect("preflights take no token; the edge's own 429 carries the CORS headers and Retry-After for the page", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { formId } = yield* withForm(h, ws)
      for (let i = 0; i < 5; i++) {
        const preflight = yield* h.call("OPTIONS", `/api/forms/${formId}/submit`, {
          headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "service-api-key" }
        })
        expect(preflight.status).toBe(204)
        expect(preflight.headers.get("access-control-allow-origin")).toBe(origin)
      }
      const config = () =>
        h.call("GET", `/v1/forms/${formId}/config`, { headers: { origin, "service-api-key": ws.formsTest } })
      for (let i = 0; i < 3; i++) expect((yield* config()).status).toBe(200)
      const limited = yield* config()
      expect(limited.status).toBe(429)
      expect(limited.body.error.code).toBe("rate_limited")
      expect(limited.headers.get("access-control-allow-origin")).toBe(origin)
      expect(limited.headers.get("access-control-expose-headers")).toContain("Retry-After")
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(60)
      // a foreign page gets no CORS header, refusal or not
      const foreign = yield* h.call("GET", `/v1/forms/${formId}/config`, {
        headers: { origin: "https://evil.example", "service-api-key": ws.formsTest }
      })
      expect(foreign.headers.get("access-control-allow-origin")).toBeNull()
    })
  )
})
