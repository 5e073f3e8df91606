/**
 * A crawl of a local site of `BENCH_CRAWL_PAGES` pages (default 2,000; served by this process on 127.0.0.1):
 * robots.txt, a sitemap naming every other page, and 5–20 KB help pages (`pageHtml` of knowledge.ts) each
 * linking to the next few pages, the home page, and an image. Through the service (the bundle), one agent of a
 * pro workspace, on PGlite and on PostgreSQL (a throwaway database): the walk's time (from the request until
 * the crawl is `completed`: every page read once, kept as a source) and the time until every page it kept is
 * indexed. Beside it, in the same run: a bare loop fetching the same pages one at a time (what a crawl's walk
 * cannot do without), so the walk's pages a second are read against it.
 *
 * `BENCH_CRAWL_PAGES`, `BENCH_PGLITE=0` or `BENCH_POSTGRES=0` to leave one database out.
 */
import { randomBytes } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { loadavg } from "node:os"
import { pageHtml } from "./knowledge.js"
import {
  fmt,
  freePort,
  host,
  noRateLimit,
  proWorkspace,
  ratio,
  type Section,
  serviceEnv,
  sleep,
  spawnService,
  startTimed,
  stop,
  tempDir,
  throwawayDatabase,
  createAgent
} from "./lib.js"

const pages = Number(process.env["BENCH_CRAWL_PAGES"] ?? 2_000)

/** Page n with its links: the next three pages, the home page, an image (skipped as not a page). */
const linkedPage = (n: number) =>
  pageHtml(n).replace(
    "</article>",
    `<p>${[1, 2, 3].map((d) => `<a href="/p/${(n + d) % pages}">next ${d}</a>`).join(" ")} <a href="/p/0">home</a> ` +
      `<a href="/img/${n}.png">figure</a></p></article>`
  )

const serveSite = () =>
  new Promise<{ origin: string; requests: () => number; notModified: () => number; close: () => void }>((resolve) => {
    let requests = 0
    let notModified = 0
    let origin = ""
    const server = createServer((req, res) => {
      requests++
      const path = req.url ?? "/"
      if (path === "/robots.txt") {
        res.writeHead(200, { "content-type": "text/plain" })
        return res.end(`User-agent: *\nDisallow: /private\n\nSitemap: ${origin}/sitemap.xml\n`)
      }
      if (path === "/sitemap.xml") {
        res.writeHead(200, { "content-type": "application/xml" })
        const locs = Array.from({ length: pages }, (_, n) => n).filter((n) => n % 2 === 0)
        return res.end(`<urlset>${locs.map((n) => `<url><loc>${origin}/p/${n}</loc></url>`).join("")}</urlset>`)
      }
      const n = Number(/^\/p\/(\d+)$/.exec(path)?.[1] ?? -1)
      if (n < 0 || n >= pages) {
        res.writeHead(404)
        return res.end()
      }
      // an unchanged page answers a conditional GET with 304, as a web server serving files does
      const etag = `"p${n}"`
      if (req.headers["if-none-match"] === etag) {
        notModified++
        res.writeHead(304, { etag })
        return res.end()
      }
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", etag })
      res.end(linkedPage(n))
    })
    server.listen(0, host, () => {
      origin = `http://${host}:${(server.address() as AddressInfo).port}`
      resolve({
        origin,
        requests: () => requests,
        notModified: () => notModified,
        close: () => {
          server.closeAllConnections()
          server.close()
        }
      })
    })
  })

type Db = "PGlite" | "PostgreSQL"

interface Run {
  readonly walkMs: number
  readonly indexedMs: number
  readonly kept: number
  readonly indexed: number
  readonly failed: number
  readonly skipped: Record<string, number>
  readonly requests: number
  readonly load: number
  /** A round of every kept page asked for once indexed, the site unchanged: until every page was read again. */
  readonly refreshMs: number
  readonly refreshed: number
  readonly notModified: number
}

/** Every source of the agent, 100 a page. */
const allSources = async (base: string, headers: Record<string, string>, agentId: string) => {
  const all: Array<any> = []
  let after: string | null = null
  for (let page = 0; page < 1_000; page++) {
    const q: string = `?limit=100${after === null ? "" : `&starting_after=${after}`}`
    const body = (await (await fetch(`${base}/v1/agents/${agentId}/knowledge${q}`, { headers })).json()) as any
    all.push(...body.data)
    if (!body.meta.pagination.has_more) break
    after = body.meta.pagination.next_cursor
  }
  return all
}

/** A round of every source asked for (`POST …/knowledge/refresh`), then waits until each page was read again. */
const refreshAll = async (base: string, headers: Record<string, string>, agentId: string) => {
  const started = performance.now()
  const r = await fetch(`${base}/v1/agents/${agentId}/knowledge/refresh`, { method: "POST", headers })
  if (r.status !== 202) throw new Error(`POST refresh: ${r.status} ${await r.text()}`)
  const round = ((await r.json()) as { data: { started_at: string } }).data.started_at
  // bounded: at most half an hour of polls, every 250 ms
  for (let i = 0; i < 7_200; i++) {
    const sources = await allSources(base, headers, agentId)
    if (sources.every((s) => s.refresh.status === "idle" && s.refresh.checked_at !== null && s.refresh.checked_at >= round)) {
      return { ms: performance.now() - started, refreshed: sources.length }
    }
    await sleep(250)
  }
  throw new Error("the refreshes did not end within half an hour")
}

