/**
 * Crawls through the API, against a local site the test serves (real HTTP on 127.0.0.1): a crawl keeps each
 * page of the site once as a `url` source, indexed without fetching the page again, reports every address it
 * skipped with its reason and the page it could not read, and ends with `crawl.completed`; a crawl run again
 * from its start keeps and counts nothing twice; a robots.txt that answers 503 fails the crawl with
 * `crawl.failed`; a second crawl of a site while one waits is refused, and a cancel frees the site; bad
 * requests get their documented errors.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { ServerResponse } from "node:http"
import { JobQueue } from "../../layers/JobQueue.js"
import { CRAWL_QUEUE } from "../../src/crawls/Queues.js"
import { eventually } from "../support/eventually.js"
import { Harness, testServer } from "../support/harness.js"
import { loopbackServer } from "../support/loopback.js"
import { createAgent, eventsOfType, waitSettled } from "../knowledge/support.js"

const page = (res: ServerResponse, title: string, body: string, head = "") => {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
  res.end(`<!doctype html><html><head><title>${title}</title>${head}</head><body><article><h1>${title}</h1>${body}</article></body></html>`)
}
const links = (...hrefs: Array<string>) => hrefs.map((h) => `<a href="${h}">${h}</a>`).join(" ")
const text = (topic: string) =>
  `<p>Our ${topic} policy explains how every ${topic} request is handled by the support team within two days.</p>`

/** What a test may change on the help centre between two crawls: the returns page's text, a new page. */
interface Edits {
  returns: string
  newPage: boolean
}

/** A small help centre: robots.txt, a sitemap, and each kind of address a crawl meets. */
const helpCentreWith = (edits: Edits) => Effect.gen(function* () {
  let origin = ""
  const server = yield* loopbackServer(({ path }, res) => {
  switch (new URL(path, "http://x").pathname) {
    case "/robots.txt":
      res.writeHead(200, { "content-type": "text/plain" })
      return void res.end("User-agent: *\nDisallow: /private\n\nSitemap: /sitemap.xml\n")
    case "/sitemap.xml":
      res.writeHead(200, { "content-type": "application/xml" })
      return void res.end(`<urlset><url><loc>${origin}/a</loc></url><url><loc>${origin}/b</loc></url><url><loc>${origin}/private/x</loc></url></urlset>`)
    case "/":
      return page(
        res,
        "Help centre",
        text("help") +
          links("/a", "/c", "/a?utm_source=mail", "/logo.png", "https://elsewhere.example/", "/canon", "/draft", ...(edits.newPage ? ["/e"] : []))
      )
    case "/a":
      return page(res, "Shipping", text("shipping"))
    case "/b":
      return page(res, "Returns", text(edits.returns))
    case "/e":
      return edits.newPage ? page(res, "Gift cards", text("gift card")) : void res.writeHead(404).end()
    case "/c":
      return page(res, "Payments", text("payments") + links("/d"))
    case "/d":
      return page(res, "Accounts", text("account") + links("/broken"))
    case "/canon":
      return page(res, "Shipping (print)", text("shipping"), `<link rel="canonical" href="/a">`)
    case "/draft":
      return page(res, "Draft", text("draft"), `<meta name="robots" content="noindex">`)
    case "/broken":
      res.writeHead(500, { "content-type": "text/plain" })
      return void res.end("oops")
    default:
      res.writeHead(404).end()
  }
  })
  origin = server.origin
  return server
})
const helpCentre = helpCentreWith({ returns: "returns", newPage: false })

