/**
 * Two service processes on one PostgreSQL database (a throwaway `t_scale_<hex>`
 * database of the server in DATABASE_URL; skipped without it: embedded PGlite is
 * one process by nature). A node:http receiver on 127.0.0.1 subscribes to
 * `agent.created`.
 *
 * 1. 2,000 agents are created, half through each process (10 requests at a time
 *    to each): while the receiver is healthy, every event arrives exactly once
 *    (one delivery per event, one event per agent, none for an unknown agent).
 * 2. The receiver then holds its answers: 20 more agents, so both processes hold
 *    deliveries in flight (30 s leases). SIGTERM on the first: it exits 0 within
 *    its grace, and the deliveries it held reach the receiver through the second
 *    process within seconds, not after the lease (a held delivery may arrive
 *    twice: at-least-once).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import {
  bootstrapSecret,
  type Child,
  cleanupAll,
  freePort,
  host,
  serviceEnv,
  sleep,
  spawnService,
  startTimed,
  throwawayDatabase
} from "../../scripts/bench/lib.js"

afterAll(cleanupAll, 60_000)

const databaseUrl = process.env["DATABASE_URL"]
if (databaseUrl === undefined) {
  console.log("test/ops/scaleout.test.ts skipped: two processes need PostgreSQL (set DATABASE_URL); PGlite is one process")
}

interface Delivery {
  readonly at: number
  readonly eventId: string
  readonly deliveryId: string
  readonly agentId: string | undefined
}

const startReceiver = async () => {
  const received: Array<Delivery> = []
  let holding = false
  const held: Array<ServerResponse> = []
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("error", () => undefined)
    req.on("end", () => {
      let agentId: string | undefined
      try {
        agentId = JSON.parse(Buffer.concat(chunks).toString("utf8"))?.data?.agent?.id
      } catch {
        agentId = undefined
      }
      received.push({
        at: performance.now(),
        eventId: String(req.headers["service-event-id"] ?? ""),
        deliveryId: String(req.headers["service-delivery-id"] ?? ""),
        agentId
      })
      if (holding) held.push(res)
      else res.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()))
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}/hooks`,
    received,
    hold: () => void (holding = true),
    release: () => {
      holding = false
      for (const res of held.splice(0)) if (!res.destroyed) res.writeHead(200).end("ok")
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

const api = async (base: string, token: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000)
  })
  const text = await res.text()
  return { status: res.status, text, json: () => JSON.parse(text) as any }
}

/** Creates `count` agents through `base`, `parallel` at a time; their ids. */
const createAgents = async (base: string, token: string, count: number, parallel: number, label: string) => {
  const ids: Array<string> = []
  let next = 0
  const worker = async () => {
    while (next < count) {
      const n = next++
      const r = await api(base, token, "POST", "/v1/agents", { type: "support", name: `${label} ${n}` })
      if (r.status !== 201) throw new Error(`POST /v1/agents: ${r.status} ${r.text.slice(0, 300)}`)
      ids.push(r.json().data.id)
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
  return ids
}

const waitUntil = async (done: () => boolean, limitMillis: number) => {
  const deadline = performance.now() + limitMillis
  while (!done() && performance.now() < deadline) await sleep(100)
  return done()
}

describe.skipIf(databaseUrl === undefined)("two processes on one PostgreSQL", () => {
  it("2,000 events each delivered exactly once; SIGTERM on one hands its deliveries to the other at once", async () => {
    const receiver = await startReceiver()
    const url = await throwawayDatabase({ serverUrl: databaseUrl!, prefix: "t_scale" })
    const env = (port: number) =>
      serviceEnv({
        PORT: String(port),
        DATABASE_URL: url,
        ALLOW_PRIVATE_URLS: "true",
        WEBHOOK_POLL_MS: "200",
        SHUTDOWN_GRACE_MS: "3000",
        RATE_LIMIT_RPS: "1000000",
        RATE_LIMIT_BURST: "1000000"
      })
    const ports = [await freePort(), await freePort()] as const
    const first: Child = (await startTimed(() => spawnService(env(ports[0])), ports[0])).child
    const second: Child = (await startTimed(() => spawnService(env(ports[1])), ports[1])).child
    const bases = ports.map((p) => `http://${host}:${p}`)
    try {
      const token = bootstrapSecret(first)
      const sub = await api(bases[0]!, token, "POST", "/v1/webhooks", { url: receiver.url, events: ["agent.created"] })
      expect(sub.status, sub.text).toBe(201)

      // 1. exactly once while the receiver is healthy
      const started = performance.now()
      const [a, b] = await Promise.all([
        createAgents(bases[0]!, token, 1_000, 10, "First"),
        createAgents(bases[1]!, token, 1_000, 10, "Second")
      ])
      const agents = new Set([...a, ...b])
      expect(agents.size).toBe(2_000)
      const complete = await waitUntil(() => new Set(receiver.received.map((r) => r.agentId)).size >= 2_000, 120_000)
      await sleep(1_000) // a late duplicate would show now
      console.log(
        `[scale-out] 2,000 creations through two processes and ${receiver.received.length} deliveries in ` +
          `${((performance.now() - started) / 1000).toFixed(1)} s`
      )
      expect(complete).toBe(true)
      expect(receiver.received).toHaveLength(2_000)
      expect(new Set(receiver.received.map((r) => r.eventId)).size).toBe(2_000)
      expect(new Set(receiver.received.map((r) => r.deliveryId)).size).toBe(2_000)
      expect(receiver.received.filter((r) => r.agentId === undefined || !agents.has(r.agentId))).toEqual([])

      // 2. SIGTERM on one process while both hold deliveries
      receiver.hold()
      const before = receiver.received.length
      const more = new Set([
        ...(await createAgents(bases[0]!, token, 10, 5, "Held first")),
        ...(await createAgents(bases[1]!, token, 10, 5, "Held second"))
      ])
      // at most 8 in flight per subscription across both processes: 8 arrive and are held
      expect(await waitUntil(() => receiver.received.length - before >= 8, 30_000)).toBe(true)
      const signalledAt = performance.now()
      const exited = new Promise<number | null>((resolve) => first.process.once("exit", (code) => resolve(code)))
      first.process.kill("SIGTERM")
      // the first process's held requests are cut when it stops; let the receiver answer from now on
      receiver.release()
      expect(await exited).toBe(0)
      const exitedAfter = performance.now() - signalledAt
      const arrived = () => new Set(receiver.received.slice(before).map((r) => r.agentId))
      const all = await waitUntil(() => [...more].every((id) => arrived().has(id)), 20_000)
      const lastAt = Math.max(...receiver.received.slice(before).map((r) => r.at))
      console.log(
        `[scale-out] first process exited ${Math.round(exitedAfter)} ms after SIGTERM; all 20 held events arrived ` +
          `${Math.round(lastAt - signalledAt)} ms after it (lease 30 s), ${receiver.received.length - before} deliveries`
      )
      expect(all).toBe(true)
      expect(lastAt - signalledAt).toBeLessThan(15_000)
      expect(receiver.received.slice(before).filter((r) => r.agentId === undefined || !more.has(r.agentId))).toEqual([])
    } finally {
      receiver.release()
      first.process.kill("SIGTERM")
      second.process.kill("SIGTERM")
      await receiver.close()
    }
  }, 300_000)
})
