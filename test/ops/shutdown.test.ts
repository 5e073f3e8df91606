/**
 * Graceful shutdown of the real process (`node --import tsx src/main.ts`, so the
 * pid is the server), on the wall clock, on PGlite (a temp DATA_DIR) or, when
 * DATABASE_URL is set, a throwaway database of that server:
 *
 * 1. SIGTERM while a request is in flight (its body still arriving): new
 *    connections are refused at once, the request completes with its answer,
 *    and the process exits 0 well within `SHUTDOWN_GRACE_MS`. (The order of
 *    all the stages is held by test/http/drain.test.ts.)
 * 2. SIGTERM while a request never completes: it is cut when the grace is over
 *    and the process still exits 0, shortly after the grace.
 * 3. Two processes on one PostgreSQL (a throwaway database on the local server):
 *    the first holds an ingestion job (its page is slow to answer) with a 60 s
 *    lease; SIGTERM on it hands the job back, and the second process takes it
 *    within seconds, not after the lease.
 */
import { request as httpRequest, createServer, type ClientRequest, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import {
  bootstrapSecret,
  type Child,
  cleanupAll,
  createAgent,
  freePort,
  host,
  serviceEnv,
  sleep,
  spawnService,
  startTimed,
  tempDir,
  throwawayDatabase
} from "../../scripts/bench/lib.js"

afterAll(cleanupAll)

const exitOf = (child: Child) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
    const p = child.process
    if (p.exitCode !== null || p.signalCode !== null) return resolve({ code: p.exitCode, signal: p.signalCode, at: performance.now() })
    p.once("exit", (code, signal) => resolve({ code, signal, at: performance.now() }))
  })

/** A new connection to `/readyz`: `refused`, or the status it answered. */
const connect = async (base: string): Promise<"refused" | number> => {
  try {
    const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) })
    await res.text()
    return res.status
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code
    return code === "ECONNREFUSED" ? "refused" : -1
  }
}

/** POST /v1/agents whose body is sent in two halves: the request is in flight until `finish()`. */
const slowCreate = (base: string, token: string) => {
  const body = Buffer.from(JSON.stringify({ type: "support", name: "Created during shutdown" }))
  const url = new URL(`${base}/v1/agents`)
  let req: ClientRequest | undefined
  const response = new Promise<{ status: number; text: string; connection: string | undefined }>((resolve, reject) => {
    req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        agent: false,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": body.length }
      },
      (res: IncomingMessage) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (text += chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text, connection: res.headers.connection }))
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    req.write(body.subarray(0, 10))
  })
  return { response, finish: () => req!.end(body.subarray(10)) }
}

/** The database of a one-process test: a throwaway PostgreSQL database when DATABASE_URL is set, else PGlite in a temp dir. */
const databaseOf = async (label: string): Promise<Record<string, string>> =>
  process.env["DATABASE_URL"]
    ? { DATABASE_URL: await throwawayDatabase({ serverUrl: process.env["DATABASE_URL"], prefix: `t_${label}` }) }
    : { DATA_DIR: await tempDir(label) }

const envFor = (port: number, extra: Record<string, string>) =>
  serviceEnv({ PORT: String(port), RATE_LIMIT_RPS: "100000", RATE_LIMIT_BURST: "100000", ...extra })

