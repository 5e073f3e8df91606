/**
 * Hostile inputs one workspace can configure or point the service at, each run against a service while a second
 * client probes `/healthz` every 50 ms (`probe.ts`): catastrophic form patterns, a robots.txt of many wildcards
 * on a long address, a sitemap of unclosed tags at the size limit with impossible character references, a crawl
 * of a tarpit site beside another workspace's crawl, a webhook tarpit beside another workspace's deliveries.
 * Shared by the bundle suite (`test/dist/stall.test.ts`, which holds the bounds) and `npm run bench -- stall`
 * (which prints the figures beside an idle service's probe). Peers listen on 127.0.0.1 and are closed by
 * `cleanupAll`; every wait is bounded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createServer as createNetServer, type Socket } from "node:net"
import type { AddressInfo } from "node:net"
import { host, onCleanup, sleep } from "./lib.js"
import { type ProbeReport, startProbe } from "./probe.js"

/** A workspace of the `pro` plan with a sandbox secret key and a sandbox forms key. */
export interface Tenant {
  readonly secret: string
  readonly forms: string
}

export interface Target {
  readonly base: string
  /** A new workspace (its own tenant: keys of one workspace never see another's data). */
  readonly tenant: (name: string) => Promise<Tenant>
}

export interface CaseResult {
  readonly name: string
  readonly probe: ProbeReport
  /** Whether every crawl (or the work the case started) came to an end within its bound. */
  readonly ended: boolean
  /** The other workspace's work alone and beside the hostile one, where the case has one (ms). */
  readonly aloneMs?: number
  readonly besideMs?: number
  /** What the case saw, for the report: a line each. */
  readonly notes: ReadonlyArray<string>
}

/** What the service's environment needs for these cases: short enough fetch timeouts that a tarpit crawl ends. */
export const stallEnv = {
  ALLOW_PRIVATE_URLS: "true",
  INGEST_FETCH_TIMEOUT_MS: "3000",
  RATE_LIMIT_RPS: "1000000",
  RATE_LIMIT_BURST: "1000000"
}

// HTTP

interface Answer {
  readonly status: number
  readonly body: any
  readonly text: string
  readonly ms: number
}

const request = async (
  target: Target,
  method: string,
  path: string,
  options: { readonly key?: string; readonly body?: unknown; readonly headers?: Record<string, string> } = {}
): Promise<Answer> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key !== undefined) headers["authorization"] = `Bearer ${options.key}`
  if (options.body !== undefined) headers["content-type"] = "application/json"
  const started = performance.now()
  const response = await fetch(`${target.base}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    signal: AbortSignal.timeout(60_000)
  })
  const text = await response.text()
  const ms = performance.now() - started
  let body: unknown = null
  try {
    body = JSON.parse(text)
  } catch {
    body = null
  }
  return { status: response.status, body, text, ms }
}

const expectStatus = async (target: Target, method: string, path: string, status: number, options: Parameters<typeof request>[3] = {}) => {
  const answer = await request(target, method, path, options)
  if (answer.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${answer.status}: ${answer.text.slice(0, 500)}`)
  return answer.body
}

const newAgent = async (target: Target, key: string, name: string): Promise<string> =>
  (await expectStatus(target, "POST", "/v1/agents", 201, { key, body: { type: "support", name } })).data.id

/** Polls `read` until `done`, every 200 ms, for at most `timeoutMs`; the last value and whether it was done. */
const until = async <A>(read: () => Promise<A>, done: (a: A) => boolean, timeoutMs: number): Promise<{ value: A; done: boolean }> => {
  const deadline = performance.now() + timeoutMs
  let value = await read()
  while (!done(value) && performance.now() < deadline) {
    await sleep(200)
    value = await read()
  }
  return { value, done: done(value) }
}

/** Runs `body` with the probe running, the probe's report beside its result. */
const probed = async <A>(target: Target, body: () => Promise<A>): Promise<{ result: A; probe: ProbeReport }> => {
  const probe = startProbe(target.base)
  try {
    const result = await body()
    return { result, probe: await probe.stop() }
  } catch (error) {
    await probe.stop()
    throw error
  }
}

/** The probe on the service while nothing runs, for `seconds`: what the other cases compare with. */
export const idle = async (target: Target, seconds = 5): Promise<CaseResult> => {
  const { probe } = await probed(target, () => sleep(seconds * 1000))
  return { name: "idle service", probe, ended: true, notes: [] }
}

// Peers

interface Site {
  readonly origin: string
  /** Requests answered or held, by path. */
  readonly requests: Array<string>
}

