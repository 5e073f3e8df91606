/**
 * Hostile documents, added as URL sources of one agent: malformed, empty, binary,
 * deep, wide, endless, a fake PDF. Each ends `indexed` or `failed` with an error
 * a person can read, the agent's next source is indexed after them, and while
 * the deepest page is read (in a decoder process) another workspace's API
 * answers as usual.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import type { ServerResponse } from "node:http"
import { eventually } from "../support/eventually.js"
import { PHASE_WRITE_DELAY } from "../../src/knowledge/PhaseWriter.js"
import { Harness, testServer } from "../support/harness.js"
import { createAgent, html, page, serveSite, source, waitSettled } from "./support.js"

const deep = (depth: number) => `<html><body><h1>Deep</h1>${"<div>".repeat(depth)}<p>At the bottom.</p>${"</div>".repeat(depth)}</body></html>`

const binary = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)

const send = (res: ServerResponse, contentType: string, body: string | Uint8Array) => {
  res.writeHead(200, { "content-type": contentType })
  res.end(body)
}

/** Writes for ever (until the client goes away): the fetcher must stop at its byte limit. */
const endless = (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "text/html" })
  const block = `<p>${"more ".repeat(200)}</p>`
  const write = () => {
    while (res.write(block)) if (res.destroyed) return
    res.once("drain", write)
  }
  res.on("close", () => res.removeAllListeners("drain"))
  write()
}

const corpus: ReadonlyArray<{
  readonly path: string
  readonly serve: (res: ServerResponse) => void
  readonly ends: readonly [status: string, code: string | null]
}> = [
  { path: "/malformed", serve: (res) => html(res, "<html><body><p>Unclosed <b>bold <i>words</p></div></span><<<>>> & more"), ends: ["indexed", null] },
  { path: "/empty", serve: (res) => html(res, ""), ends: ["failed", "empty_content"] },
  { path: "/binary", serve: (res) => send(res, "text/html", binary), ends: ["failed", "unsupported_type"] },
  { path: "/deep", serve: (res) => html(res, deep(60_000)), ends: ["indexed", null] },
  { path: "/wide", serve: (res) => html(res, `<html><body>${"<span>word</span>".repeat(20_000)}</body></html>`), ends: ["indexed", null] },
  { path: "/endless", serve: endless, ends: ["failed", "too_large"] },
  { path: "/fake.pdf", serve: (res) => send(res, "application/pdf", binary), ends: ["failed", "unsupported_type"] },
  { path: "/ordinary", serve: (res) => html(res, page("Returns", [["Refunds", "Refunds are paid within five days."]])), ends: ["indexed", null] }
]

layer(testServer())("hostile documents", (it) => {
  it.effect("each ends indexed or failed with an error text, and the agent's next source is indexed after them", () =>
    Effect.gen(function* () {
      const site = yield* serveSite((req, res) => {
        const document = corpus.find((c) => c.path === req.url)
        if (document === undefined) html(res, "gone", 404)
        else document.serve(res)
      })
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const ids: Array<string> = []
      for (const { path } of corpus) {
        const r = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, { key: ws.secretTest, body: { type: "url", url: `${site.origin}${path}` } })
        expect(r.status).toBe(201)
        ids.push(r.body.data.id)
      }
      const settled = yield* waitSettled(h, ws.secretTest, agentId, ids, 12_000)
      expect(settled.map((s: any) => [s.status, s.error_code])).toEqual(corpus.map((c) => c.ends))
      for (const s of settled.filter((s: any) => s.status === "failed")) {
        expect(s.error).toMatch(/^[^\n]{10,200}$/)
        expect(s.error).not.toMatch(/ at |Error:/)
      }
      expect(settled.find((s: any) => s.source_ref.endsWith("/deep"))!.chunk_count).toBeGreaterThan(0)
    }).pipe(Effect.scoped),
    180_000
  )

  it.effect("while the deepest page is read, another workspace's API answers", () =>
    Effect.gen(function* () {
      const site = yield* serveSite((_req, res) => html(res, deep(60_000).repeat(3)))
      const h = yield* Harness
      const reader = yield* h.seed()
      const other = yield* h.seed()
      const agentId = yield* createAgent(h, reader.secretTest)
      const otherAgent = yield* createAgent(h, other.secretTest)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, { key: reader.secretTest, body: { type: "url", url: `${site.origin}/deep` } })
      const read = source(h, reader.secretTest, agentId, created.body.data.id)
      // a phase is shown once it has lasted PHASE_WRITE_DELAY of the (test) clock
      const waited = Effect.zipRight(TestClock.adjust(PHASE_WRITE_DELAY), read)
      yield* eventually(waited, (s) => s.phase === "extracting", { tries: 2000, label: "extracting" })
      const answered = yield* h.call("GET", `/v1/agents/${otherAgent}`, { key: other.secretTest })
      expect(answered.status).toBe(200)
      // answered while the page was still being read: the parse did not hold the API up
      expect((yield* read).phase).toBe("extracting")
      const [done] = yield* waitSettled(h, reader.secretTest, agentId, [created.body.data.id], 6000)
      expect(done.status).toBe("indexed")
    }).pipe(Effect.scoped),
    120_000
  )
})
