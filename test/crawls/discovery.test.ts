/**
 * How a crawl reads a site's directions: robots.txt for our robot, sitemaps
 * (indexes, gzip-encoded, text), page addresses in one spelling each, and a
 * page's links, canonical address and robots meta tag.
 */
import { parseHTML } from "linkedom"
import { gzipSync } from "node:zlib"
import { describe, expect, it } from "vitest"
import { maxLinksPerPage, pageLinks } from "../../layers/extractor/Links.js"
import { makeFrontier } from "../../src/crawls/Frontier.js"
import { inScope, normalise, scopeOf } from "../../src/crawls/PageUrl.js"
import { allowAll, isAllowed, parseRobots } from "../../src/crawls/Robots.js"
import { maxSitemapBytes, parseSitemap } from "../../src/crawls/Sitemap.js"

const robot = "AssistantPlatformBot"
const origin = "https://shop.example"

describe("robots.txt", () => {
  const robots = parseRobots(
    [
      "# comments and blank lines are nothing",
      "User-agent: *",
      "Disallow: /private/",
      "Disallow: /tmp",
      "Crawl-delay: 9",
      "",
      "User-agent: OtherBot",
      "User-agent: assistantplatformbot/2.1",
      "Disallow: /search",
      "Disallow: /*.pdf$",
      "Allow: /search/help",
      "Disallow: /docs/draft",
      "Allow: /docs/draft",
      "Crawl-delay: 2",
      "",
      "Sitemap: https://shop.example/sitemap_index.xml",
      "Sitemap: /relative-sitemap.xml"
    ].join("\r\n"),
    robot,
    origin
  )

  it("takes the group naming our robot over `*`, with its crawl delay", () => {
    expect(robots.crawlDelaySeconds).toBe(2)
    expect(isAllowed(robots, `${origin}/private/page`)).toBe(true)
    expect(isAllowed(robots, `${origin}/search?q=shoes`)).toBe(false)
  })

  it("the longest rule wins; an Allow wins a tie; `*` and `$` are patterns", () => {
    expect(isAllowed(robots, `${origin}/search/help`)).toBe(true)
    expect(isAllowed(robots, `${origin}/docs/draft/one`)).toBe(true)
    expect(isAllowed(robots, `${origin}/files/price-list.pdf`)).toBe(false)
    expect(isAllowed(robots, `${origin}/files/price-list.pdf?download=1`)).toBe(true)
  })

  it("lists every sitemap, relative ones resolved", () => {
    expect(robots.sitemaps).toEqual([`${origin}/sitemap_index.xml`, `${origin}/relative-sitemap.xml`])
  })

  it("without a group for us, the `*` group; without either, everything is allowed", () => {
    const star = parseRobots("User-agent: *\nDisallow: /tmp\nCrawl-delay: 9\n", robot, origin)
    expect(isAllowed(star, `${origin}/tmp/x`)).toBe(false)
    expect(star.crawlDelaySeconds).toBe(9)
    const others = parseRobots("User-agent: OtherBot\nDisallow: /\nUser-agent: Assistant\nDisallow: /\n", robot, origin)
    expect(isAllowed(others, `${origin}/anything`)).toBe(true)
    expect(isAllowed(allowAll, `${origin}/anything`)).toBe(true)
  })

  it("an empty Disallow allows all; robots.txt itself is always allowed", () => {
    const open = parseRobots("User-agent: *\nDisallow:\n", robot, origin)
    expect(isAllowed(open, `${origin}/a`)).toBe(true)
    const closed = parseRobots("User-agent: *\nDisallow: /\n", robot, origin)
    expect(isAllowed(closed, `${origin}/a`)).toBe(false)
    expect(isAllowed(closed, `${origin}/robots.txt`)).toBe(true)
  })
})

