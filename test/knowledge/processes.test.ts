/**
 * Ingestion across real processes, on the wall clock.
 *
 * 1. SIGKILL mid-batch: the service (child process; embedded PGlite on a temp
 *    DATA_DIR, or a throwaway PostgreSQL database when DATABASE_URL is set)
 *    ingests 20 slow local pages; once a few are indexed it is killed with
 *    SIGKILL and started again on the same data. Every source ends indexed
 *    (the killed job is taken over when its lease lapses: 3 s here); none stays
 *    `processing` or `pending`.
 * 2. Two processes on one PostgreSQL (always a throwaway database on the local
 *    server: that is the point) ingest one agent's 40 URLs: the recorded
 *    processing intervals of that agent's sources never overlap, and the site
 *    never serves two of them at once.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import {
  bootstrapSecret,
  type Child,
  cleanupAll,
  createAgent,
  freePort,
  host,
  pg,
  serviceEnv,
  sleep,
  spawnService,
  startTimed,
  tempDir,
  throwawayDatabase
} from "../../scripts/bench/lib.js"

afterAll(cleanupAll)

interface SlowSite {
  readonly origin: string
  /** Most requests in flight at once. */
  readonly maxInFlight: () => number
  readonly close: () => Promise<void>
}

const slowSite = (delayMillis: number): Promise<SlowSite> =>
  new Promise((resolve) => {
    let inFlight = 0
    let max = 0
    const server: Server = createServer((req, res) => {
      inFlight++
      max = Math.max(max, inFlight)
      setTimeout(() => {
        inFlight--
        res.writeHead(200, { "content-type": "text/html" })
        res.end(
          `<!doctype html><html><head><title>Page ${req.url}</title></head><body><article><h1>Page ${req.url}</h1>` +
            `<h2>Delivery</h2><p>Orders for ${req.url} ship within two days and arrive within a week.</p>` +
            `<h2>Returns</h2><p>Returns of ${req.url} are accepted within thirty days.</p></article></body></html>`
        )
      }, delayMillis)
    })
    server.listen(0, host, () =>
      resolve({
        origin: `http://${host}:${(server.address() as AddressInfo).port}`,
        maxInFlight: () => max,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    )
  })

const ingestEnv = (port: number, extra: Record<string, string>) =>
  serviceEnv({
    PORT: String(port),
    ALLOW_PRIVATE_URLS: "true",
    INGEST_LEASE_MS: "3000",
    INGEST_POLL_MS: "200",
    RATE_LIMIT_RPS: "100000",
    RATE_LIMIT_BURST: "100000",
    ...extra
  })

const api = async (base: string, key: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000)
  })
  return { status: res.status, body: (await res.json()) as any }
}

const statuses = async (base: string, key: string, agentId: string) => {
  const all: Array<{ id: string; status: string }> = []
  let after: string | null = null
  for (let page = 0; page < 10; page++) {
    const query: string = after === null ? "?limit=100" : `?limit=100&starting_after=${after}`
    const r = await api(base, key, "GET", `/v1/agents/${agentId}/knowledge${query}`)
    all.push(...r.body.data)
    if (!r.body.meta.pagination.has_more) break
    after = r.body.meta.pagination.next_cursor
  }
  return all
}

/** Polls (every 200 ms, at most `limitMillis`) until `done` holds for the agent's sources. */
const waitFor = async (
  base: string,
  key: string,
  agentId: string,
  done: (sources: ReadonlyArray<{ status: string }>) => boolean,
  limitMillis: number
) => {
  const deadline = performance.now() + limitMillis
  let last: ReadonlyArray<{ status: string }> = []
  while (performance.now() < deadline) {
    last = await statuses(base, key, agentId)
    if (done(last)) return last
    await sleep(200)
  }
  throw new Error(`not reached in ${limitMillis} ms: ${JSON.stringify(last.map((s) => s.status))}`)
}

const count = (sources: ReadonlyArray<{ status: string }>, status: string) => sources.filter((s) => s.status === status).length

