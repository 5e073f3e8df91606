/**
 * `npm run cli -- crawl`: the real CLI (a child process, not a terminal, so a plain line per change) against the
 * real server on the wall clock and a local site: it starts the crawl, follows it until every page it kept is
 * indexed, says what was skipped and why, and exits 0; a site whose robots.txt answers 503 exits 1 with why.
 */
import { expect, it as plain, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { Crawl } from "../../schema/Crawls.js"
import { crawlSettled } from "../../schema/CrawlProgress.js"
import { crawlLine } from "../../src/cli/Crawl.js"
import { runCli } from "../support/cli.js"
import { Harness, testServer } from "../support/harness.js"
import { loopbackServer } from "../support/loopback.js"
import { createAgent } from "../knowledge/support.js"

const crawlOf = (status: Crawl["status"], pages: Partial<Crawl["pages"]>): Crawl => ({
  id: "crl_x" as Crawl["id"],
  object: "crawl",
  agent_id: "agt_x" as Crawl["agent_id"],
  url: "https://help.example.com/",
  sitemap_url: null,
  keep_to_path: false,
  limit: 500,
  status,
  pages: {
    discovered: 0, queued: 0, kept: 0, indexed: 0, indexing: 0, failed: 0,
    skipped: { disallowed: 0, off_origin: 0, duplicate: 0, over_limit: 0, not_html: 0, noindex: 0, known: 0 },
    ...pages
  },
  error: null,
  schedule: "off",
  next_run_at: null,
  scheduled_by: null,
  created_at: "2026-11-27T00:00:00.000Z",
  started_at: null,
  finished_at: null
})

plain("a progress line: the share of pages done, the counts, the skips by reason; done once ended with nothing indexing", () => {
  const running = crawlOf("running", {
    kept: 6, indexed: 3, indexing: 3, failed: 1, queued: 4,
    skipped: { disallowed: 2, off_origin: 0, duplicate: 1, over_limit: 0, not_html: 0, noindex: 0, known: 0 }
  })
  expect(crawlLine(running, 10)).toBe("[####------] running: 6 kept, 3 indexed, 3 indexing, 1 failed, 4 queued; skipped disallowed 2, duplicate 1")
  expect(crawlSettled(running)).toBe(false)
  expect(crawlSettled({ ...running, status: "completed" })).toBe(false)
  expect(crawlSettled(crawlOf("completed", { kept: 6, indexed: 6 }))).toBe(true)
  expect(crawlLine(crawlOf("completed", { kept: 6, indexed: 6 }), 10)).toMatch(/^\[##########\] completed: /)
})

layer(testServer(), { excludeTestServices: true })("cli crawl", (it) => {
  it.effect(
    "starts the crawl, follows it until every kept page is indexed, says what was skipped, exits 0; with a schedule; a refused crawl exits 1",
    () =>
      Effect.gen(function* () {
        const site = yield* loopbackServer(({ path }, res) => {
          const html = (body: string) => {
            res.writeHead(200, { "content-type": "text/html" })
            res.end(`<html><head><title>${path}</title></head><body><article><p>Page ${path} tells how parcels are sent.</p>${body}</article></body></html>`)
          }
          if (path === "/robots.txt") return void res.writeHead(404).end()
          if (path === "/") return html(`<a href="/a">a</a> <a href="/b">b</a> <a href="/photo.jpg">photo</a>`)
          if (path === "/a" || path === "/b") return html("")
          res.writeHead(404).end()
        })
        const down = yield* loopbackServer((_request, res) => void res.writeHead(503).end())
        const h = yield* Harness
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        const env = { API_KEY: ws.secretTest }
        const ok = yield* runCli(["crawl", "--agent", agentId, "--site", `${site.origin}/`, "--url", h.url, "--interval-ms", "200"], env)
        expect(ok.stdout, ok.stderr).toMatch(new RegExp(`^Crawl crl_\\w+ of ${site.origin}/ for ${agentId} \\(at most 50 pages\\)$`, "m"))
        expect(ok.stdout).toContain("[####################] completed: 3 kept, 3 indexed, 0 indexing, 0 failed, 0 queued; skipped not_html 1")
        expect(ok.stdout).toContain("Done: completed, 3 of 4 pages met indexed")
        expect(ok.code).toBe(0)

        // crawled again weekly: the schedule is said, and the crawl keeps it
        const weekly = yield* runCli(
          ["crawl", "--agent", agentId, "--site", `${site.origin}/`, "--schedule", "weekly", "--url", h.url, "--interval-ms", "200"],
          env
        )
        expect(weekly.stdout, weekly.stderr).toMatch(/ \(at most 50 pages\); again weekly, next at \d{4}-\d\d-\d\dT/)
        expect(weekly.code).toBe(0)
        const crawls = yield* h.call("GET", `/v1/agents/${agentId}/crawls`, { key: ws.secretTest })
        expect(crawls.body.data[0]).toMatchObject({ schedule: "weekly" })

        const refused = yield* runCli(["crawl", "--agent", agentId, "--site", `${down.origin}/`, "--url", h.url, "--interval-ms", "200"], env)
        expect(refused.stdout).toContain("failed:")
        expect(refused.stderr + refused.stdout).toContain("robots_unreadable")
        expect(refused.code).toBe(1)
      }).pipe(Effect.scoped),
    120_000
  )
})