/** An HTTP site on 127.0.0.1; `answer` returning false leaves the request unanswered (a tarpit). */
const serve = (answer: (path: string, res: ServerResponse, origin: string, req: IncomingMessage) => boolean | void): Promise<Site> =>
  new Promise((resolve, reject) => {
    const requests: Array<string> = []
    let origin = ""
    const server = createServer((req, res) => {
      const path = req.url ?? "/"
      requests.push(path)
      answer(path, res, origin, req)
    })
    server.once("error", reject)
    server.listen(0, host, () => {
      origin = `http://${host}:${(server.address() as AddressInfo).port}`
      onCleanup(
        () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      )
      resolve({ origin, requests })
    })
  })

/** A receiver that accepts connections and never answers a byte; its sockets are held until cleanup. */
const tarpitReceiver = (): Promise<{ readonly origin: string; readonly connections: () => number }> =>
  new Promise((resolve, reject) => {
    const sockets = new Set<Socket>()
    let connections = 0
    const server = createNetServer((socket) => {
      connections++
      sockets.add(socket)
      socket.on("error", () => undefined)
      socket.once("close", () => sockets.delete(socket))
    })
    server.once("error", reject)
    server.listen(0, host, () => {
      onCleanup(
        () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      )
      resolve({ origin: `http://${host}:${(server.address() as AddressInfo).port}`, connections: () => connections })
    })
  })

const html = (res: ServerResponse, body: string): void => {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
  res.end(body)
}

const text = (res: ServerResponse, body: string, type = "text/plain"): void => {
  res.writeHead(200, { "content-type": type })
  res.end(body)
}

const page = (title: string, links: ReadonlyArray<string>) =>
  `<!doctype html><html><head><title>${title}</title></head><body><article><h1>${title}</h1>` +
  `<p>${title} explains how orders, returns and refunds work for customers of the shop.</p>` +
  `<p>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</p></article></body></html>`

// Crawls

const crawlEnds = new Set(["completed", "failed", "canceled"])

/** Starts a crawl of `url` and waits (at most `timeoutMs`) for its end; the crawl as last read. */
const crawl = async (target: Target, key: string, agentId: string, url: string, limit: number, timeoutMs: number) => {
  const created = await expectStatus(target, "POST", `/v1/agents/${agentId}/crawls`, 201, { key, body: { url, limit } })
  const read = async () => (await expectStatus(target, "GET", `/v1/agents/${agentId}/crawls/${created.data.id}`, 200, { key })).data
  return until(read, (c: any) => crawlEnds.has(c.status), timeoutMs)
}

// The cases

/**
 * Spellings of catastrophic backtracking, each set on a form field: refused when the form is written, or
 * accepted and then given values that make a backtracking engine explode (28 letters and one other character;
 * the longest value a pattern runs on). `ms`: the submission's answer time.
 */
export const hostilePatterns = [
  "(a+)+",
  "((a)+)+",
  "(?:a+)+",
  "(a|a)*",
  "(a|aa)*",
  "(?:a|a?)+",
  "a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b",
  "(\\w+\\s?)*",
  "(.*a){12}",
  "([a-z]+)*[0-9]",
  // Unicode properties and sets, each first named here in the process
  "(\\p{L}+\\p{Zs}?)*",
  "([\\p{Alphabetic}--\\p{Script=Greek}]+\\s?)*[\\p{Nd}]"
] as const

export const patterns = async (target: Target): Promise<CaseResult & { readonly submissions: ReadonlyArray<{ pattern: string; status: number; ms: number }>; readonly refused: ReadonlyArray<string> }> => {
  const tenant = await target.tenant("Hostile patterns")
  const agentId = await newAgent(target, tenant.secret, "Patterns desk")
  const submissions: Array<{ pattern: string; status: number; ms: number }> = []
  const refused: Array<string> = []
  const values = ["a".repeat(28) + "!", "a".repeat(1_999) + "!"]
  const { probe } = await probed(target, async () => {
    for (const pattern of hostilePatterns) {
      const created = await request(target, "POST", "/v1/forms", {
        key: tenant.secret,
        body: {
          title: { en: "Hostile" },
          fields: [
            { id: "email", type: "email", label: { en: "E-mail" }, required: true },
            { id: "code", type: "text", label: { en: "Code" }, required: true, pattern },
            { id: "body", type: "textarea", label: { en: "Message" }, required: true }
          ],
          submit_label: { en: "Send" },
          success_message: { en: "Thanks" },
          target: { type: "ticket", agent_id: agentId },
          settings: { rate_limit: { max: 1000, window_seconds: 60 } }
        }
      })
      if (created.status === 400) {
        refused.push(pattern)
        continue
      }
      if (created.status !== 201) throw new Error(`POST /v1/forms (${pattern}): ${created.status} ${created.text.slice(0, 300)}`)
      for (const value of values) {
        const submitted = await request(target, "POST", `/api/forms/${created.body.data.id}/submit`, {
          headers: { "service-api-key": tenant.forms },
          body: { fields: { email: "visitor@example.com", code: value, body: "A message about my order." } }
        })
        submissions.push({ pattern, status: submitted.status, ms: submitted.ms })
      }
    }
  })
  const slowest = submissions.reduce((m, s) => Math.max(m, s.ms), 0)
  return {
    name: "catastrophic form patterns",
    probe,
    ended: true,
    submissions,
    refused,
    notes: [`${refused.length} of ${hostilePatterns.length} refused at write time; slowest hostile submission ${slowest.toFixed(0)} ms`]
  }
}

