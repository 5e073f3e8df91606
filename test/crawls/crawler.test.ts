/**
 * A crawl's walk over a local site the test serves itself (real HTTP on
 * 127.0.0.1, the service's Fetcher, the readers inline): robots.txt, a sitemap
 * index with a gzip-encoded child, link cycles, redirects inside and outside
 * the site, canonical links, query-string duplicates, a page of 10,000 links,
 * pages that fail, non-HTML links; and the site's `Crawl-delay`, on the TestClock.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import type { ServerResponse } from "node:http"
import { gzipSync } from "node:zlib"
import * as Fetcher from "../../layers/Fetcher.js"
import { layerInline } from "../../layers/extractor/Inline.js"
import { AppConfig } from "../../src/Config.js"
import { type CrawledPage, type CrawlSkip, crawl, robotToken } from "../../src/crawls/Crawler.js"
import { eventually } from "../support/eventually.js"
import { testConfig } from "../support/harness.js"
import { loopbackServer } from "../support/loopback.js"

const services = Layer.mergeAll(Fetcher.layerNode, layerInline(), Layer.succeed(AppConfig, testConfig()))

const html = (res: ServerResponse, body: string, head = "") => {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
  res.end(`<!doctype html><html><head><title>t</title>${head}</head><body>${body}</body></html>`)
}
const links = (...hrefs: Array<string>) => hrefs.map((h) => `<a href="${h}">${h}</a>`).join(" ")

/** What a crawl reported, in order. */
const recorder = () => {
  const pages: Array<CrawledPage> = []
  const skipped: Array<{ url: string; reason: CrawlSkip }> = []
  const failed: Array<{ url: string; message: string }> = []
  return {
    pages,
    skipped,
    failed,
    visitor: {
      page: (page: CrawledPage, _queued: number) => Effect.sync(() => void pages.push(page)),
      skipped: (url: string, reason: CrawlSkip) => Effect.sync(() => void skipped.push({ url, reason })),
      failed: (url: string, message: string, _queued: number) => Effect.sync(() => void failed.push({ url, message }))
    }
  }
}

const site = Effect.gen(function* () {
  let origin = ""
  const server = yield* loopbackServer(({ path }, res) => {
    const { pathname } = new URL(path, "http://x")
    switch (pathname) {
      case "/robots.txt":
        res.writeHead(200, { "content-type": "text/plain" })
        return void res.end(`User-agent: *\nDisallow: /private\n\nUser-agent: ${robotToken}\nDisallow: /private\nDisallow: /staff\n\nSitemap: /sitemap_index.xml\n`)
      case "/sitemap_index.xml":
        res.writeHead(200, { "content-type": "application/xml" })
        return void res.end(
          `<sitemapindex><sitemap><loc>${origin}/sitemap-a.xml.gz</loc></sitemap><sitemap><loc>${origin}/sitemap-b.xml</loc></sitemap></sitemapindex>`
        )
      case "/sitemap-a.xml.gz":
        res.writeHead(200, { "content-type": "application/gzip" })
        return void res.end(
          gzipSync(`<urlset><url><loc>${origin}/p1</loc></url><url><loc>${origin}/p2</loc></url><url><loc>https://elsewhere.example/x</loc></url></urlset>`)
        )
      case "/sitemap-b.xml":
        res.writeHead(200, { "content-type": "application/xml" })
        return void res.end(`<urlset><url><loc>${origin}/p3</loc></url><url><loc>${origin}/staff/rota</loc></url><url><loc>${origin}/p1</loc></url></urlset>`)
      case "/":
        return html(res, links("/p1", "/p4?utm_source=news", "/p4", "/logo.png", "/doc.pdf", "/old", "/away", "/gone", "/canon", "/hidden", "mailto:hi@example.com"))
      case "/p1":
        return html(res, links("/", "/p2", "#top"))
      case "/p2":
      case "/p3":
      case "/p4":
      case "/p5":
        return html(res, links("/p1"))
      case "/old":
        res.writeHead(301, { location: "/p5" })
        return void res.end()
      case "/away":
        res.writeHead(302, { location: origin.replace("127.0.0.1", "localhost") + "/p1" })
        return void res.end()
      case "/gone":
        res.writeHead(404, { "content-type": "text/html" })
        return void res.end("no")
      case "/canon":
        return html(res, "the same as p1", `<link rel="canonical" href="/p1">`)
      case "/hidden":
        return html(res, links("/p6"), `<meta name="robots" content="noindex">`)
      case "/p6":
        return html(res, links("/many"))
      case "/many":
        return html(res, links(...Array.from({ length: 10_000 }, (_, i) => `/m${i}`)))
      case "/doc.pdf":
        res.writeHead(200, { "content-type": "application/pdf" })
        return void res.end("%PDF-1.4 not really")
      default:
        if (/^\/m\d+$/.test(pathname)) return html(res, "a leaf")
        res.writeHead(404).end()
    }
  })
  origin = server.origin
  return server
})