describe("graceful shutdown", () => {
  it("SIGTERM: new connections refused at once, the request in flight completes, exit 0 within the grace", async () => {
    const port = await freePort()
    const base = `http://${host}:${port}`
    const env = envFor(port, { ...(await databaseOf("shutdown")), SHUTDOWN_GRACE_MS: "8000" })
    const child = (await startTimed(() => spawnService(env), port)).child
    const token = bootstrapSecret(child)
    const exited = exitOf(child)
    const inFlight = slowCreate(base, token)
    await sleep(300) // the request has reached the handler, which waits for the rest of its body
    const signalledAt = performance.now()
    child.process.kill("SIGTERM")
    await sleep(300)
    expect(await connect(base)).toBe("refused")
    inFlight.finish()
    const answer = await inFlight.response
    expect(answer.status, answer.text).toBe(201)
    expect(JSON.parse(answer.text).data).toMatchObject({ object: "agent", name: "Created during shutdown" })
    // the connection is not kept for another request
    expect(answer.connection).toBe("close")
    const exit = await exited
    expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null })
    expect(exit.at - signalledAt).toBeLessThan(8_000)
    // the stop's stages in `shutdownOrder` (src/Server.ts): the listeners close first, the request is waited for after
    const output = child.output()
    expect(output).toMatch(/shutting down: listeners closed, 1 requests in flight/)
    expect(output.indexOf("shutting down: requests in flight ended")).toBeGreaterThan(output.indexOf("shutting down: listeners closed"))
  }, 120_000)

  it("a request still open when the grace is over is cut, and the process exits 0 just after the grace", async () => {
    const port = await freePort()
    const base = `http://${host}:${port}`
    const env = envFor(port, { ...(await databaseOf("shutdown_cut")), SHUTDOWN_GRACE_MS: "1500" })
    const child = (await startTimed(() => spawnService(env), port)).child
    const token = bootstrapSecret(child)
    const exited = exitOf(child)
    const stuck = slowCreate(base, token)
    const outcome = stuck.response.then(
      (r) => `answered ${r.status}`,
      (error: Error & { code?: string }) => `cut (${error.code ?? error.message})`
    )
    await sleep(300)
    const signalledAt = performance.now()
    child.process.kill("SIGTERM")
    const exit = await exited
    expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null })
    expect(exit.at - signalledAt).toBeGreaterThanOrEqual(1_400)
    expect(exit.at - signalledAt).toBeLessThan(6_000)
    expect(await outcome).toMatch(/^cut/)
    expect(child.output()).toMatch(/shutdown grace of 1500 ms over: cutting 1 requests/)
  }, 120_000)

  it("SIGTERM hands a held job over at once: a second process on the same PostgreSQL takes it long before its 60 s lease", async () => {
    // the page: its first request is held until the test lets it go (never, here), later ones answer at once
    const requests: Array<number> = []
    const held: Array<() => void> = []
    const site: Server = createServer((req, res) => {
      requests.push(performance.now())
      const answer = () =>
        res
          .writeHead(200, { "content-type": "text/html" })
          .end(`<html><head><title>Held</title></head><body><article><h1>Held page</h1><p>Orders ship in two days.</p></article></body></html>`)
      if (requests.length === 1) held.push(answer)
      else answer()
    })
    await new Promise<void>((resolve) => site.listen(0, host, () => resolve()))
    const siteUrl = `http://${host}:${(site.address() as AddressInfo).port}/held`
    const databaseUrl = await throwawayDatabase({
      ...(process.env["DATABASE_URL"] ? { serverUrl: process.env["DATABASE_URL"] } : {}),
      prefix: "t_handover"
    })
    const extra = { DATABASE_URL: databaseUrl, ALLOW_PRIVATE_URLS: "true", INGEST_LEASE_MS: "60000", INGEST_POLL_MS: "200", SHUTDOWN_GRACE_MS: "2000",
      // the held fetch must not time out (and be retried) while the second process starts on a busy machine
      INGEST_FETCH_TIMEOUT_MS: "600000" }
    const ports = [await freePort(), await freePort()] as const
    const first = (await startTimed(() => spawnService(envFor(ports[0], extra)), ports[0])).child
    let second: Child | undefined
    try {
      const key = bootstrapSecret(first)
      const bases = ports.map((p) => `http://${host}:${p}`)
      const agentId = await createAgent(bases[0]!, key)
      const created = await fetch(`${bases[0]}/v1/agents/${agentId}/knowledge`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ type: "url", url: siteUrl })
      })
      expect(created.status).toBe(201)
      for (let i = 0; i < 100 && requests.length === 0; i++) await sleep(100)
      expect(requests).toHaveLength(1)
      // the first process holds the job (the site holds its page); only now does the second one start
      second = (await startTimed(() => spawnService(envFor(ports[1], extra)), ports[1])).child
      expect(requests).toHaveLength(1)
      const signalledAt = performance.now()
      first.process.kill("SIGTERM")
      const exit = await exitOf(first)
      expect(exit.code).toBe(0)
      // the second process takes the job: the page is asked for again and the source ends indexed
      let status = ""
      let attempts = 0
      for (let i = 0; i < 300 && status !== "indexed"; i++) {
        await sleep(100)
        const r = await fetch(`${bases[1]}/v1/agents/${agentId}/knowledge`, { headers: { authorization: `Bearer ${key}` } })
        const listed = ((await r.json()) as { data: Array<{ status: string; attempts: number }> }).data[0]
        status = listed?.status ?? ""
        attempts = listed?.attempts ?? 0
      }
      expect(status).toBe("indexed")
      // the attempt handed back on shutdown is not counted: the source shows the one that indexed it
      expect(attempts).toBe(1)
      expect(requests).toHaveLength(2)
      const handedOverAfter = requests[1]! - signalledAt
      console.log(`[shutdown] second process asked for the page ${Math.round(handedOverAfter)} ms after the SIGTERM (lease 60 s)`)
      expect(handedOverAfter).toBeLessThan(10_000)
    } finally {
      for (const answer of held) answer()
      second?.process.kill("SIGTERM")
      first.process.kill("SIGTERM")
      await new Promise<void>((resolve) => {
        site.closeAllConnections()
        site.close(() => resolve())
      })
    }
  }, 180_000)
})