/** robots.txt rules of eight wildcards each, met on start and linked addresses of 60 letters and more. */
export const robots = async (target: Target): Promise<CaseResult> => {
  const tenant = await target.tenant("Hostile robots")
  const agentId = await newAgent(target, tenant.secret, "Robots desk")
  const long = (n: number) => `/${"a".repeat(60 + n)}`
  const rules = Array.from({ length: 200 }, (_, i) => `Disallow: /*a*a*a*a*a*a*a*a*${String.fromCharCode(98 + (i % 20))}${i}`)
  const site = await serve((path, res) => {
    if (path === "/robots.txt") return text(res, `User-agent: *\n${rules.join("\n")}\n`)
    const n = path.length - 61
    html(res, page(`Page ${n}`, [long(n + 1), long(n + 2), long(n + 3)]))
  })
  const { result, probe } = await probed(target, () => crawl(target, tenant.secret, agentId, `${site.origin}${long(0)}`, 20, 120_000))
  return {
    name: "robots.txt of many wildcards on long addresses",
    probe,
    ended: result.done,
    notes: [`crawl ${result.value.status}, ${site.requests.length} requests, pages ${JSON.stringify(result.value.pages)}`]
  }
}

/** The protocol's bound on a sitemap (50 MB): the hostile sitemap is just under it. */
const sitemapBytes = 50 * 1024 * 1024 - 1024

/**
 * A sitemap of `<url>` tags that never close, at the size limit, after a few entries whose `<loc>` holds
 * character references no code point has.
 */
export const sitemap = async (target: Target): Promise<CaseResult> => {
  const tenant = await target.tenant("Hostile sitemap")
  const agentId = await newAgent(target, tenant.secret, "Sitemap desk")
  let body: Buffer | undefined
  const site = await serve((path, res, origin) => {
    if (path === "/robots.txt") return text(res, `User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap.xml\n`)
    if (path === "/sitemap.xml") {
      if (body === undefined) {
        const head =
          `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
          `<url><loc>${origin}/kept</loc></url>` +
          `<url><loc>${origin}/bad&#99999999;</loc></url>` +
          `<url><loc>${origin}/surrogate&#xD800;</loc></url>` +
          `<url><loc>${origin}/huge&#x110000;</loc></url>`
        body = Buffer.alloc(sitemapBytes, "<url>")
        body.write(head, 0)
      }
      res.writeHead(200, { "content-type": "application/xml", "content-length": String(body.length) })
      res.end(body)
      return
    }
    html(res, page(`Page ${path}`, []))
  })
  const { result, probe } = await probed(target, () => crawl(target, tenant.secret, agentId, `${site.origin}/`, 20, 180_000))
  return {
    name: "sitemap of unclosed tags at the size limit",
    probe,
    ended: result.done,
    notes: [`crawl ${result.value.status}, requests ${JSON.stringify(site.requests.slice(0, 10))}, pages ${JSON.stringify(result.value.pages)}`]
  }
}

/** A quick site of `pages` pages linked in a chain from its home page. */
const quickSite = (pages: number) =>
  serve((path, res) => {
    if (path === "/robots.txt") return text(res, "User-agent: *\nAllow: /\n")
    const n = path === "/" ? 0 : Number(path.slice(3))
    html(res, page(`Help ${n}`, n + 1 < pages ? [`/p/${n + 1}`, `/p/${Math.min(pages - 1, n + 2)}`] : []))
  })

/**
 * A site that answers its robots.txt and sitemap at once and never answers a page, crawled by one workspace,
 * beside another workspace's crawl of a quick site; that crawl is timed alone first, then beside the tarpit (the
 * faster of two rounds each).
 */
