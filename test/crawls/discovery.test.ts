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
import { parseSitemap as parseWithin } from "../../layers/extractor/Sitemap.js"
import { maxAddressesMet, maxRobotsRules, maxSitemapBytes } from "../../schema/Crawls.js"

const robot = "AssistantPlatformBot"
/** A sitemap read within the protocol's bound only. */
const parseSitemap = (body: Uint8Array, limits = { maxBytes: maxSitemapBytes, maxEntries: Infinity }) => parseWithin(body, limits)
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

  it("a rule of many wildcards on a long address is decided at once, and rightly", () => {
    // a regular expression of eight `.*` backtracks for minutes on such an address; the scan does not
    const wild = parseRobots("User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*b\nDisallow: /*x*y*z$\nAllow: /*.html$\n", robot, origin)
    const long = `${origin}/${"a".repeat(60)}`
    expect(isAllowed(wild, long)).toBe(true)
    expect(isAllowed(wild, `${long}b`)).toBe(false)
    expect(isAllowed(wild, `${origin}/${"a".repeat(5_000)}`)).toBe(true)
    expect(isAllowed(wild, `${origin}/${"a".repeat(5_000)}?q=b`)).toBe(false)
    // `$`: the last piece must end the address, wherever else it occurs
    expect(isAllowed(wild, `${origin}/x/y/z`)).toBe(false)
    expect(isAllowed(wild, `${origin}/xyz/zz`)).toBe(false)
    expect(isAllowed(wild, `${origin}/x/y/z/w`)).toBe(true)
    expect(isAllowed(wild, `${origin}/z/y/x`)).toBe(true)
    // the longest rule wins over a shorter one matching too: `/*.html$` (9) over `/*x*y*z$` (8)
    expect(isAllowed(wild, `${origin}/x-y-z.html`)).toBe(true)
    expect(isAllowed(wild, `${origin}/x-y-z.html?z`)).toBe(false)
  })

  it("patterns and addresses compare percent-encoded one way, with `*` and `$` as patterns still", () => {
    const encoded = parseRobots("User-agent: *\nDisallow: /caf%C3%A9/*/menu$\nDisallow: /a b\n", robot, origin)
    expect(isAllowed(encoded, `${origin}/café/today/menu`)).toBe(false)
    expect(isAllowed(encoded, `${origin}/caf%C3%A9/today/menu`)).toBe(false)
    expect(isAllowed(encoded, `${origin}/café/today/menu/x`)).toBe(true)
    expect(isAllowed(encoded, `${origin}/a%20b/c`)).toBe(false)
  })

  it("more rules for us than a crawl obeys are said so, the first kept", () => {
    const rules = (n: number) => `User-agent: *\n${Array.from({ length: n }, (_, i) => `Disallow: /r${i}/`).join("\n")}\n`
    const most = parseRobots(rules(maxRobotsRules), robot, origin)
    expect([most.rules.length, most.tooManyRules]).toEqual([maxRobotsRules, false])
    const more = parseRobots(rules(maxRobotsRules + 1), robot, origin)
    expect([more.rules.length, more.tooManyRules]).toEqual([maxRobotsRules, true])
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
      sitemap: { pages: ["https://shop.example/a?x=1&y=2", "https://shop.example/b"], sitemaps: [], bytes: urlset.length, truncated: false }
    })
  })

  it("reads a sitemap index's sitemaps, gzip-encoded or not", () => {
    const index = `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sitemap><loc>https://shop.example/one.xml.gz</loc></sitemap><sitemap><loc>https://shop.example/two.xml</loc></sitemap>
    </sitemapindex>`
    const expected = {
      _tag: "Sitemap",
      sitemap: { pages: [], sitemaps: ["https://shop.example/one.xml.gz", "https://shop.example/two.xml"], bytes: index.length, truncated: false }
    }
    expect(parseSitemap(new TextEncoder().encode(index))).toEqual(expected)
    expect(parseSitemap(gzipSync(index))).toEqual(expected)
    expect(parseSitemap(gzipSync(urlset))).toMatchObject({ _tag: "Sitemap", sitemap: { pages: ["https://shop.example/a?x=1&y=2", "https://shop.example/b"] } })
  })

  it("reads a text sitemap, one address a line", () => {
    expect(parseSitemap(new TextEncoder().encode("https://shop.example/a\n\nnot an address\nhttps://shop.example/b\r\n"))).toMatchObject({
      _tag: "Sitemap",
      sitemap: { pages: ["https://shop.example/a", "https://shop.example/b"], sitemaps: [] }
    })
  })

  it("refuses what is no sitemap, broken gzip, and a gzip bomb past 50 MB", () => {
    expect(parseSitemap(new TextEncoder().encode("<html><body>hello</body></html>"))).toMatchObject({ _tag: "Unreadable" })
    expect(parseSitemap(new Uint8Array([0x1f, 0x8b, 1, 2, 3]))).toEqual({ _tag: "Unreadable", reason: "not valid gzip", tooLarge: false })
    const bomb = gzipSync(Buffer.alloc(maxSitemapBytes + 1, 0x20))
    expect(parseSitemap(bomb)).toEqual({ _tag: "Unreadable", reason: "larger than 50 MB uncompressed", tooLarge: true })
  })
})

