/**
 * The agent's `widget` settings (create, PATCH merging into the current ones, `agent.updated`) and the config the
 * chat widget reads: widget keys only, origin-checked, never the instructions or origins, ETag and `304`.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { eventsOf } from "../tickets/support.js"

const shop = "https://shop.example.com"
const defaults = {
  display_name: null,
  color: "#2563eb",
  launcher_position: "bottom-right",
  lead_capture: "off",
  handoff: false
}

const createAgent = (h: HarnessShape, key: string, body: Record<string, unknown> = {}) =>
  Effect.map(
    h.call("POST", "/v1/agents", {
      key,
      body: { type: "support", name: "Shop bot", allowed_origins: [shop], instructions: "Be terse. Secret plan.", ...body }
    }),
    (r) => {
      expect(r.status, r.text).toBe(201)
      return r.body.data
    }
  )

const config = (h: HarnessShape, agentId: string, key: string, headers: Record<string, string> = { origin: shop }) =>
  h.call("GET", `/widget/v1/agents/${agentId}/config`, { key, headers })

layer(testServer())("widget config", (it) => {
  describe("the agent's widget settings", () => {
    it.effect("a new agent has the defaults; create takes some; PATCH merges, lower-cases the colour, announces the change", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const plain = yield* createAgent(h, ws.secretTest)
        expect(plain.widget).toEqual(defaults)

        const made = yield* createAgent(h, ws.secretTest, { widget: { color: "#FF00aa", lead_capture: "on_escalation" } })
        expect(made.widget).toEqual({ ...defaults, color: "#ff00aa", lead_capture: "on_escalation" })

        const patched = yield* h.call("PATCH", `/v1/agents/${made.id}`, {
          key: ws.secretTest,
          body: { widget: { display_name: "  Ask Ana  ", handoff: true } }
        })
        expect(patched.status, patched.text).toBe(200)
        const after = { ...defaults, color: "#ff00aa", lead_capture: "on_escalation", display_name: "Ask Ana", handoff: true }
        expect(patched.body.data.widget).toEqual(after)
        expect((yield* h.call("GET", `/v1/agents/${made.id}`, { key: ws.secretTest })).body.data.widget).toEqual(after)
        const updated = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "agent.updated")
        expect(updated.map((e) => e.body.data.changes)).toEqual([
          { widget: { from: { ...after, display_name: null, handoff: false }, to: after } }
        ])

        // the same values again: nothing changes, nothing is announced; null gives the agent's name back
        yield* h.call("PATCH", `/v1/agents/${made.id}`, { key: ws.secretTest, body: { widget: { handoff: true } } })
        expect((yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "agent.updated")).toHaveLength(1)
        const cleared = yield* h.call("PATCH", `/v1/agents/${made.id}`, {
          key: ws.secretTest,
          body: { widget: { display_name: null } }
        })
        expect(cleared.body.data.widget.display_name).toBeNull()
        const created = (yield* eventsOf(ws.workspace.id)).find((e) => e.type === "agent.created" && e.body.data.agent.id === made.id)
        expect(created?.body.data.agent.widget).toEqual(made.widget)
      })
    )

    it.effect("refuses what is not a setting: 400 parameter_invalid naming it", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = yield* createAgent(h, ws.secretTest)
        const bad: ReadonlyArray<[unknown, string]> = [
          [{ color: "red" }, "widget.color"],
          [{ color: "#12345" }, "widget.color"],
          [{ color: "#1234567" }, "widget.color"],
          [{ launcher_position: "top-left" }, "widget.launcher_position"],
          [{ lead_capture: "always" }, "widget.lead_capture"],
          [{ handoff: "yes" }, "widget.handoff"],
          [{ display_name: "x".repeat(201) }, "widget.display_name"],
          [{ display_name: "   " }, "widget.display_name"],
          [{ colour: "#ffffff" }, "widget.colour"]
        ]
        for (const [widget, param] of bad) {
          const reply = yield* h.call("PATCH", `/v1/agents/${agent.id}`, { key: ws.secretTest, body: { widget } })
          expect(reply.status, JSON.stringify(widget)).toBe(400)
          expect(reply.body.error, JSON.stringify(widget)).toMatchObject({ code: "parameter_invalid", param })
        }
        const long = yield* h.call("POST", "/v1/agents", {
          key: ws.secretTest,
          body: { type: "support", name: "X", widget: { color: "#zzzzzz" } }
        })
        expect(long.status).toBe(400)
        expect((yield* h.call("GET", `/v1/agents/${agent.id}`, { key: ws.secretTest })).body.data.widget).toEqual(defaults)
      })
    )
  })

  describe("GET /widget/v1/agents/{agent_id}/config", () => {
    it.effect("what the widget shows, never the instructions or origins; the agent's name until a display name is set", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = yield* createAgent(h, ws.secretTest, { welcome_message: "Hi! How can I help?" })
        const reply = yield* config(h, agent.id, ws.widgetTest)
        expect(reply.status, reply.text).toBe(200)
        expect(reply.body.data).toEqual({
          object: "widget_config",
          agent_id: agent.id,
          name: "Shop bot",
          welcome_message: "Hi! How can I help?",
          color: "#2563eb",
          launcher_position: "bottom-right",
          lead_capture: "off",
          handoff: false
        })
        expect(reply.text).not.toContain("Secret plan")
        expect(reply.text).not.toContain("allowed_origins")
        expect(reply.headers.get("access-control-allow-origin")).toBe(shop)
        expect(reply.headers.get("access-control-expose-headers")).toContain("ETag")
        expect(reply.headers.get("cache-control")).toBe("private, max-age=60, must-revalidate")
        expect(reply.headers.get("vary")).toMatch(/Origin/)

        yield* h.call("PATCH", `/v1/agents/${agent.id}`, {
          key: ws.secretTest,
          body: { welcome_message: null, widget: { display_name: "Ana", color: "#00AA00", launcher_position: "bottom-left", lead_capture: "before_first_message", handoff: true } }
        })
        expect((yield* config(h, agent.id, ws.widgetTest)).body.data).toEqual({
          object: "widget_config",
          agent_id: agent.id,
          name: "Ana",
          welcome_message: null,
          color: "#00aa00",
          launcher_position: "bottom-left",
          lead_capture: "before_first_message",
          handoff: true
        })
      })
    )

    it.effect("ETag: 304 without a body while unchanged, a new ETag once a PATCH changes what it shows", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = yield* createAgent(h, ws.secretTest)
        const first = yield* config(h, agent.id, ws.widgetTest)
        const etag = first.headers.get("etag")!
        expect(etag).toMatch(/^"[\w-]+"$/)
        const again = yield* config(h, agent.id, ws.widgetTest, { origin: shop, "if-none-match": etag })
        expect(again.status).toBe(304)
        expect(again.text).toBe("")
        expect(again.headers.get("etag")).toBe(etag)
        expect(again.headers.get("access-control-allow-origin")).toBe(shop)
        expect((yield* config(h, agent.id, ws.widgetTest, { origin: shop, "if-none-match": `W/${etag}` })).status).toBe(304)
        expect((yield* config(h, agent.id, ws.widgetTest, { origin: shop, "if-none-match": '"other"' })).status).toBe(200)

        // a change the widget does not show (its instructions) keeps the ETag; one it shows changes it
        yield* h.call("PATCH", `/v1/agents/${agent.id}`, { key: ws.secretTest, body: { instructions: "Be kind." } })
        expect((yield* config(h, agent.id, ws.widgetTest, { origin: shop, "if-none-match": etag })).status).toBe(304)
        yield* h.call("PATCH", `/v1/agents/${agent.id}`, { key: ws.secretTest, body: { widget: { color: "#000000" } } })
        const changed = yield* config(h, agent.id, ws.widgetTest, { origin: shop, "if-none-match": etag })
        expect(changed.status).toBe(200)
        expect(changed.body.data.color).toBe("#000000")
        expect(changed.headers.get("etag")).not.toBe(etag)
      })
    )

    it.effect("refusals: a foreign origin 403, a secret key 403, an unknown or deleted agent 404", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const other = yield* h.seed()
        const agent = yield* createAgent(h, ws.secretTest)

        const foreign = yield* config(h, agent.id, ws.widgetTest, { origin: "https://evil.example.com" })
        expect(foreign.status).toBe(403)
        expect(foreign.body.error).toMatchObject({ code: "origin_not_allowed", param: "Origin" })
        expect(foreign.headers.get("access-control-allow-origin")).toBeNull()

        const secret = yield* config(h, agent.id, ws.secretTest)
        expect(secret.status).toBe(403)
        expect(secret.body.error).toMatchObject({ code: "key_scope_mismatch" })

        const pre = yield* h.call("OPTIONS", `/widget/v1/agents/${agent.id}/config`, {
          headers: { origin: shop, "access-control-request-method": "GET", "access-control-request-headers": "authorization, if-none-match" }
        })
        expect(pre.status).toBe(204)
        expect(pre.headers.get("access-control-allow-methods")).toBe("GET")
        expect(pre.headers.get("access-control-allow-headers")!.toLowerCase()).toContain("if-none-match")

        // another workspace's key does not see it
        const elsewhere = yield* config(h, agent.id, other.widgetTest)
        expect(elsewhere.status).toBe(404)
        expect(elsewhere.body.error).toMatchObject({ type: "invalid_request", code: "resource_missing", param: "agent_id" })

        yield* h.call("DELETE", `/v1/agents/${agent.id}`, { key: ws.secretTest })
        const gone = yield* config(h, agent.id, ws.widgetTest, {})
        expect(gone.status).toBe(404)
        expect(gone.body.error).toMatchObject({ code: "resource_missing", param: "agent_id" })
        expect(gone.body.meta.request_id).toMatch(/^req_/)
      })
    )
  })
})