describe("ingestion across processes", () => {
  it("SIGKILL mid-batch, then restart: every source ends indexed, none stays processing", async () => {
    const site = await slowSite(150)
    const port = await freePort()
    const extra: Record<string, string> = process.env["DATABASE_URL"]
      ? { DATABASE_URL: await throwawayDatabase({ serverUrl: process.env["DATABASE_URL"], prefix: "t_ingest" }) }
      : { DATA_DIR: await tempDir("ingest-crash") }
    const env = ingestEnv(port, extra)
    const base = `http://${host}:${port}`
    let child: Child = (await startTimed(() => spawnService(env), port)).child
    try {
      const key = bootstrapSecret(child)
      const agentId = await createAgent(base, key)
      const urls = Array.from({ length: 20 }, (_, i) => `${site.origin}/p${i}`)
      const batch = await api(base, key, "POST", `/v1/agents/${agentId}/knowledge/batch`, { urls })
      expect(batch.status).toBe(201)
      const before = await waitFor(base, key, agentId, (s) => count(s, "indexed") >= 3, 60_000)
      child.process.kill("SIGKILL")
      await new Promise<void>((resolve) => (child.process.exitCode !== null || child.process.signalCode !== null ? resolve() : child.process.once("exit", () => resolve())))
      expect(count(before, "indexed")).toBeLessThan(20)

      child = (await startTimed(() => spawnService(env), port)).child
      const after = await waitFor(base, key, agentId, (s) => s.length === 20 && s.every((x) => x.status === "indexed" || x.status === "failed"), 120_000)
      expect(count(after, "indexed")).toBe(20)
      expect(count(after, "processing")).toBe(0)
    } finally {
      child.process.kill("SIGTERM")
      await site.close()
    }
  }, 240_000)

  it("two processes on one PostgreSQL never run two of one agent's 40 URLs at once", async () => {
    const site = await slowSite(100)
    const databaseUrl = await throwawayDatabase({
      ...(process.env["DATABASE_URL"] ? { serverUrl: process.env["DATABASE_URL"] } : {}),
      prefix: "t_ingest2"
    })
    const ports = [await freePort(), await freePort()]
    const first = await startTimed(() => spawnService(ingestEnv(ports[0]!, { DATABASE_URL: databaseUrl })), ports[0]!)
    const second = await startTimed(() => spawnService(ingestEnv(ports[1]!, { DATABASE_URL: databaseUrl })), ports[1]!)
    try {
      const key = bootstrapSecret(first.child)
      const bases = ports.map((p) => `http://${host}:${p}`)
      const agentId = await createAgent(bases[0]!, key)
      const urls = Array.from({ length: 40 }, (_, i) => `${site.origin}/q${i}`)
      // half the sources through each process, so both have jobs to claim and wake up for
      const a = await api(bases[0]!, key, "POST", `/v1/agents/${agentId}/knowledge/batch`, { urls: urls.slice(0, 20) })
      const b = await api(bases[1]!, key, "POST", `/v1/agents/${agentId}/knowledge/batch`, { urls: urls.slice(20) })
      expect([a.status, b.status]).toEqual([201, 201])
      const done = await waitFor(bases[1]!, key, agentId, (s) => s.length === 40 && s.every((x) => x.status === "indexed"), 180_000)
      expect(done).toHaveLength(40)

      const client = new pg.Client({ connectionString: databaseUrl })
      await client.connect()
      try {
        const { rows } = await client.query<{ started_at: Date; finished_at: Date }>(
          "select started_at, finished_at from knowledge_sources where agent_id = $1 order by seq",
          [agentId]
        )
        expect(rows).toHaveLength(40)
        for (let i = 1; i < rows.length; i++) {
          expect(rows[i]!.started_at.getTime(), `source ${i}`).toBeGreaterThanOrEqual(rows[i - 1]!.finished_at.getTime())
        }
      } finally {
        await client.end()
      }
      expect(site.maxInFlight()).toBe(1)
    } finally {
      first.child.process.kill("SIGTERM")
      second.child.process.kill("SIGTERM")
      await site.close()
    }
  }, 240_000)
})