describe("sitemaps a site may serve to stall a reader", () => {
  const encode = (text: string) => new TextEncoder().encode(text)
  const pagesOf = (text: string) => {
    const read = parseSitemap(encode(text))
    return read._tag === "Sitemap" ? read.sitemap.pages : read
  }

  it("megabytes of <url> tags never closed: read in one pass, the closed entries after them kept", () => {
    const open = "<url>".repeat(400_000) // 2 MB
    const xml = `<urlset>${open}<url><loc>https://shop.example/a</loc></url>${open}<url><loc>https://shop.example/b</loc></url>${open}</urlset>`
    expect(pagesOf(xml)).toEqual(["https://shop.example/a", "https://shop.example/b"])
    // an entry opened again before it closed starts afresh; unclosed locs and tags run to nothing
    expect(pagesOf(`<urlset><url><loc>https://shop.example/x</loc><url><loc>https://shop.example/y</loc></url><url><loc>never`)).toEqual([
      "https://shop.example/y"
    ])
    expect(pagesOf(`<urlset>${"<loc>".repeat(500_000)}<url><loc>${"<".repeat(500_000)}`)).toEqual([])
  })

  it("impossible character references leave their entry out, without a throw; bare ampersands stay", () => {
    const entries = [
      "https://shop.example/&#99999999;",
      "https://shop.example/&#xD800;",
      "https://shop.example/&#0;",
      "https://shop.example/&nbsp;",
      "https://shop.example/&#x41;&#66;?a=1&amp;b=2",
      "https://shop.example/c?a=1&b=2",
      "https://shop.example/&#x1F600;"
    ]
    const xml = `<urlset>${entries.map((loc) => `<url><loc>${loc}</loc></url>`).join("")}</urlset>`
    expect(pagesOf(xml)).toEqual(["https://shop.example/AB?a=1&b=2", "https://shop.example/c?a=1&b=2", "https://shop.example/\u{1F600}"])
  })

  it("an image sitemap's <image:loc> is not a page; prefixed elements are read; comments hide nothing", () => {
    const xml = `<?xml version="1.0"?><!-- <urlset> --><s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9">
      <s:url><s:loc> https://shop.example/p </s:loc><image:image><image:loc>https://cdn.example/i.png</image:loc></image:image></s:url>
      <!-- <s:url><s:loc>https://shop.example/commented</s:loc></s:url> -->
      <s:url><image:image><image:loc>https://cdn.example/j.png</image:loc></image:image><s:loc>https://shop.example/q</s:loc></s:url>
    </s:urlset>`
    expect(pagesOf(xml)).toEqual(["https://shop.example/p", "https://shop.example/q"])
  })

  it("gives at most the addresses asked for, saying there were more; at most the bytes asked for", () => {
    const xml = `<urlset>${Array.from({ length: 5 }, (_, i) => `<url><loc>https://shop.example/${i}</loc></url>`).join("")}</urlset>`
    expect(parseSitemap(encode(xml), { maxBytes: maxSitemapBytes, maxEntries: 3 })).toMatchObject({
      _tag: "Sitemap",
      sitemap: { pages: ["https://shop.example/0", "https://shop.example/1", "https://shop.example/2"], truncated: true }
    })
    expect(parseSitemap(encode(xml), { maxBytes: maxSitemapBytes, maxEntries: 5 })).toMatchObject({ sitemap: { truncated: false } })
    expect(parseSitemap(gzipSync(xml), { maxBytes: 100, maxEntries: 5 })).toEqual({
      _tag: "Unreadable",
      reason: "larger than 100 bytes uncompressed",
      tooLarge: true
    })
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

  it("a redirect to a page queued and not read yet is that page's read: it leaves the queue", () => {
    const frontier = makeFrontier(scopeOf(`${origin}/`, false), robots, 10)
    frontier.offer(`${origin}/old`)
    frontier.offer(`${origin}/new`)
    frontier.offer(`${origin}/other`)
    expect(frontier.next()).toBe(`${origin}/old`)
    // /old answered from /new: /new is read, under both addresses
    expect(frontier.redirected(`${origin}/new`)).toBe(true)
    expect(frontier.queued()).toBe(1)
    expect(frontier.offer(`${origin}/new`)).toBeUndefined()
    expect(frontier.offer(`${origin}/old`)).toBeUndefined()
    expect([frontier.next(), frontier.next()]).toEqual([`${origin}/other`, undefined])
    // a redirect to a page read already: a duplicate
    expect(frontier.redirected(`${origin}/other`)).toBe(false)
  })

  it("remembers at most its cap of addresses, then stops discovering and says so", () => {
    const frontier = makeFrontier(scopeOf(`${origin}/`, false), allowAll, 2, 5)
    const decisions = ["/a", "/b", "/c", "https://other.example/", "/admin.png", "/d", "/a"].map((href) => frontier.offer(href, `${origin}/`))
    expect(decisions.map((d) => d?._tag === "Skipped" ? d.reason : d?._tag)).toEqual(["Queued", "Queued", "over_limit", "off_origin", "not_html", undefined, undefined])
    expect(frontier.full()).toBe(true)
    expect(maxAddressesMet).toBe(100_000)
  })
})
