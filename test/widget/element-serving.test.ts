/**
 * How `<service-chat>`'s script and demo page are served (no browser needed):
 * the script as public, cacheable JavaScript (ETag/304, CORS for any origin,
 * no key) within its gzipped budget, the build writing the same bytes; the
 * demo page (sandbox widget keys only, escaped, a strict CSP); and the widget
 * read of a conversation with its messages the component draws after a reload.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chatElementPath, gzippedSize, maxChatScriptGzipBytes, writeChatElementBundle } from "../../src/widget/ElementBundle.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"

const shop = "https://shop.example.com"

const createAgent = (h: HarnessShape, key: string, allowed_origins: ReadonlyArray<string> = [shop]) =>
  Effect.map(h.call("POST", "/v1/agents", { key, body: { type: "support", name: "Chat bot", allowed_origins } }), (r) => {
    expect(r.status, r.text).toBe(201)
    return r.body.data.id as string
  })

layer(testServer())("chat component serving", (it) => {
  it.effect("serves the script as public, cacheable JavaScript within 30 KB gzipped: ETag, 304, CORS for any origin, no key", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const first = yield* h.call("GET", chatElementPath, { headers: { origin: "https://anywhere.example" } })
      expect(first.status).toBe(200)
      expect(first.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
      expect(first.headers.get("cache-control")).toBe("public, max-age=300, must-revalidate")
      expect(first.headers.get("access-control-allow-origin")).toBe("*")
      expect(first.headers.get("cross-origin-resource-policy")).toBe("cross-origin")
      const etag = first.headers.get("etag")!
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
      expect(first.text).toContain('customElements.define("service-chat"')
      expect(first.text).not.toMatch(/^\s*import /m)
      // no <style> element and no style attribute: a strict CSP applies to neither of the adopted sheets
      expect(first.text).not.toMatch(/createElement\("style"\)|setAttribute\("style"/)
      expect(first.text).toContain("adoptedStyleSheets")
      expect(gzippedSize(new TextEncoder().encode(first.text))).toBeLessThanOrEqual(maxChatScriptGzipBytes)

      const again = yield* h.call("GET", chatElementPath, { headers: { "if-none-match": etag } })
      expect(again.status).toBe(304)
      expect(again.text).toBe("")

      const dir = mkdtempSync(join(tmpdir(), "chat-element-"))
      const written = yield* writeChatElementBundle(join(dir, "service-chat-element.esm.js"))
      expect(readFileSync(written.path, "utf8")).toBe(first.text)
      expect(written.gzipped).toBeLessThanOrEqual(maxChatScriptGzipBytes)
      rmSync(dir, { recursive: true })
    })
  )

  it.effect("the demo page: a sandbox widget key, everything escaped, no inline script; refusals as a page for a browser, else in the envelope", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const browser = { accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8" }
      const demo = (query: string, headers: Record<string, string> = browser) => h.call("GET", `/demo/chat${query}`, { headers })

      const ok = yield* demo(`?agent=${agentId}&key=${ws.widgetTest}`)
      expect(ok.status).toBe(200)
      expect(ok.headers.get("content-type")).toBe("text/html; charset=utf-8")
      const csp = ok.headers.get("content-security-policy")!
      expect(csp).toContain("script-src 'self'")
      expect(csp).not.toContain("unsafe-inline")
      expect(ok.text).toContain(`<script type="module" src="${chatElementPath}"></script>`)
      expect(ok.text).toContain(`<service-chat api-key="${ws.widgetTest}" agent-id="${agentId}" open></service-chat>`)
      expect(ok.text).not.toMatch(/<script>|<style>|style=/)
      // the agent allows only the shop: the page says chatting from here would be refused
      expect(ok.text).toContain("allowed_origins does not list")

      const noAgent = yield* demo(`?key=${ws.widgetTest}`)
      expect(noAgent.status).toBe(400)
      expect(noAgent.text).toContain("?agent=agt_")
      const noKey = yield* demo(`?agent=${agentId}`)
      expect(noKey.status).toBe(401)
      expect(noKey.headers.get("vary")).toBe("Accept")
      for (const key of [ws.secretTest, ws.formsTest, "<script>"]) {
        const refused = yield* demo(`?agent=${agentId}&key=${encodeURIComponent(key)}`)
        expect(refused.status, key).toBe(404)
        expect(refused.text).not.toContain("<script>")
      }
      const badId = yield* demo(`?agent=%22%3E%3Cscript%3E&key=${ws.widgetTest}`)
      expect(badId.status).toBe(404)
      expect(badId.text).not.toContain("<script>")
      const api = yield* demo(`?agent=${agentId}`, { accept: "application/json" })
      expect(api.status).toBe(401)
      expect(api.body.error.code).toBe("missing_authorization")
    })
  )

  it.effect("GET /widget/v1/agents/{a}/conversations/{c}: the conversation with its messages, for its agent and origins only", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const otherAgent = yield* createAgent(h, ws.secretTest)
      const widget = (method: string, path: string, body?: unknown, origin = shop) =>
        h.call(method, path, { key: ws.widgetTest, headers: { origin }, ...(body === undefined ? {} : { body }) })
      const opened = yield* widget("POST", `/widget/v1/agents/${agentId}/conversations`, {})
      const id = opened.body.data.id as string
      const sent = yield* widget("POST", `/widget/v1/agents/${agentId}/conversations/${id}/messages`, { message: "Hello there", stream: false })
      expect(sent.status, sent.text).toBe(201)

      const read = yield* widget("GET", `/widget/v1/agents/${agentId}/conversations/${id}`)
      expect(read.status, read.text).toBe(200)
      expect(read.headers.get("access-control-allow-origin")).toBe(shop)
      expect(read.body.data).toMatchObject({ object: "conversation", id, agent_id: agentId, channel: "widget", status: "open" })
      expect(read.body.data.messages.map((m: any) => m.role)).toEqual(["user", "assistant"])
      expect(read.body.data.messages[0].content).toBe("Hello there")

      const elsewhere = yield* widget("GET", `/widget/v1/agents/${otherAgent}/conversations/${id}`)
      expect(elsewhere.status).toBe(404)
      expect(elsewhere.body.error.param).toBe("conversation_id")
      const foreign = yield* widget("GET", `/widget/v1/agents/${agentId}/conversations/${id}`, undefined, "https://evil.example")
      expect(foreign.status).toBe(403)
      expect(foreign.body.error.code).toBe("origin_not_allowed")
      const secret = yield* h.call("GET", `/widget/v1/agents/${agentId}/conversations/${id}`, { key: ws.secretTest, headers: { origin: shop } })
      expect(secret.status).toBe(403)
    })
  )
})
