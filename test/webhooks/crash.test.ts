/**
 * Crash test of webhook delivery: at-least-once across a SIGKILL.
 *
 * Real processes, real time (about 1–3 minutes; the test allows 4). The service
 * runs as a child process (`node --import tsx src/main.ts`, so the pid is the
 * serving node process itself, not a wrapper) on a fresh temp DATA_DIR
 * (embedded PGlite), or, when DATABASE_URL is set, on a throwaway `t_<hex>`
 * database of that server (dropped at the end). A node:http receiver on
 * 127.0.0.1 subscribes to `agent.created`, records every delivery and answers 200.
 *
 * 1. A storm of POST /v1/agents (20 at a time); once about 1,000 have answered
 *    201 the service is SIGKILLed mid-storm. Requests in flight at the kill have
 *    an unknown outcome (their agent may or may not have committed).
 * 2. The service restarts on the same data; the storm goes on until 2,000
 *    creations have answered 201 in all.
 * 3. Every agent is listed through the API (cursor pagination), then the test
 *    waits (at most 120 s) until each listed agent's `agent.created` has reached
 *    the receiver. Deliveries claimed at the kill keep their lease (`WEBHOOK_LEASE_MS`, 8 s here, above the
 *    4 s response deadline), so they arrive only once it lapses: the wait is real.
 *
 * Asserted: each listed agent was delivered at least once; duplicates are
 * allowed but always repeat the same event (event id ↔ agent id is one to
 * one, and the `Service-Event-Id` header is the body's id); nothing was
 * delivered for an agent that does not exist; every delivery verifies with
 * Stripe's own verifier (`stripe.webhooks.constructEvent`) against the
 * subscription's `whsec_` secret. Timings are printed for the report.
 */
import { randomBytes } from "node:crypto"
import { createServer, type Server } from "node:http"
import Stripe from "stripe"
import { afterAll, describe, expect, it } from "vitest"
import {
  bootstrapSecret,
  type Child,
  cleanupAll,
  freePort,
  host,
  onCleanup,
  pg,
  serviceEnv,
  sleep,
  spawnService,
  startTimed,
  tempDir,
  throwawayDatabase
} from "../../scripts/bench/lib.js"

const totalAgents = 2_000
const killAfter = 1_000
const concurrency = 20
const deliveryWaitMillis = 120_000
const requestTimeoutMillis = 30_000

const stripe = new Stripe("sk_test_dummy")

// The receiver

interface Received {
  readonly at: number
  readonly eventId: string
  readonly eventType: string
  readonly deliveryId: string
  readonly bodyId: string | undefined
  readonly bodyType: string | undefined
  readonly agentId: string | undefined
  /** The verifier's message when `constructEvent` refused the delivery. */
  readonly signatureError: string | undefined
}

interface Receiver {
  readonly url: string
  readonly received: Array<Received>
  /** Set once the subscription exists; deliveries before that cannot be verified. */
  secret: string
  readonly close: () => Promise<void>
}

const header = (value: string | Array<string> | undefined): string =>
  Array.isArray(value) ? value.join(",") : (value ?? "")

const startReceiver = async (): Promise<Receiver> => {
  const received: Array<Received> = []
  const receiver = { received, secret: "" } as { -readonly [K in keyof Receiver]: Receiver[K] }
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    // a sender killed mid-request leaves an aborted request: nothing to record
    req.on("error", () => undefined)
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8")
      let signatureError: string | undefined
      let body: { id?: unknown; type?: unknown; data?: { agent?: { id?: unknown } } } | undefined
      try {
        // verified on arrival: Stripe's default tolerance is 300 s
        body = stripe.webhooks.constructEvent(raw, header(req.headers["service-signature"]), receiver.secret) as never
      } catch (error) {
        signatureError = error instanceof Error ? error.message : String(error)
        try {
          body = JSON.parse(raw)
        } catch {
          body = undefined
        }
      }
      const str = (v: unknown) => (typeof v === "string" ? v : undefined)
      received.push({
        at: performance.now(),
        eventId: header(req.headers["service-event-id"]),
        eventType: header(req.headers["service-event-type"]),
        deliveryId: header(req.headers["service-delivery-id"]),
        bodyId: str(body?.id),
        bodyType: str(body?.type),
        agentId: str(body?.data?.agent?.id),
        signatureError
      })
      res.writeHead(200, { "content-type": "text/plain" }).end("ok")
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, host, () => resolve())
  })
  const address = server.address()
  if (typeof address !== "object" || address === null) throw new Error("receiver has no address")
  receiver.url = `http://${host}:${address.port}/hooks`
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return receiver
}

// The database


// HTTP to the service

const call = async (
  base: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...headers,
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(requestTimeoutMillis)
  })
  const text = await res.text()
  return { status: res.status, text, json: () => JSON.parse(text) as any }
}

interface Storm {
  /** Ids of the agents whose creation answered 201. */
  readonly created: Array<string>
  /** Requests that failed because the service was killed: outcome unknown. */
  readonly lost: number
  readonly millis: number
}