it.scoped("a crawl keeps each page of the site once and says why it skipped the others", () =>
  Effect.gen(function* () {
    const server = yield* site
    const o = server.origin
    const seen = recorder()
    const outcome = yield* crawl({ root: `${o}/`, keepToPath: false, limit: 20, httpsOnly: false }, seen.visitor)
    const kept = seen.pages.map((p) => p.url)
    expect(kept).toEqual([
      `${o}/`, `${o}/p1`, `${o}/p2`, `${o}/p3`, `${o}/p4`, `${o}/doc.pdf`, `${o}/p5`, `${o}/p6`, `${o}/many`,
      ...Array.from({ length: 7 }, (_, i) => `${o}/m${i}`)
    ])
    // the limit counts pages read, kept or not: the 404, the redirects, the duplicate and the noindex page too
    expect(outcome).toEqual({ _tag: "Completed", kept: 16 })
    const reasons = (reason: CrawlSkip) => seen.skipped.filter((s) => s.reason === reason).map((s) => s.url)
    expect(reasons("off_origin")).toEqual(["https://elsewhere.example/x", `${o}/away`])
    expect(reasons("disallowed")).toEqual([`${o}/staff/rota`])
    expect(reasons("not_html")).toEqual([`${o}/logo.png`])
    expect(reasons("duplicate")).toEqual([`${o}/canon`])
    expect(reasons("noindex")).toEqual([`${o}/hidden`])
    expect(reasons("over_limit")).toHaveLength(10_000 - 7)
    expect(seen.failed).toEqual([{ url: `${o}/gone`, message: "the page answered 404" }])
    // nothing was fetched twice, and nothing disallowed or off the site was fetched at all
    const paths = server.received.map((r) => r.path)
    expect(paths.length).toBe(new Set(paths).size)
    expect(paths.filter((p) => p.startsWith("/staff") || p.startsWith("/private"))).toEqual([])
    expect(server.received.every((r) => String(r.headers["user-agent"]).startsWith(robotToken))).toBe(true)
  }).pipe(Effect.provide(services))
)

it.scoped("a site that cannot say what may be crawled (robots.txt answers 503) is not crawled", () =>
  Effect.gen(function* () {
    const server = yield* loopbackServer((_request, res) => void res.writeHead(503).end())
    const seen = recorder()
    const outcome = yield* crawl({ root: `${server.origin}/`, keepToPath: false, limit: 10, httpsOnly: false }, seen.visitor)
    expect(outcome).toEqual({ _tag: "Refused", message: "robots.txt could not be read (the page answered 503): the site is not crawled" })
    expect(server.received.map((r) => r.path)).toEqual(["/robots.txt"])
  }).pipe(Effect.provide(services))
)

it.scoped("requests to a site are one at a time, its Crawl-delay apart", () =>
  Effect.gen(function* () {
    const server = yield* loopbackServer(({ path }, res) => {
      if (path === "/robots.txt") {
        res.writeHead(200, { "content-type": "text/plain" })
        return void res.end("User-agent: *\nCrawl-delay: 5\n")
      }
      if (path === "/sitemap.xml") return void res.writeHead(404).end()
      return html(res, path === "/" ? links("/a", "/b") : "leaf")
    })
    const seen = recorder()
    const running = yield* Effect.fork(crawl({ root: `${server.origin}/`, keepToPath: false, limit: 10, httpsOnly: false }, seen.visitor))
    const requests = Effect.sync(() => server.received.map((r) => r.path))
    // robots.txt, then the sitemap after the first delay, then each page after another
    expect(yield* eventually(requests, (paths) => paths.length === 1)).toEqual(["/robots.txt"])
    for (const next of ["/sitemap.xml", "/", "/a", "/b"]) {
      yield* TestClock.adjust("4 seconds")
      expect((yield* requests).at(-1)).not.toBe(next)
      yield* TestClock.adjust("1 second")
      expect((yield* eventually(requests, (paths) => paths.at(-1) === next)).at(-1)).toBe(next)
    }
    expect(yield* Fiber.join(running)).toEqual({ _tag: "Completed", kept: 3 })
  }).pipe(Effect.provide(services))
)
