/**
 * The widget surface: agents' `allowed_origins`, CORS answered by the edge
 * (preflight, exact echo, foreign origins refused), widget keys only, and the
 * first endpoint, lead capture with its `lead.captured` event.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { AgentId } from "../../schema/Ids.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { eventsOf } from "../tickets/support.js"

const shop = "https://shop.example.com"

const createAgent = (h: HarnessShape, key: string, allowed_origins: ReadonlyArray<string> = [shop]) =>
  Effect.map(h.call("POST", "/v1/agents", { key, body: { type: "support", name: "Widget bot", allowed_origins } }), (r) => {
    expect(r.status, r.text).toBe(201)
    return r.body.data.id as string
  })

const capture = (h: HarnessShape, agentId: string, key: string | undefined, origin: string | undefined, body: unknown) =>
  h.call("POST", `/widget/v1/agents/${agentId}/leads`, {
    key,
    body,
    headers: origin === undefined ? {} : { origin }
  })

const preflight = (h: HarnessShape, agentId: string, origin: string) =>
  h.call("OPTIONS", `/widget/v1/agents/${agentId}/leads`, {
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization, content-type"
    }
  })

layer(testServer())("widget surface", (it) => {
  describe("allowed_origins on agents", () => {
    it.effect("secret keys set them on create and PATCH, normalised and without duplicates; agent.updated shows the change", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const created = yield* h.call("POST", "/v1/agents", {
          key: ws.secretTest,
          body: {
            type: "support",
            name: "Origins",
            allowed_origins: ["HTTPS://Shop.Example.com:443/", "https://shop.example.com", "http://localhost:5173"]
          }
        })
        expect(created.status).toBe(201)
        expect(created.body.data.allowed_origins).toEqual(["https://shop.example.com", "http://localhost:5173"])
        const id = created.body.data.id

        const plain = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "None" } })
        expect(plain.body.data.allowed_origins).toEqual([])

        const patched = yield* h.call("PATCH", `/v1/agents/${id}`, {
          key: ws.secretTest,
          body: { allowed_origins: ["https://www.example.org:8443"] }
        })
        expect(patched.status).toBe(200)
        expect(patched.body.data.allowed_origins).toEqual(["https://www.example.org:8443"])
        const read = yield* h.call("GET", `/v1/agents/${id}`, { key: ws.secretTest })
        expect(read.body.data.allowed_origins).toEqual(["https://www.example.org:8443"])
        const updated = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "agent.updated")
        expect(updated).toHaveLength(1)
        expect(updated[0]!.body.data.changes).toEqual({
          allowed_origins: { from: ["https://shop.example.com", "http://localhost:5173"], to: ["https://www.example.org:8443"] }
        })
        // the same list again changes nothing and announces nothing
        yield* h.call("PATCH", `/v1/agents/${id}`, { key: ws.secretTest, body: { allowed_origins: ["https://www.example.org:8443/"] } })
        expect((yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "agent.updated")).toHaveLength(1)
      })
    )

    it.effect("refuses what is not an origin, and more than 20", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        for (const bad of [
          "shop.example.com",
          "ftp://shop.example.com",
          "https://shop.example.com/path",
          "https://shop.example.com?q=1",
          "https://user:pw@shop.example.com",
          "https://*.example.com",
          "null"
        ]) {
          const reply = yield* h.call("POST", "/v1/agents", {
            key: ws.secretTest,
            body: { type: "support", name: "Bad", allowed_origins: [shop, bad] }
          })
          expect(reply.status, bad).toBe(400)
          expect(reply.body.error, bad).toMatchObject({ code: "parameter_invalid", param: "allowed_origins[1]" })
        }
        const many = Array.from({ length: 21 }, (_, i) => `https://site${i}.example.com`)
        const tooMany = yield* h.call("POST", "/v1/agents", {
          key: ws.secretTest,
          body: { type: "support", name: "Many", allowed_origins: many }
        })
        expect(tooMany.status).toBe(400)
        expect(tooMany.body.error).toMatchObject({ code: "parameter_invalid", param: "allowed_origins" })
      })
    )
  })

  describe("CORS", () => {
    it.effect("a preflight from an allowed origin: 204, the origin echoed exactly, methods, headers, max-age", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = yield* createAgent(h, ws.secretTest, [shop, "http://localhost:5173"])
        const reply = yield* preflight(h, agent, "http://localhost:5173")
        expect(reply.status).toBe(204)
        expect(reply.text).toBe("")
        expect(reply.headers.get("access-control-allow-origin")).toBe("http://localhost:5173")
        expect(reply.headers.get("vary")).toBe("Origin")
        expect(reply.headers.get("access-control-allow-methods")).toBe("POST")
        const allowedHeaders = reply.headers.get("access-control-allow-headers")!.toLowerCase().split(/,\s*/)
        expect(allowedHeaders).toEqual(expect.arrayContaining(["authorization", "content-type", "last-event-id", "idempotency-key"]))
        expect(reply.headers.get("access-control-max-age")).toBe("600")
        expect(reply.headers.get("access-control-allow-credentials")).toBeNull()
      })
    )

    it.effect("other origins get no CORS headers: preflights are bare, requests are 403 origin_not_allowed", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = yield* createAgent(h, ws.secretTest)
        for (const origin of ["https://evil.example.com", "http://shop.example.com", "https://shop.example.com:8443", "null"]) {
          const pre = yield* preflight(h, agent, origin)
          expect(pre.status, origin).toBe(204)
          expect(pre.headers.get("access-control-allow-origin"), origin).toBeNull()
          expect(pre.headers.get("access-control-allow-methods"), origin).toBeNull()

          const refused = yield* capture(h, agent, ws.widgetTest, origin, { email: "v@example.com" })
          expect(refused.status, origin).toBe(403)
          expect(refused.body.error, origin).toMatchObject({ type: "permission_error", code: "origin_not_allowed", param: "Origin" })
          expect(refused.body.meta.request_id).toMatch(/^req_/)
          expect(refused.headers.get("access-control-allow-origin")).toBeNull()
        }
        // an agent with no origins accepts no browser at all
        const closed = yield* createAgent(h, ws.secretTest, [])
        expect((yield* preflight(h, closed, shop)).headers.get("access-control-allow-origin")).toBeNull()
        expect((yield* capture(h, closed, ws.widgetTest, shop, { email: "v@example.com" })).status).toBe(403)
        expect((yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "lead.captured")).toEqual([])
      })
    )
  })

  describe("lead capture", () => {
    it.effect("a widget key from an allowed origin captures a lead: 201, CORS headers, lead.captured with the conversation", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = yield* createAgent(h, ws.secretTest)
        const reply = yield* capture(h, agent, ws.widgetTest, shop, {
          email: "visitor@example.com",
          name: "Vera Visitor",
          metadata: { page: "https://shop.example.com/pricing" },
          conversation_id: "cnv_widgetconvo01"
        })
        expect(reply.status, reply.text).toBe(201)
        expect(reply.headers.get("access-control-allow-origin")).toBe(shop)
        expect(reply.headers.get("vary")).toBe("Origin")
        expect(reply.headers.get("access-control-expose-headers")).toContain("Request-Id")
        const lead = reply.body.data
        expect(lead).toMatchObject({
          object: "lead",
          agent_id: agent,
          email: "visitor@example.com",
          name: "Vera Visitor",
          phone: null,
          metadata: { source: "widget", page: "https://shop.example.com/pricing" },
          conversation_id: "cnv_widgetconvo01"
        })
        const events = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "lead.captured")
        expect(events.map((e) => e.body.data)).toEqual([{ lead, conversation_id: "cnv_widgetconvo01" }])
        // the integrator sees it with a secret key
        expect((yield* h.call("GET", `/v1/leads/${lead.id}`, { key: ws.secretTest })).body.data).toEqual(lead)

        // without an Origin (not a browser) the key alone decides
        const server = yield* capture(h, agent, ws.widgetTest, undefined, { phone: "+1 555 0100" })
        expect(server.status).toBe(201)
        expect(server.headers.get("access-control-allow-origin")).toBeNull()

        // the form's own checks still apply
        const empty = yield* capture(h, agent, ws.widgetTest, shop, { name: "No contact" })
        expect(empty.status).toBe(400)
        expect(empty.body.error).toMatchObject({ code: "parameter_missing", param: "email" })
        expect(empty.headers.get("access-control-allow-origin")).toBe(shop)
        const stray = yield* capture(h, agent, ws.widgetTest, shop, { email: "v@example.com", agent_id: agent })
        expect(stray.body.error).toMatchObject({ code: "parameter_invalid", param: "agent_id" })
      })
    )

    it.effect("the typed client with a widget key captures a lead; with a secret key it gets KeyScopeMismatch", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = AgentId.make(yield* createAgent(h, ws.secretTest))
        const widget = yield* h.client(ws.widgetTest)
        const { data } = yield* widget.widget.captureLead({ path: { agent_id: agent }, payload: { phone: "+34 600 000 000" } })
        expect(data).toMatchObject({ object: "lead", agent_id: agent, phone: "+34 600 000 000", metadata: { source: "widget" } })
        const secret = yield* h.client(ws.secretTest)
        const refused = yield* Effect.flip(secret.widget.captureLead({ path: { agent_id: agent }, payload: { email: "a@b.co" } }))
        expect(refused).toMatchObject({ _tag: "KeyScopeMismatch" })
      })
    )

    it.effect("secret and forms keys are refused; no key is 401; widget keys are refused on /v1/leads", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = yield* createAgent(h, ws.secretTest)
        const body = { email: "v@example.com" }
        const secret = yield* capture(h, agent, ws.secretTest, shop, body)
        expect(secret.status).toBe(403)
        expect(secret.body.error.code).toBe("key_scope_mismatch")
        // even a secret key somehow holding the widget scope
        const odd = yield* ws.key({ kind: "secret", scopes: ["widget:chat"] })
        expect((yield* capture(h, agent, odd.secret, shop, body)).body.error.code).toBe("key_scope_mismatch")
        expect((yield* capture(h, agent, ws.formsTest, shop, body)).body.error.code).toBe("key_scope_mismatch")
        // a widget key for tickets only
        const ticketsOnly = yield* ws.key({ kind: "widget", scopes: ["widget:tickets"] })
        expect((yield* capture(h, agent, ticketsOnly.secret, shop, body)).body.error.code).toBe("key_scope_mismatch")
        const none = yield* capture(h, agent, undefined, shop, body)
        expect(none.status).toBe(401)
        expect(none.body.error.code).toBe("missing_authorization")
        expect(none.headers.get("access-control-allow-origin")).toBe(shop)
        const revoked = yield* ws.key({ kind: "widget" })
        yield* ws.revoke(revoked.id)
        expect((yield* capture(h, agent, revoked.secret, shop, body)).body.error.code).toBe("invalid_api_key")

        const onApi = yield* h.call("POST", "/v1/leads", { key: ws.widgetTest, body: { agent_id: agent, ...body } })
        expect(onApi.status).toBe(403)
        expect(onApi.body.error.code).toBe("key_scope_mismatch")
        expect((yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "lead.captured")).toEqual([])
      })
    )

    it.effect("another workspace's or environment's agent is 404, even from an origin that agent allows", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const other = yield* h.seed()
        const theirs = yield* createAgent(h, other.secretTest)
        const body = { email: "v@example.com" }
        const crossed = yield* capture(h, theirs, ws.widgetTest, shop, body)
        expect(crossed.status).toBe(404)
        expect(crossed.body.error).toMatchObject({ code: "resource_missing", param: "agent_id" })
        expect((yield* capture(h, theirs, ws.widgetTest, undefined, body)).status).toBe(404)

        const live = yield* createAgent(h, ws.secretLive)
        expect((yield* capture(h, live, ws.widgetTest, shop, body)).status).toBe(404)
        const liveWidget = yield* ws.key({ kind: "widget", environment: "live" })
        expect((yield* capture(h, live, liveWidget.secret, shop, body)).status).toBe(201)

        // a deleted agent takes no more leads and allows no origin
        const doomed = yield* createAgent(h, ws.secretTest)
        yield* h.call("DELETE", `/v1/agents/${doomed}`, { key: ws.secretTest })
        expect((yield* capture(h, doomed, ws.widgetTest, undefined, body)).status).toBe(404)
        expect((yield* preflight(h, doomed, shop)).headers.get("access-control-allow-origin")).toBeNull()
        expect((yield* eventsOf(other.workspace.id)).filter((e) => e.type === "lead.captured")).toEqual([])
      })
    )
  })
})