/**
 * One creation. A network error (a pooled socket to the killed process, a busy
 * machine) is retried with the same Idempotency-Key, so a retry never creates twice.
 */
const createOnce = async (base: string, token: string, key: string, n: number, stopped: () => boolean) => {
  for (let attempt = 1; ; attempt++) {
    try {
      const r = await call(base, token, "POST", "/v1/agents", { type: "support", name: `Crash ${n}` }, { "idempotency-key": key })
      if (r.status !== 409 || attempt >= 5) return r // 409: the first try is still running; ask again
    } catch (error) {
      if (stopped() || attempt >= 3) throw error
    }
    await sleep(200 * attempt)
  }
}

/**
 * Creates agents `concurrency` at a time until `target` creations answered 201.
 * With `kill`, calls it once `killAt` have; from then on failures count as lost
 * and no new request starts.
 */
const storm = async (
  base: string,
  token: string,
  target: number,
  kill?: { readonly killAt: number; readonly kill: () => void }
): Promise<Storm> => {
  const started = performance.now()
  const stormId = randomBytes(4).toString("hex")
  const created: Array<string> = []
  let lost = 0
  let issued = 0
  let killed = false
  const worker = async () => {
    // bounded: at most `target` requests in all, each with a timeout
    while (!killed && issued < target && created.length < target) {
      const n = ++issued
      try {
        const r = await createOnce(base, token, `crash-${stormId}-${n}`, n, () => killed)
        if (r.status !== 201) throw new Error(`POST /v1/agents answered ${r.status}: ${r.text.slice(0, 300)}`)
        created.push(r.json().data.id)
        if (kill !== undefined && !killed && created.length >= kill.killAt) {
          killed = true
          kill.kill()
        }
      } catch (error) {
        if (!killed) throw error
        lost++
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return { created, lost, millis: performance.now() - started }
}

/** Every agent, through `GET /v1/agents` with cursors (bounded to 100 pages). */
const listAgents = async (base: string, token: string): Promise<Array<string>> => {
  const ids: Array<string> = []
  let cursor: string | null = null
  for (let page = 0; page < 100; page++) {
    const r = await call(base, token, "GET", `/v1/agents?limit=100${cursor === null ? "" : `&starting_after=${cursor}`}`)
    if (r.status !== 200) throw new Error(`GET /v1/agents answered ${r.status}: ${r.text.slice(0, 300)}`)
    const body = r.json()
    ids.push(...body.data.map((a: { id: string }) => a.id))
    cursor = body.meta.pagination.next_cursor
    if (cursor === null) return ids
  }
  throw new Error("more than 100 pages of agents")
}

const refusesConnections = async (base: string): Promise<boolean> => {
  try {
    await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) })
    return false
  } catch {
    return true
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

// The test

const databaseUrl = process.env["DATABASE_URL"]
const kind = databaseUrl ? "PostgreSQL" : "PGlite"

describe(`webhook delivery survives a SIGKILL (${kind})`, () => {
  afterAll(cleanupAll, 60_000)

  it(
    `delivers agent.created for each of ${totalAgents} agents at least once, signed, across a crash`,
    async () => {
      const t0 = performance.now()
      const timings: Array<string> = []
      const mark = (label: string, ms: number) => {
        timings.push(`${label}: ${seconds(ms)}`)
        console.log(`[crash test, ${kind}] ${label}: ${seconds(ms)}`)
      }

      const receiver = await startReceiver()
      onCleanup(receiver.close)
      const leaseMs = 8_000
      const dataDir = await tempDir("webhook-crash")
      const database: Record<string, string> = databaseUrl ? { DATABASE_URL: await throwawayDatabase({ serverUrl: databaseUrl, prefix: "t" }) } : {}
      const env = (port: number) =>
        serviceEnv({
          PORT: String(port),
          DATA_DIR: dataDir,
          ...database,
          ALLOW_PRIVATE_URLS: "true",
          WEBHOOK_POLL_MS: "200",
          WEBHOOK_TIMEOUT_MS: "4000",
          WEBHOOK_LEASE_MS: String(leaseMs),
          RATE_LIMIT_RPS: "1000000",
          RATE_LIMIT_BURST: "1000000"
        })

      // First life
      const port1 = await freePort()
      const first = await startTimed(() => spawnService(env(port1)), port1)
      mark("first start to ready", first.ms)
      const base1 = `http://${host}:${port1}`
      const token = bootstrapSecret(first.child)
      const sub = await call(base1, token, "POST", "/v1/webhooks", { url: receiver.url, events: ["agent.created"] })
      expect(sub.status, sub.text).toBe(201)
      receiver.secret = sub.json().data.secret
      expect(receiver.secret).toMatch(/^whsec_/)

      const child: Child = first.child
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.process.once("exit", (_code, signal) => resolve(signal)))
      let killedAt = 0
      const phase1 = await storm(base1, token, totalAgents, {
        killAt: killAfter,
        kill: () => {
          killedAt = performance.now()
          child.process.kill("SIGKILL")
        }
      })
      expect(await exited).toBe("SIGKILL")
      // the killed pid was the server itself: nothing listens on its port any more
      expect(await refusesConnections(base1)).toBe(true)
      const receivedAtKill = receiver.received.length
      if (database["DATABASE_URL"] !== undefined) {
        // PostgreSQL only (PGlite's files are the service's alone): what the kill left behind
        const client = new pg.Client({ connectionString: database["DATABASE_URL"] })
        await client.connect()
        const [row] = (
          await client.query<{ pending: number; leased: number }>(
            `select count(*)::int as pending, count(*) filter (where locked_until > now())::int as leased
             from webhook_deliveries where status = 'pending'`
          )
        ).rows
        await client.end()
        console.log(`[crash test, ${kind}] at the kill: ${row?.pending} deliveries pending, ${row?.leased} of them claimed (leased)`)
      }
      mark(`storm before the kill (${phase1.created.length} created, ${phase1.lost} lost in flight)`, phase1.millis)

      // Second life, same data
      const port2 = await freePort()
      const second = await startTimed(() => spawnService(env(port2)), port2)
      const restartedAt = performance.now()
      mark("restart to ready", second.ms)
      const base2 = `http://${host}:${port2}`
      const phase2 = await storm(base2, token, totalAgents - phase1.created.length)
      mark(`storm after the restart (${phase2.created.length} created)`, phase2.millis)
      expect(phase2.lost).toBe(0)

      const listStarted = performance.now()
      const listed = await listAgents(base2, token)
      mark(`listing ${listed.length} agents`, performance.now() - listStarted)
      const listedSet = new Set(listed)
      const created = [...phase1.created, ...phase2.created]
      expect(created.length).toBe(totalAgents)
      expect(created.filter((id) => !listedSet.has(id))).toEqual([])
      expect(listedSet.size).toBe(listed.length)
      // in-flight creations at the kill may or may not have committed
      expect(listed.length).toBeLessThanOrEqual(totalAgents + phase1.lost)

      // Wait (bounded) until every listed agent's event has arrived
      const waitStarted = performance.now()
      const undelivered = () => {
        const seen = new Set(receiver.received.map((r) => r.agentId))
        return listed.filter((id) => !seen.has(id))
      }
      let missing = undelivered()
      while (missing.length > 0 && performance.now() - waitStarted < deliveryWaitMillis) {
        await sleep(250)
        missing = undelivered()
      }
      mark(`waiting for the last deliveries (${missing.length} missing at the end)`, performance.now() - waitStarted)
      mark("whole test", performance.now() - t0)

      // What the receiver got
      const received = receiver.received
      const agentByEvent = new Map<string, Set<string | undefined>>()
      const eventByAgent = new Map<string | undefined, Set<string>>()
      const deliveryByEvent = new Map<string, Set<string>>()
      for (const r of received) {
        deliveryByEvent.set(r.eventId, (deliveryByEvent.get(r.eventId) ?? new Set()).add(r.deliveryId))
        agentByEvent.set(r.eventId, (agentByEvent.get(r.eventId) ?? new Set()).add(r.agentId))
        eventByAgent.set(r.agentId, (eventByAgent.get(r.agentId) ?? new Set()).add(r.eventId))
      }
      const duplicates = received.length - agentByEvent.size
      const afterLease = received.filter((r) => r.at - killedAt > leaseMs).length
      console.log(
        `[crash test, ${kind}] ${received.length} deliveries received (${receivedAtKill} before the kill), ` +
          `${agentByEvent.size} distinct events, ${duplicates} duplicates, ` +
          `${afterLease} arrived more than the ${leaseMs / 1000} s lease after the kill (lease retries); restart was ${seconds(restartedAt - killedAt)} after the kill\n` +
          timings.map((t) => `  ${t}`).join("\n")
      )

      expect(missing, `${missing.length} agents never delivered`).toEqual([])
      expect(received.filter((r) => r.signatureError !== undefined).slice(0, 5)).toEqual([])
      expect(received.filter((r) => r.eventType !== "agent.created" || r.bodyType !== "agent.created").slice(0, 5)).toEqual([])
      expect(received.filter((r) => r.bodyId !== r.eventId || !/^evt_/.test(r.eventId)).slice(0, 5)).toEqual([])
      expect(received.filter((r) => !/^whd_/.test(r.deliveryId)).slice(0, 5)).toEqual([])
      // a duplicate repeats its first copy: one agent per event id, one event id per agent
      expect([...agentByEvent].filter(([, agents]) => agents.size !== 1).slice(0, 5)).toEqual([])
      expect([...eventByAgent].filter(([, events]) => events.size !== 1).slice(0, 5)).toEqual([])
      // one subscription: a duplicate is the same delivery attempted again
      expect([...deliveryByEvent].filter(([, ids]) => ids.size !== 1).slice(0, 5)).toEqual([])
      // nothing for an agent that does not exist (no event of a rolled-back creation)
      expect([...eventByAgent.keys()].filter((id) => id === undefined || !listedSet.has(id))).toEqual([])
    },
    240_000
  )
})