export const crawlTarpit = async (target: Target): Promise<CaseResult> => {
  const hostile = await target.tenant("Tarpit crawler")
  const other = await target.tenant("Bystander crawler")
  const hostileAgents = await Promise.all([1, 2].map((i) => newAgent(target, hostile.secret, `Tarpit desk ${i}`)))
  const tarpits = await Promise.all(
    [1, 2].map(() =>
      serve((path, res, origin) => {
        if (path === "/robots.txt") return text(res, `User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap.xml\n`)
        if (path === "/sitemap.xml") {
          const locs = Array.from({ length: 6 }, (_, i) => `<url><loc>${origin}/slow/${i}</loc></url>`)
          return text(res, `<urlset>${locs.join("")}</urlset>`, "application/xml")
        }
        return false // the page is never answered
      })
    )
  )
  // each round the same work: a site of its own for an agent of its own (a site crawled again is a refresh)
  const timedCrawl = async (round: string) => {
    const quick = await quickSite(20)
    const agentId = await newAgent(target, other.secret, `Quick desk ${round}`)
    const started = performance.now()
    const result = await crawl(target, other.secret, agentId, `${quick.origin}/`, 20, 120_000)
    if (result.value.status !== "completed") throw new Error(`the bystander's crawl ended ${result.value.status}`)
    return performance.now() - started
  }
  // the faster of two rounds each: a machine's noise only ever adds time
  const aloneMs = Math.min(await timedCrawl("alone 1"), await timedCrawl("alone 2"))
  const { result, probe } = await probed(target, async () => {
    const hostileCrawls = tarpits.map((site, i) => crawl(target, hostile.secret, hostileAgents[i]!, `${site.origin}/`, 6, 240_000))
    await sleep(500) // the tarpit crawls hold their slots first
    const besideMs = Math.min(await timedCrawl("beside 1"), await timedCrawl("beside 2"))
    return { besideMs, hostile: await Promise.all(hostileCrawls) }
  })
  return {
    name: "crawl of a tarpit site beside another workspace's crawl",
    probe,
    ended: result.hostile.every((c) => c.done),
    aloneMs,
    besideMs: result.besideMs,
    notes: [
      `the bystander's crawl, the faster of two rounds: ${aloneMs.toFixed(0)} ms alone, ${result.besideMs.toFixed(0)} ms beside`,
      `tarpit crawls: ${result.hostile.map((c) => `${c.value.status} ${JSON.stringify(c.value.pages)}`).join("; ")}`
    ]
  }
}

/**
 * One workspace with two subscriptions to a receiver that accepts connections and never answers, and 40 events
 * (each to both); another workspace's deliveries of `count` events to a healthy receiver, timed alone first
 * (from the first event's request until the last delivery arrived; the faster of two rounds), then beside the
 * tarpit (likewise), while its deliveries hold their share of the dispatcher's slots. As many events as
 * the hostile workspace's by default: a few deliveries take a few hundred milliseconds, where a machine's noise
 * alone moves the ratio by half.
 */
export const webhookTarpit = async (target: Target, count = 40): Promise<CaseResult> => {
  const hostile = await target.tenant("Tarpit receiver")
  const other = await target.tenant("Bystander receiver")
  const tarpit = await tarpitReceiver()
  const received: Array<number> = []
  const healthy = await serve((_path, res, _origin, req) => {
    req.resume()
    req.once("end", () => {
      received.push(performance.now())
      res.writeHead(200).end("ok")
    })
  })
  for (const path of ["/a", "/b"]) {
    await expectStatus(target, "POST", "/v1/webhooks", 201, { key: hostile.secret, body: { url: `${tarpit.origin}${path}`, events: ["agent.created"] } })
  }
  await expectStatus(target, "POST", "/v1/webhooks", 201, { key: other.secret, body: { url: `${healthy.origin}/hooks`, events: ["agent.created"] } })
  const timedDeliveries = async (round: string) => {
    const before = received.length
    const started = performance.now()
    for (let i = 0; i < count; i++) await newAgent(target, other.secret, `${round} ${i}`)
    const delivered = await until(async () => received.length - before, (n) => n >= count, 120_000)
    if (!delivered.done) throw new Error(`the bystander's deliveries: ${delivered.value} of ${count} arrived`)
    return received[before + count - 1]! - started
  }
  // the faster of two rounds each: a machine's noise only ever adds time
  const aloneMs = Math.min(await timedDeliveries("alone 1"), await timedDeliveries("alone 2"))
  const { result, probe } = await probed(target, async () => {
    for (let i = 0; i < 40; i++) await newAgent(target, hostile.secret, `Tarpit ${i}`)
    await until(async () => tarpit.connections(), (n) => n >= 8, 10_000) // the tarpit holds what its share allows
    return Math.min(await timedDeliveries("beside 1"), await timedDeliveries("beside 2"))
  })
  return {
    name: "webhook tarpit beside another workspace's deliveries",
    probe,
    ended: true,
    aloneMs,
    besideMs: result,
    notes: [
      `the bystander's ${count} deliveries, the faster of two rounds: ${aloneMs.toFixed(0)} ms alone, ${result.toFixed(0)} ms beside`,
      `connections the tarpit held: ${tarpit.connections()}`
    ]
  }
}
