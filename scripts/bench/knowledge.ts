/**
 * Knowledge ingestion on PGlite with the `local` AI provider: `pages` local
 * HTML pages of 5–20 KB (served by this process on 127.0.0.1) sent as one
 * batch to one agent, timed from the batch request until every source is
 * indexed or failed (the newest source polled every 250 ms). Against a bare loop in this
 * process doing the same fetch + extract (Readability on linkedom, the same
 * code) + insert of the chunks into an in-memory PGlite, one page at a time
 * as the service does for one agent. Reported: total time, pages/s, the ratio,
 * and the service's peak RSS (sampled every 200 ms from /proc).
 */
import { PGlite } from "@electric-sql/pglite"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { chunk } from "../../src/knowledge/Chunk.js"
import { fromHtml } from "../../layers/extractor/Documents.js"
import {
  bootstrapSecret,
  createAgent,
  fmt,
  freePort,
  host,
  noRateLimit,
  ratio,
  rssMb,
  type Section,
  serviceEnv,
  sleep,
  spawnService,
  startTimed,
  stop,
  tempDir
} from "./lib.js"

// BENCH_PAGES shortens runs while working on the script
const pages = Number(process.env["BENCH_PAGES"] ?? 500)

const words = "delivery order return refund payment account password invoice warranty shipping parcel customer support store price discount size colour stock exchange tracking".split(" ")

/** Page n: deterministic, 5–20 KB of sections and paragraphs. */
const pageHtml = (n: number): string => {
  const target = 5_000 + ((n * 7919) % 15_000)
  const sections: Array<string> = []
  let size = 0
  for (let s = 0; size < target; s++) {
    const topic = words[(n + s) % words.length]!
    const sentences = Array.from({ length: 6 }, (_, i) => {
      const a = words[(n * 3 + s * 5 + i) % words.length]
      const b = words[(n + s * 7 + i * 3) % words.length]
      return `The ${a} policy for page ${n} explains how ${b} works for every ${topic} request number ${s * 10 + i}.`
    }).join(" ")
    const section = `<h2>${topic} ${s}</h2><p>${sentences}</p>`
    sections.push(section)
    size += section.length
  }
  return `<!doctype html><html><head><title>Help page ${n}</title></head><body><nav>Home About</nav><article><h1>Help page ${n}</h1>${sections.join("\n")}</article><footer>Example</footer></body></html>`
}

const serveSite = () =>
  new Promise<{ origin: string; close: () => void }>((resolve) => {
    const cache = new Map<number, string>()
    const server = createServer((req, res) => {
      const n = Number(/^\/p\/(\d+)$/.exec(req.url ?? "")?.[1] ?? -1)
      if (n < 0) {
        res.writeHead(404)
        return res.end()
      }
      if (!cache.has(n)) cache.set(n, pageHtml(n))
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      res.end(cache.get(n))
    })
    server.listen(0, host, () =>
      resolve({
        origin: `http://${host}:${(server.address() as AddressInfo).port}`,
        close: () => {
          server.closeAllConnections()
          server.close()
        }
      })
    )
  })

const bareLoop = async (urls: ReadonlyArray<string>) => {
  const db = await PGlite.create()
  await db.exec("create table chunks (id serial primary key, url text not null, position int not null, content text not null)")
  const started = performance.now()
  for (const url of urls) {
    const html = await (await fetch(url)).text()
    const doc = fromHtml(html, url)
    const pieces = chunk(`${doc.title}\n\n${doc.text}`)
    await db.transaction(async (tx) => {
      for (const [position, content] of pieces.entries()) {
        await tx.query("insert into chunks (url, position, content) values ($1, $2, $3)", [url, position, content])
      }
    })
  }
  const ms = performance.now() - started
  await db.close()
  return ms
}

export const knowledge = async (): Promise<Section> => {
  const site = await serveSite()
  const urls = Array.from({ length: pages }, (_, i) => `${site.origin}/p/${i}`)
  const kb = urls.map((_, i) => pageHtml(i).length / 1024)
  try {
    const port = await freePort()
    const env = serviceEnv({ PORT: String(port), DATA_DIR: await tempDir("knowledge"), ALLOW_PRIVATE_URLS: "true", ...noRateLimit })
    const { child } = await startTimed(() => spawnService(env), port)
    const base = `http://${host}:${port}`
    let peak = 0
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, rssMb(child.pid))
      } catch {
        // the process may be gone at the very end
      }
    }, 200)
    let serviceMs = 0
    let indexed = 0
    let failed = 0
    try {
      const key = bootstrapSecret(child)
      const agentId = await createAgent(base, key)
      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
      const started = performance.now()
      const batch = await fetch(`${base}/v1/agents/${agentId}/knowledge/batch`, {
        method: "POST",
        headers,
        body: JSON.stringify({ urls })
      })
      if (batch.status !== 201) throw new Error(`batch: ${batch.status} ${(await batch.text()).slice(0, 300)}`)
      // one agent's sources run in creation order: when the newest has settled, all have. Polling only it
      // keeps the poll's own load off the database the service is working on.
      const newest = async () =>
        ((await (await fetch(`${base}/v1/agents/${agentId}/knowledge?limit=1`, { headers })).json()) as any).data[0]
      const deadline = started + 30 * 60_000
      while (performance.now() < deadline) {
        const last = await newest()
        if (last.status === "indexed" || last.status === "failed") break
        await sleep(250)
      }
      serviceMs = performance.now() - started
      for (const status of ["indexed", "failed"] as const) {
        let n = 0
        let after: string | null = null
        for (let page = 0; page < 10; page++) {
          const q: string = `?limit=100&status=${status}${after === null ? "" : `&starting_after=${after}`}`
          const body = (await (await fetch(`${base}/v1/agents/${agentId}/knowledge${q}`, { headers })).json()) as any
          n += body.data.length
          if (!body.meta.pagination.has_more) break
          after = body.meta.pagination.next_cursor
        }
        if (status === "indexed") indexed = n
        else failed = n
      }
    } finally {
      clearInterval(sampler)
      await stop(child)
    }
    const bareMs = await bareLoop(urls)
    const lines = [
      `${pages} pages of ${fmt(Math.min(...kb), 1)}–${fmt(Math.max(...kb), 1)} KB (mean ${fmt(kb.reduce((a, b) => a + b, 0) / kb.length, 1)} KB), one agent, PGlite, \`local\` AI provider`,
      "",
      "| | time | pages/s | peak RSS |",
      "|---|---:|---:|---:|",
      `| service (batch → all settled; ${indexed} indexed, ${failed} failed) | ${fmt(serviceMs / 1000, 1)} s | ${fmt((pages / serviceMs) * 1000, 1)} | ${fmt(peak)} MB |`,
      `| bare loop (fetch + extract + chunk + insert, one process) | ${fmt(bareMs / 1000, 1)} s | ${fmt((pages / bareMs) * 1000, 1)} | |`,
      "",
      `Ratio service / bare loop: ${ratio(serviceMs, bareMs)} the time. The service also categorizes, generates Q&A, embeds chunks and Q&A, writes progress at each phase and an event per source.`
    ]
    for (const line of lines) console.log(line)
    return { title: "Knowledge ingestion", lines }
  } finally {
    site.close()
  }
}