layer(testServer(), { excludeTestServices: true })("crawls", (it) => {
  it.effect("a site crawled: each page kept once and indexed from the bytes read, every skip reported, crawl.completed", () =>
    Effect.gen(function* () {
      const site = yield* helpCentre
      const o = site.origin
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/crawls`, { key: ws.secretTest, body: { url: `${o}/` } })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      expect(created.body.data).toMatchObject({ object: "crawl", agent_id: agentId, url: `${o}/`, status: "queued", limit: 50 })
      const id = created.body.data.id as string
      expect(id).toMatch(/^crl_/)

      const crawl = yield* eventually(
        Effect.map(h.call("GET", `/v1/agents/${agentId}/crawls/${id}`, { key: ws.secretTest }), (r) => r.body.data),
        (c) => c.status === "completed" && c.pages.indexing === 0,
        { tries: 3000, label: "crawl completed and indexed" }
      )
      expect(crawl.pages).toEqual({
        discovered: 11,
        queued: 0,
        kept: 5,
        indexed: 5,
        indexing: 0,
        failed: 1,
        skipped: { disallowed: 1, off_origin: 1, duplicate: 1, over_limit: 0, not_html: 1, noindex: 1, known: 0 }
      })
      expect(crawl.error).toBeNull()

      const skipped = yield* h.call("GET", `/v1/agents/${agentId}/crawls/${id}/pages?outcome=skipped`, { key: ws.secretTest })
      expect(Object.fromEntries(skipped.body.data.map((p: any) => [p.url, p.reason]))).toEqual({
        [`${o}/private/x`]: "disallowed",
        [`${o}/logo.png`]: "not_html",
        "https://elsewhere.example/": "off_origin",
        [`${o}/canon`]: "duplicate",
        [`${o}/draft`]: "noindex"
      })
      const unreadable = yield* h.call("GET", `/v1/agents/${agentId}/crawls/${id}/pages?outcome=unreadable`, { key: ws.secretTest })
      expect(unreadable.body.data.map((p: any) => [p.url, p.reason])).toEqual([[`${o}/broken`, "the page answered 500"]])

      const kept = yield* h.call("GET", `/v1/agents/${agentId}/crawls/${id}/pages?outcome=kept&limit=100`, { key: ws.secretTest })
      const sources = yield* h.call("GET", `/v1/agents/${agentId}/knowledge?limit=100`, { key: ws.secretTest })
      expect(sources.body.data.map((s: any) => [s.source_ref, s.status, s.title]).sort()).toEqual(
        [
          [`${o}/`, "indexed", "Help centre"],
          [`${o}/a`, "indexed", "Shipping"],
          [`${o}/b`, "indexed", "Returns"],
          [`${o}/c`, "indexed", "Payments"],
          [`${o}/d`, "indexed", "Accounts"]
        ].sort()
      )
      expect(new Set(kept.body.data.map((p: any) => p.source_id))).toEqual(new Set(sources.body.data.map((s: any) => s.id)))
      // every page fetched once: by the crawl, never again by the pipeline
      const fetches = site.received.map((r) => r.path).filter((p) => !p.endsWith(".txt") && !p.endsWith(".xml"))
      expect(fetches.length).toBe(new Set(fetches).size)

      const completed = yield* eventsOfType(ws.workspace.id, "crawl.completed")
      expect(completed.map((e) => [e.data.crawl.id, e.data.crawl.status, e.data.crawl.pages.kept])).toEqual([[id, "completed", 5]])
      const listed = yield* h.call("GET", `/v1/agents/${agentId}/crawls`, { key: ws.secretTest })
      expect(listed.body.data.map((c: any) => c.id)).toEqual([id])
    }).pipe(Effect.scoped)
  )

  it.effect("a crawl run again from its start (a restart, a lease lost) keeps no page twice and counts none twice", () =>
    Effect.gen(function* () {
      const site = yield* helpCentre
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/crawls`, { key: ws.secretTest, body: { url: `${site.origin}/` } })
      const id = created.body.data.id as string
      const read = Effect.map(h.call("GET", `/v1/agents/${agentId}/crawls/${id}`, { key: ws.secretTest }), (r) => r.body.data)
      const first = yield* eventually(read, (c) => c.status === "completed" && c.pages.indexing === 0, { tries: 3000, label: "first run" })
      // what a process that died mid-crawl leaves: the crawl running and its job to run again
      const sql = yield* SqlClient.SqlClient
      yield* Effect.orDie(sql`update crawls set status = 'running', finished_at = null where id = ${id}`)
      const queue = yield* JobQueue
      yield* queue.enqueue({ queue: CRAWL_QUEUE, key: new URL(site.origin).origin, payload: { crawlId: id } })
      yield* queue.wake(CRAWL_QUEUE)
      const again = yield* eventually(read, (c) => c.status === "completed", { tries: 3000, label: "second run" })
      expect(again.pages).toEqual(first.pages)
      const sources = yield* h.call("GET", `/v1/agents/${agentId}/knowledge?limit=100`, { key: ws.secretTest })
      expect(sources.body.data).toHaveLength(5)
    }).pipe(Effect.scoped)
  )

  it.effect("crawled again: the known pages refreshed from the bytes read (a changed one re-indexed), a new page kept", () =>
    Effect.gen(function* () {
      const edits: Edits = { returns: "returns", newPage: false }
      const site = yield* helpCentreWith(edits)
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const crawlOnce = Effect.gen(function* () {
        const created = yield* h.call("POST", `/v1/agents/${agentId}/crawls`, { key: ws.secretTest, body: { url: `${site.origin}/` } })
        expect(created.status, created.text).toBe(201)
        return yield* eventually(
          Effect.map(h.call("GET", `/v1/agents/${agentId}/crawls/${created.body.data.id}`, { key: ws.secretTest }), (r) => r.body.data),
          (c) => c.status === "completed" && c.pages.indexing === 0,
          { tries: 3000, label: "crawl completed and indexed" }
        )
      })
      yield* crawlOnce
      const before = (yield* h.call("GET", `/v1/agents/${agentId}/knowledge?limit=100`, { key: ws.secretTest })).body.data
      expect(before).toHaveLength(5)
      const returns = before.find((s: any) => s.source_ref === `${site.origin}/b`)

      edits.returns = "exchange"
      edits.newPage = true
      const readBefore = site.received.length
      const again = yield* crawlOnce
      expect(again.pages).toMatchObject({ kept: 1, indexed: 1, skipped: { known: 5 } })
      const sources = yield* eventually(
        Effect.map(h.call("GET", `/v1/agents/${agentId}/knowledge?limit=100`, { key: ws.secretTest }), (r) => r.body.data),
        (all: Array<any>) => all.length === 6 && all.every((s) => s.status === "indexed" && s.refresh.status === "idle"),
        { tries: 3000, label: "the known pages refreshed" }
      )
      expect(sources.map((s: any) => new URL(s.source_ref).pathname).sort()).toEqual(["/", "/a", "/b", "/c", "/d", "/e"])
      const refreshedReturns = sources.find((s: any) => s.id === returns.id)
      expect(refreshedReturns.refresh.changed_at).not.toBeNull()
      for (const s of sources.filter((s: any) => s.id !== returns.id && new URL(s.source_ref).pathname !== "/e")) {
        expect(s.refresh.checked_at, s.source_ref).not.toBeNull()
        expect(s.refresh.changed_at, s.source_ref).toBeNull()
      }
      expect((yield* eventsOfType(ws.workspace.id, "knowledge.source.updated")).map((e) => e.data.source.id)).toEqual([returns.id])
      // the second crawl read each page once, and its refreshes asked for none again
      const pagesRead = site.received.slice(readBefore).map((r) => r.path).filter((p) => !p.endsWith(".txt") && !p.endsWith(".xml"))
      expect(pagesRead.length).toBe(new Set(pagesRead).size)
    }).pipe(Effect.scoped)
  )

  it.effect("a crawl that reached a bound (more sitemaps than it reads) completes, its error saying which, with crawl.completed", () =>
    Effect.gen(function* () {
      let origin = ""
      const site = yield* loopbackServer(({ path }, res) => {
        if (path === "/robots.txt") return void res.writeHead(404).end()
        if (path === "/sitemap.xml") {
          res.writeHead(200, { "content-type": "application/xml" })
          return void res.end(`<sitemapindex>${Array.from({ length: 120 }, (_, i) => `<sitemap><loc>${origin}/s${i}.xml</loc></sitemap>`).join("")}</sitemapindex>`)
        }
        if (path.endsWith(".xml")) {
          res.writeHead(200, { "content-type": "application/xml" })
          return void res.end("<urlset></urlset>")
        }
        return page(res, "Home", text("home"))
      })
      origin = site.origin
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/crawls`, { key: ws.secretTest, body: { url: `${origin}/` } })
      const crawl = yield* eventually(
        Effect.map(h.call("GET", `/v1/agents/${agentId}/crawls/${created.body.data.id}`, { key: ws.secretTest }), (r) => r.body.data),
        (c) => c.status === "completed",
        { tries: 3000, label: "crawl completed" }
      )
      expect(crawl.error).toEqual({
        code: "discovery_capped",
        message: "the site names more than 100 sitemaps, the most a crawl reads: the others were not read"
      })
      expect(crawl.pages.kept).toBe(1)
      expect(site.received.filter((r) => r.path.endsWith(".xml"))).toHaveLength(100)
      const completed = yield* eventsOfType(ws.workspace.id, "crawl.completed")
      expect(completed.map((e) => [e.data.crawl.id, e.data.crawl.error.code])).toEqual([[created.body.data.id, "discovery_capped"]])
    }).pipe(Effect.scoped)
  )

  it.effect("a page the agent has under the address that redirects to it is known to a crawl reaching it, not kept twice", () =>
    Effect.gen(function* () {
      const site = yield* loopbackServer(({ path }, res) => {
        switch (path) {
          case "/robots.txt":
          case "/sitemap.xml":
            return void res.writeHead(404).end()
          case "/":
            return page(res, "Home", text("home") + links("/hours"))
          case "/hours":
            res.writeHead(301, { location: "/opening-hours" })
            return void res.end()
          case "/opening-hours":
            return page(res, "Opening hours", text("opening hours"))
          default:
            return void res.writeHead(404).end()
        }
      })
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const added = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, { key: ws.secretTest, body: { type: "url", url: `${site.origin}/hours` } })
      expect(added.status, added.text).toBe(201)
      yield* waitSettled(h, ws.secretTest, agentId, [added.body.data.id])
      const created = yield* h.call("POST", `/v1/agents/${agentId}/crawls`, { key: ws.secretTest, body: { url: `${site.origin}/` } })
      const crawl = yield* eventually(
        Effect.map(h.call("GET", `/v1/agents/${agentId}/crawls/${created.body.data.id}`, { key: ws.secretTest }), (r) => r.body.data),
        (c) => c.status === "completed",
        { tries: 3000, label: "crawl completed" }
      )
      expect(crawl.pages).toMatchObject({ kept: 1, skipped: { known: 1 } })
      const sources = yield* h.call("GET", `/v1/agents/${agentId}/knowledge?limit=100`, { key: ws.secretTest })
      expect(sources.body.data.map((s: any) => new URL(s.source_ref).pathname).sort()).toEqual(["/", "/hours"])
    }).pipe(Effect.scoped)
  )

  it.effect("robots.txt answering 503 fails the crawl (robots_unreadable) with crawl.failed, and no page is read", () =>
    Effect.gen(function* () {
      const site = yield* loopbackServer((_request, res) => {
        res.writeHead(503, { "content-type": "text/plain" })
        res.end("down")
      })
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/crawls`, { key: ws.secretTest, body: { url: `${site.origin}/docs/` } })
      expect(created.status).toBe(201)
      const crawl = yield* eventually(
        Effect.map(h.call("GET", `/v1/agents/${agentId}/crawls/${created.body.data.id}`, { key: ws.secretTest }), (r) => r.body.data),
        (c) => c.status === "failed",
        { tries: 3000, label: "crawl failed" }
      )
      expect(crawl.error.code).toBe("robots_unreadable")
      expect(site.received.map((r) => r.path)).toEqual(["/robots.txt"])
      const failed = yield* eventsOfType(ws.workspace.id, "crawl.failed")
      expect(failed.map((e) => [e.data.crawl.id, e.data.error.code])).toEqual([[created.body.data.id, "robots_unreadable"]])
    }).pipe(Effect.scoped)
  )

  it.effect("one crawl of a site at a time per agent (409 crawl_in_progress); a cancel frees the site", () =>
    Effect.gen(function* () {
      const release = yield* Deferred.make<void>()
      // robots.txt answers only once the test lets it: the first crawl stays running meanwhile
      const site = yield* loopbackServer((_request, res) => {
        Effect.runFork(
          Effect.andThen(Deferred.await(release), () => {
            res.writeHead(404).end()
          })
        )
      })
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const body = { url: `${site.origin}/` }
      const first = yield* h.call("POST", `/v1/agents/${agentId}/crawls`, { key: ws.secretTest, body })
      expect(first.status).toBe(201)
      const second = yield* h.call("POST", `/v1/agents/${agentId}/crawls`, { key: ws.secretTest, body })
      expect([second.status, second.body.error.code, second.body.error.param]).toEqual([409, "crawl_in_progress", "url"])
      const canceled = yield* h.call("POST", `/v1/agents/${agentId}/crawls/${first.body.data.id}/cancel`, { key: ws.secretTest })
      expect([canceled.status, canceled.body.data.status]).toEqual([200, "canceled"])
      expect(canceled.body.data.finished_at).not.toBeNull()
      const again = yield* h.call("POST", `/v1/agents/${agentId}/crawls/${first.body.data.id}/cancel`, { key: ws.secretTest })
      expect(again.body.data).toEqual(canceled.body.data)
      const third = yield* h.call("POST", `/v1/agents/${agentId}/crawls`, { key: ws.secretTest, body })
      expect(third.status).toBe(201)
      yield* Deferred.succeed(release, undefined)
      const ended = yield* eventually(
        Effect.map(h.call("GET", `/v1/agents/${agentId}/crawls/${third.body.data.id}`, { key: ws.secretTest }), (r) => r.body.data),
        (c) => c.status === "completed",
        { tries: 3000, label: "third crawl completed" }
      )
      // the site answered 404 to everything: no rules, and the start page unreadable
      expect(ended.pages).toMatchObject({ kept: 0, failed: 1 })
      const first_ = yield* h.call("GET", `/v1/agents/${agentId}/crawls/${first.body.data.id}`, { key: ws.secretTest })
      expect(first_.body.data.status).toBe("canceled")
    }).pipe(Effect.scoped)
  )

  it.effect("bad requests: a missing or bad url, a sitemap elsewhere, a limit over the plan's cap, an unknown agent or crawl", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const post = (body: unknown, agent = agentId) => h.call("POST", `/v1/agents/${agent}/crawls`, { key: ws.secretTest, body })
      const code = (r: { status: number; body: any }) => [r.status, r.body.error?.code, r.body.error?.param]
      expect(code(yield* post({}))).toEqual([400, "parameter_missing", "url"])
      expect(code(yield* post({ url: "not a url" }))).toEqual([400, "parameter_invalid", "url"])
      expect(code(yield* post({ url: "ftp://example.com/" }))).toEqual([400, "parameter_invalid", "url"])
      expect(code(yield* post({ url: "http://127.0.0.1:9/", sitemap_url: "http://127.0.0.2:9/sitemap.xml" }))).toEqual([
        400,
        "parameter_invalid",
        "sitemap_url"
      ])
      const overCap = yield* post({ url: "http://127.0.0.1:9/", limit: 51 })
      expect(code(overCap)).toEqual([400, "parameter_invalid", "limit"])
      expect(overCap.body.error.message).toBe("limit must be 1 to 50 (the free plan's cap)")
      expect(code(yield* post({ url: "http://127.0.0.1:9/", limit: 0 }))).toEqual([400, "parameter_invalid", "limit"])
      expect(code(yield* post({ url: "http://127.0.0.1:9/" }, "agt_000000000000000000000000"))).toEqual([404, "resource_missing", "agent_id"])
      const unknown = yield* h.call("GET", `/v1/agents/${agentId}/crawls/crl_000000000000000000000000`, { key: ws.secretTest })
      expect(code(unknown)).toEqual([404, "resource_missing", "crawl_id"])
      const pro = yield* h.seed({ plan: "pro" })
      const proAgent = yield* createAgent(h, pro.secretTest)
      const big = yield* h.call("POST", `/v1/agents/${proAgent}/crawls`, {
        key: pro.secretTest,
        body: { url: "http://127.0.0.1:9/", limit: 5000 }
      })
      expect([big.status, big.body.data?.limit]).toEqual([201, 5000])
    })
  )
})
