/**
 * What one crawl reads of a site that serves too much, and a page reached by a redirect, against local sites
 * the test serves (real HTTP on 127.0.0.1, the service's Fetcher, the readers inline): robots.txt of more
 * rules than a crawl obeys refuses the crawl; an index of more sitemaps than a crawl reads, sitemaps of more
 * bytes, a sitemap of more addresses than a crawl meets each end the discovery there and say so; a redirect
 * to a page queued and not read yet is that page's read, so the page is fetched once.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ServerResponse } from "node:http"
import { gzipSync } from "node:zlib"
import * as Fetcher from "../../layers/Fetcher.js"
import { layerInline } from "../../layers/extractor/Inline.js"
import { AppConfig } from "../../src/Config.js"
import { maxAddressesMet, maxRobotsRules, maxSitemapBytes, maxSitemapBytesPerCrawl, maxSitemaps } from "../../schema/Crawls.js"
import { type CrawledPage, type CrawlSkip, crawl } from "../../src/crawls/Crawler.js"
import { testConfig } from "../support/harness.js"
import { loopbackServer } from "../support/loopback.js"

const services = Layer.mergeAll(Fetcher.layerNode, layerInline(), Layer.succeed(AppConfig, testConfig()))

const html = (res: ServerResponse, body: string) => {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
  res.end(`<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`)
}
const xml = (res: ServerResponse, body: string | Uint8Array) => {
  res.writeHead(200, { "content-type": "application/xml" })
  res.end(body)
}
const links = (...hrefs: Array<string>) => hrefs.map((h) => `<a href="${h}">${h}</a>`).join(" ")

const recorder = () => {
  const pages: Array<CrawledPage> = []
  const skipped: Array<{ url: string; reason: CrawlSkip }> = []
  return {
    pages,
    skipped,
    visitor: {
      page: (page: CrawledPage, _queued: number) => Effect.sync(() => void pages.push(page)),
      skipped: (url: string, reason: CrawlSkip) => Effect.sync(() => void skipped.push({ url, reason })),
      failed: (_url: string, _message: string, _queued: number) => Effect.void
    }
  }
}

const crawlOf = (origin: string, seen: ReturnType<typeof recorder>) =>
  crawl({ root: `${origin}/`, keepToPath: false, limit: 50, httpsOnly: false }, seen.visitor)

it.scoped("a page reached by a redirect is seen under both addresses: fetched once, kept once", () =>
  Effect.gen(function* () {
    const server = yield* loopbackServer(({ path }, res) => {
      switch (path) {
        case "/robots.txt":
        case "/sitemap.xml":
          return void res.writeHead(404).end()
        case "/":
          // the old address comes first, the new one after it, and pages read later name both again
          return html(res, links("/old", "/new", "/other"))
        case "/old":
          res.writeHead(301, { location: "/new" })
          return void res.end()
        case "/new":
        case "/other":
          return html(res, links("/new", "/old", "/"))
        default:
          res.writeHead(404).end()
      }
    })
    const o = server.origin
    const seen = recorder()
    expect(yield* crawlOf(o, seen)).toEqual({ _tag: "Completed", kept: 3, capped: undefined })
    expect(seen.pages.map((p) => [p.url, p.requested])).toEqual([[`${o}/`, `${o}/`], [`${o}/new`, `${o}/old`], [`${o}/other`, `${o}/other`]])
    expect(seen.skipped).toEqual([])
    expect(server.received.map((r) => r.path)).toEqual(["/robots.txt", "/sitemap.xml", "/", "/old", "/new", "/other"])
  }).pipe(Effect.provide(services))
)

it.scoped("robots.txt of more rules for us than a crawl obeys refuses the crawl, saying why", () =>
  Effect.gen(function* () {
    const server = yield* loopbackServer(({ path }, res) => {
      if (path !== "/robots.txt") return html(res, "page")
      res.writeHead(200, { "content-type": "text/plain" })
      res.end(`User-agent: *\n${Array.from({ length: maxRobotsRules + 1 }, (_, i) => `Disallow: /r${i}`).join("\n")}\n`)
    })
    const outcome = yield* crawlOf(server.origin, recorder())
    expect(outcome).toEqual({
      _tag: "Refused",
      message: "robots.txt has more than 10,000 rules for this robot, more than a crawl obeys: the site is not crawled"
    })
    expect(server.received.map((r) => r.path)).toEqual(["/robots.txt"])
  }).pipe(Effect.provide(services))
)

it.scoped("a robots.txt past 500 KiB is unreadable: the crawl is refused", () =>
  Effect.gen(function* () {
    const server = yield* loopbackServer(({ path }, res) => {
      if (path !== "/robots.txt") return html(res, "page")
      res.writeHead(200, { "content-type": "text/plain" })
      res.end(`User-agent: *\nDisallow: /x\n${"#".repeat(500 * 1024)}\n`)
    })
    const outcome = yield* crawlOf(server.origin, recorder())
    expect(outcome).toMatchObject({ _tag: "Refused" })
    expect(server.received.map((r) => r.path)).toEqual(["/robots.txt"])
  }).pipe(Effect.provide(services))
)

it.scoped("an index of more sitemaps than a crawl reads: the first are read, the crawl goes on and says so", () =>
  Effect.gen(function* () {
    let origin = ""
    const server = yield* loopbackServer(({ path }, res) => {
      if (path === "/robots.txt") return void res.writeHead(404).end()
      if (path === "/sitemap.xml") {
        const children = Array.from({ length: maxSitemaps + 20 }, (_, i) => `<sitemap><loc>${origin}/s${i}.xml</loc></sitemap>`)
        return xml(res, `<sitemapindex>${children.join("")}</sitemapindex>`)
      }
      const child = /^\/s(\d+)\.xml$/.exec(path)
      if (child !== null) return xml(res, `<urlset><url><loc>${origin}/p${child[1]}</loc></url></urlset>`)
      return html(res, "leaf")
    })
    origin = server.origin
    const seen = recorder()
    const outcome = yield* crawl({ root: `${origin}/`, keepToPath: false, limit: 200, httpsOnly: false }, seen.visitor)
    expect(outcome).toEqual({
      _tag: "Completed",
      kept: maxSitemaps,
      capped: `the site names more than ${maxSitemaps} sitemaps, the most a crawl reads: the others were not read`
    })
    const read = server.received.map((r) => r.path).filter((p) => p.endsWith(".xml"))
    expect(read).toHaveLength(maxSitemaps)
    // the root and the pages of the 99 children read
    expect(seen.pages).toHaveLength(maxSitemaps)
  }).pipe(Effect.provide(services))
)

it.scoped("sitemaps of more bytes than a crawl reads: read up to the bound, the rest not, the crawl says so", () =>
  Effect.gen(function* () {
    let origin = ""
    // each child just under the protocol's 50 MB, mostly white space (gzip keeps the test's traffic small)
    const child = (n: number) => {
      const entry = `<url><loc>${origin}/c${n}</loc></url>`
      return gzipSync(`<urlset>${entry}${" ".repeat(maxSitemapBytes - 2 * entry.length - 20)}${entry.replace(`c${n}`, `c${n}b`)}</urlset>`)
    }
    const server = yield* loopbackServer(({ path }, res) => {
      if (path === "/robots.txt") return void res.writeHead(404).end()
      if (path === "/sitemap.xml") {
        return xml(res, `<sitemapindex>${[0, 1, 2].map((n) => `<sitemap><loc>${origin}/c${n}.xml.gz</loc></sitemap>`).join("")}</sitemapindex>`)
      }
      const which = /^\/c(\d)\.xml\.gz$/.exec(path)
      if (which !== null) return xml(res, child(Number(which[1])))
      return html(res, "leaf")
    })
    origin = server.origin
    const seen = recorder()
    const outcome = yield* crawl({ root: `${origin}/`, keepToPath: false, limit: 200, httpsOnly: false }, seen.visitor)
    expect(maxSitemapBytesPerCrawl).toBe(2 * maxSitemapBytes)
    expect(outcome).toMatchObject({
      _tag: "Completed",
      capped: "the site's sitemaps hold more than 100 MB, the most a crawl reads: the rest were not read"
    })
    // the index (small) and the first child fit; the second does not fit what is left, the third is never asked for
    expect(seen.pages.map((p) => new URL(p.url).pathname)).toEqual(["/", "/c0", "/c0b"])
    expect(server.received.map((r) => r.path).filter((p) => p.endsWith(".gz"))).toEqual(["/c0.xml.gz", "/c1.xml.gz"])
  }).pipe(Effect.provide(services))
)

it.scoped("a sitemap of more addresses than a crawl meets: the first are met, the crawl says so", () =>
  Effect.gen(function* () {
    let origin = ""
    const server = yield* loopbackServer(({ path }, res) => {
      if (path === "/robots.txt") return void res.writeHead(404).end()
      if (path === "/sitemap.xml") {
        res.writeHead(200, { "content-type": "text/plain" })
        return void res.end(Array.from({ length: maxAddressesMet + 10 }, (_, i) => `${origin}/p${i}`).join("\n"))
      }
      return html(res, "leaf")
    })
    origin = server.origin
    const seen = recorder()
    const outcome = yield* crawl({ root: `${origin}/`, keepToPath: false, limit: 3, httpsOnly: false }, seen.visitor)
    expect(outcome).toEqual({
      _tag: "Completed",
      kept: 3,
      capped: "the crawl met 100,000 addresses, the most one crawl meets: addresses met after were not followed"
    })
    // the root and two sitemap pages read; every other address met was recorded as over the limit, up to the cap
    expect(seen.pages.map((p) => new URL(p.url).pathname)).toEqual(["/", "/p0", "/p1"])
    expect(seen.skipped.length).toBe(maxAddressesMet - 3)
  }).pipe(Effect.provide(services))
)