const crawlThrough = async (
  db: Db,
  site: { origin: string; requests: () => number; notModified: () => number }
): Promise<Run> => {
  const port = await freePort()
  const adminToken = randomBytes(24).toString("hex")
  const database: Record<string, string> =
    db === "PGlite" ? { DATA_DIR: await tempDir("crawl") } : { DATABASE_URL: await throwawayDatabase({ prefix: "bench_crawl" }) }
  const env = serviceEnv({ PORT: String(port), ALLOW_PRIVATE_URLS: "true", ADMIN_TOKEN: adminToken, ...noRateLimit, ...database })
  const { child } = await startTimed(() => spawnService(env), port)
  const base = `http://${host}:${port}`
  try {
    const { token } = await proWorkspace(base, adminToken, "Crawl bench")
    const agentId = await createAgent(base, token, "Crawled help centre")
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
    const requestsBefore = site.requests()
    const load = loadavg()[0]!
    const started = performance.now()
    const created = await fetch(`${base}/v1/agents/${agentId}/crawls`, {
      method: "POST",
      headers,
      body: JSON.stringify({ url: `${site.origin}/p/0`, limit: pages })
    })
    if (created.status !== 201) throw new Error(`POST crawls: ${created.status} ${await created.text()}`)
    const id = ((await created.json()) as { data: { id: string } }).data.id
    let walkMs = 0
    // bounded: at most an hour of polls, every 500 ms
    for (let i = 0; i < 7_200; i++) {
      await sleep(500)
      const crawl = ((await (await fetch(`${base}/v1/agents/${agentId}/crawls/${id}`, { headers })).json()) as { data: any }).data
      if (walkMs === 0 && crawl.status !== "queued" && crawl.status !== "running") walkMs = performance.now() - started
      if (crawl.status === "failed" || crawl.status === "canceled") throw new Error(`the crawl ended ${crawl.status}: ${JSON.stringify(crawl.error)}`)
      if (walkMs > 0 && crawl.pages.indexing === 0) {
        const indexedMs = performance.now() - started
        const requests = site.requests() - requestsBefore
        const notModifiedBefore = site.notModified()
        const refresh = await refreshAll(base, headers, agentId)
        return {
          walkMs,
          indexedMs,
          refreshMs: refresh.ms,
          refreshed: refresh.refreshed,
          notModified: site.notModified() - notModifiedBefore,
          kept: crawl.pages.kept,
          indexed: crawl.pages.indexed,
          failed: crawl.pages.failed,
          skipped: crawl.pages.skipped,
          requests,
          load
        }
      }
    }
    throw new Error("the crawl did not end within an hour")
  } finally {
    await stop(child)
  }
}

/** The same pages fetched one at a time, nothing else: the floor of a polite walk. */
const bareFetchLoop = async (origin: string) => {
  const started = performance.now()
  for (let n = 0; n < pages; n++) await (await fetch(`${origin}/p/${n}`)).text()
  return performance.now() - started
}

export const crawl = async (): Promise<Section> => {
  const site = await serveSite()
  const dbs: Array<Db> = [
    ...(process.env["BENCH_PGLITE"] === "0" ? [] : (["PGlite"] as const)),
    ...(process.env["BENCH_POSTGRES"] === "0" ? [] : (["PostgreSQL"] as const))
  ]
  const rows: Array<string> = []
  try {
    for (const db of dbs) {
      const bare = await bareFetchLoop(site.origin)
      console.log(`  bare fetch loop: ${fmt(bare / 1000, 1)} s, ${fmt((pages * 1000) / bare, 1)} pages/s`)
      const run = await crawlThrough(db, site)
      const walkRate = (run.kept * 1000) / run.walkMs
      console.log(
        `  ${db}: walk ${fmt(run.walkMs / 1000, 1)} s (${fmt(walkRate, 1)} pages/s), indexed after ${fmt(run.indexedMs / 1000, 1)} s, ` +
          `${run.kept} kept, ${run.indexed} indexed, ${run.failed} failed, skipped ${JSON.stringify(run.skipped)}, ${run.requests} requests; ` +
          `every page refreshed in ${fmt(run.refreshMs / 1000, 1)} s (${run.notModified} answered 304), ${ratio(run.refreshMs, run.indexedMs)} of the crawl`
      )
      rows.push(
        `| ${db} | ${pages} | ${fmt(bare / 1000, 1)} s (${fmt((pages * 1000) / bare, 1)}/s) | ${fmt(run.walkMs / 1000, 1)} s ` +
          `(${fmt(walkRate, 1)}/s) | ${ratio(run.walkMs, bare)} | ${fmt(run.indexedMs / 1000, 1)} s (${fmt((run.indexed * 1000) / run.indexedMs, 1)}/s) | ` +
          `${run.kept} / ${run.indexed} / ${run.failed} | ${run.skipped["not_html"] ?? 0} | ${run.requests} | ` +
          `${fmt(run.refreshMs / 1000, 1)} s, ${run.notModified} × 304 | ${ratio(run.refreshMs, run.indexedMs)} | ${fmt(run.load, 2)} |`
      )
    }
  } finally {
    site.close()
  }
  return {
    title: "Crawl",
    lines: [
      `A local site of ${pages} pages (robots.txt, a sitemap of every other page, each page linking to the next three, the home ` +
        "page and an image), crawled through the service by one agent of a pro workspace; beside it, the same pages fetched one " +
        "at a time by a bare loop in this process. Walk: from the request until the crawl is `completed` (every page read " +
        "once, kept as a source); indexed: until every kept page's source is indexed or failed. Requests: what the site " +
        "received during the crawl (robots.txt and the sitemap included). Refresh: then a round of every kept page asked " +
        "for (`POST …/knowledge/refresh`), the site unchanged (each page answers a conditional GET with 304), until every " +
        "page was read again; refresh / crawl: its time against the crawl's until indexed.",
      "",
      "| database | pages | bare fetch loop | walk | walk / bare | indexed | kept / indexed / failed | images skipped | requests | refresh of the unchanged site | refresh / crawl | load at start |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
      ...rows
    ]
  }
}
