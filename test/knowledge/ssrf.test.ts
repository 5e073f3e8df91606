/**
 * SSRF without `ALLOW_PRIVATE_URLS`: loopback, private, link-local and local
 * names are refused when a source is created (single and batch), and a public
 * page that redirects to a private address fails the source without the
 * private address ever being requested.
 *
 * A public web server cannot be reached from a test, so here 127.0.0.2 (a
 * loopback alias Linux routes locally) stands in for a public address: the
 * address check is wrapped to call it public, and nothing else.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { vi } from "vitest"
import { Harness, testServer } from "../support/harness.js"
import { createAgent, eventsOfType, html, serveSite, waitSettled } from "./support.js"

vi.mock("../../layers/fetcher/Addresses.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../layers/fetcher/Addresses.js")>()
  return { ...actual, isPublicAddress: (ip: string) => ip === "127.0.0.2" || actual.isPublicAddress(ip) }
})

layer(testServer({ allowPrivateUrls: false }))("ingestion SSRF", (it) => {
  it.effect("loopback, private, link-local and local names are refused at creation", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      for (const url of [
        "http://127.0.0.1:8080/",
        "http://10.1.2.3/",
        "http://192.168.0.1/admin",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://localhost:3000/"
      ]) {
        const r = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, { key: ws.secretTest, body: { type: "url", url } })
        expect([r.status, r.body.error.code, r.body.error.param], url).toEqual([400, "url_not_allowed", "url"])
      }
      const batch = yield* h.call("POST", `/v1/agents/${agentId}/knowledge/batch`, {
        key: ws.secretTest,
        body: { urls: ["http://127.0.0.2/ok", "http://169.254.169.254/"] }
      })
      expect([batch.status, batch.body.error.code, batch.body.error.param]).toEqual([400, "url_not_allowed", "urls[1]"])
      const list = yield* h.call("GET", `/v1/agents/${agentId}/knowledge`, { key: ws.secretTest })
      expect(list.body.data).toHaveLength(0)
    })
  )

  it.effect("a redirect to a private address fails the source; the private address is never requested", () =>
    Effect.gen(function* () {
      const internal = yield* serveSite((_req, res) => html(res, "<html><body><p>secret</p></body></html>"))
      const front = yield* serveSite((_req, res) => {
        res.writeHead(302, { location: `${internal.origin}/secret` })
        res.end()
      }, "127.0.0.2")
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "url", url: `${front.origin}/start` }
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      const [done] = yield* waitSettled(h, ws.secretTest, agentId, [created.body.data.id])
      expect(done).toMatchObject({ status: "failed", error_code: "url_not_allowed", attempts: 1 })
      expect(front.hits.map((hit) => hit.path)).toEqual(["/start"])
      expect(internal.hits).toHaveLength(0)
      const failed = yield* eventsOfType(ws.workspace.id, "knowledge.source.failed")
      expect(failed[0].data.error.code).toBe("url_not_allowed")
    }).pipe(Effect.scoped)
  )
})