describe("sitemaps", () => {
  const urlset = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://shop.example/a?x=1&amp;y=2</loc><lastmod>2026-01-01</lastmod></url>
  <url><loc><![CDATA[https://shop.example/b]]></loc></url>
</urlset>`

  it("reads a urlset's pages, entities and CDATA decoded", () => {
    expect(parseSitemap(new TextEncoder().encode(urlset))).toEqual({
      _tag: "Sitemap",
      sitemap: { pages: ["https://shop.example/a?x=1&y=2", "https://shop.example/b"], sitemaps: [] }
    })
  })

  it("reads a sitemap index's sitemaps, gzip-encoded or not", () => {
    const index = `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sitemap><loc>https://shop.example/one.xml.gz</loc></sitemap><sitemap><loc>https://shop.example/two.xml</loc></sitemap>
    </sitemapindex>`
    const expected = { _tag: "Sitemap", sitemap: { pages: [], sitemaps: ["https://shop.example/one.xml.gz", "https://shop.example/two.xml"] } }
    expect(parseSitemap(new TextEncoder().encode(index))).toEqual(expected)
    expect(parseSitemap(gzipSync(index))).toEqual(expected)
    expect(parseSitemap(gzipSync(urlset))).toMatchObject({ _tag: "Sitemap", sitemap: { pages: ["https://shop.example/a?x=1&y=2", "https://shop.example/b"] } })
  })

  it("reads a text sitemap, one address a line", () => {
    expect(parseSitemap(new TextEncoder().encode("https://shop.example/a\n\nnot an address\nhttps://shop.example/b\r\n"))).toEqual({
      _tag: "Sitemap",
      sitemap: { pages: ["https://shop.example/a", "https://shop.example/b"], sitemaps: [] }
    })
  })

  it("refuses what is no sitemap, broken gzip, and a gzip bomb past 50 MB", () => {
    expect(parseSitemap(new TextEncoder().encode("<html><body>hello</body></html>"))).toMatchObject({ _tag: "Unreadable" })
    expect(parseSitemap(new Uint8Array([0x1f, 0x8b, 1, 2, 3]))).toEqual({ _tag: "Unreadable", reason: "not valid gzip" })
    const bomb = gzipSync(Buffer.alloc(maxSitemapBytes + 1, 0x20))
    expect(parseSitemap(bomb)).toEqual({ _tag: "Unreadable", reason: "larger than 50 MB uncompressed" })
  })
})

describe("page addresses", () => {
  it("one spelling a page: no fragment, no tracking parameters, the rest of the query sorted", () => {
    expect(normalise("https://Shop.Example:443/a?b=2&utm_source=x&a=1&gclid=z#top")).toBe("https://shop.example/a?a=1&b=2")
    expect(normalise("/b?fbclid=1", "https://shop.example/a/")).toBe("https://shop.example/b")
    expect(normalise("page#x", "https://shop.example/docs/")).toBe("https://shop.example/docs/page")
    expect(normalise("mailto:hello@shop.example")).toBeUndefined()
    expect(normalise("javascript:void(0)", "https://shop.example/")).toBeUndefined()
  })

  it("a crawl keeps to the root's origin, and to its directory when asked", () => {
    const site = scopeOf("https://shop.example/docs/start", false)
    const docs = scopeOf("https://shop.example/docs/start", true)
    expect(inScope(site, "https://shop.example/blog/x")).toBe(true)
    expect(inScope(docs, "https://shop.example/blog/x")).toBe(false)
    expect(inScope(docs, "https://shop.example/docs/x")).toBe(true)
    expect(inScope(site, "http://shop.example/docs/x")).toBe(false)
    expect(inScope(site, "https://cdn.shop.example/docs/x")).toBe(false)
  })
})

describe("a page's links", () => {
  const page = (head: string, body: string) => parseHTML(`<html><head>${head}</head><body>${body}</body></html>`).document

  it("links resolved against <base>, each once, nofollow links left; the canonical address", () => {
    const document = page(
      `<base href="https://shop.example/docs/"><link rel="alternate canonical" href="/docs/intro">`,
      `<a href="a">A</a><a href="a">again</a><a href="/b" rel="nofollow">B</a><map><area href="https://other.example/c"></map>
       <a href="mailto:x@y.z">mail</a><a>no href</a>`
    )
    expect(pageLinks(document, "https://shop.example/index.html", "AssistantPlatformBot")).toEqual({
      links: ["https://shop.example/docs/a", "https://other.example/c"],
      canonical: "https://shop.example/docs/intro",
      noindex: false,
      nofollow: false
    })
  })

  it("a robots meta tag for all robots or for ours: noindex, nofollow", () => {
    const forUs = page(`<meta name="AssistantPlatformBot" content="noindex, nofollow">`, `<a href="/a">A</a>`)
    expect(pageLinks(forUs, "https://shop.example/", "AssistantPlatformBot")).toEqual({ links: [], canonical: undefined, noindex: true, nofollow: true })
    const forOthers = page(`<meta name="googlebot" content="none">`, `<a href="/a">A</a>`)
    expect(pageLinks(forOthers, "https://shop.example/", "AssistantPlatformBot").links).toEqual(["https://shop.example/a"])
  })

  it("a page of ten thousand links gives them all, a link farm past the bound gives the bound", () => {
    const many = (n: number) => page("", Array.from({ length: n }, (_, i) => `<a href="/p${i}">${i}</a>`).join(""))
    expect(pageLinks(many(10_000), "https://shop.example/", "bot").links).toHaveLength(10_000)
    expect(pageLinks(many(maxLinksPerPage + 5), "https://shop.example/", "bot").links).toHaveLength(maxLinksPerPage)
  })
})

describe("the frontier", () => {
  const robots = parseRobots("User-agent: *\nDisallow: /admin\n", robot, origin)

  it("queues each page once, in the order met, and says why it skips the others", () => {
    const frontier = makeFrontier(scopeOf(`${origin}/`, false), robots, 3)
    const from = `${origin}/`
    const decisions = [
      "/a", "/a#reviews", "/a?utm_source=mail", "https://other.example/x", "/admin/users", "/logo.png",
      "mailto:hi@shop.example", "/b?y=2&x=1", "/b?x=1&y=2", "/c", "/d", "/e"
    ].map((href) => frontier.offer(href, from))
    expect(decisions).toEqual([
      { _tag: "Queued", url: `${origin}/a` },
      undefined,
      undefined,
      { _tag: "Skipped", url: "https://other.example/x", reason: "off_origin" },
      { _tag: "Skipped", url: `${origin}/admin/users`, reason: "disallowed" },
      { _tag: "Skipped", url: `${origin}/logo.png`, reason: "not_html" },
      undefined,
      { _tag: "Queued", url: `${origin}/b?x=1&y=2` },
      undefined,
      { _tag: "Queued", url: `${origin}/c` },
      { _tag: "Skipped", url: `${origin}/d`, reason: "over_limit" },
      { _tag: "Skipped", url: `${origin}/e`, reason: "over_limit" }
    ])
    expect([frontier.next(), frontier.next(), frontier.queued(), frontier.next(), frontier.next()]).toEqual([
      `${origin}/a`, `${origin}/b?x=1&y=2`, 1, `${origin}/c`, undefined
    ])
  })

  it("a page answering as an address met already is a duplicate; as a new one, that one is met from now on", () => {
    const frontier = makeFrontier(scopeOf(`${origin}/`, false), robots, 10)
    frontier.offer(`${origin}/a`)
    expect(frontier.alias(`${origin}/a#top`)).toBe(false)
    expect(frontier.alias(`${origin}/a-new-home`)).toBe(true)
    expect(frontier.offer(`${origin}/a-new-home`)).toBeUndefined()
  })
})
