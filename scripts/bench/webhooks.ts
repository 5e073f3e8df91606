/**
 * Webhook delivery, on PostgreSQL (throwaway database) and on PGlite:
 *
 * - Throughput: deliveries per second from a backlog of `deliveries` pending
 *   `agent.created` deliveries to a local receiver, against bare loops posting
 *   the same bodies with the same headers in the same run, at the service's
 *   own concurrency towards one receiver: one subscription, so at most
 *   `perSubscription` (8) deliveries in flight, below the dispatcher's 16
 *   slots; the bare loops keep exactly as many POSTs in flight: `fetch` (undici, keep-alive, like the
 *   service's fetcher since it pools connections per URL policy) and `node:http` with a new connection per POST.
 *   The backlog: while the agents are created, the receiver holds every POST
 *   (answering it after 8 s, inside the service's 10 s deadline), which stalls
 *   the dispatcher on its current batch; then the gate opens and the clock
 *   starts. Counted: deliveries answered after the gate opened, up to the last.
 *   Each sender is measured warm: the service drains one backlog of the same
 *   size unmeasured first, the bare loops post every body once unmeasured
 *   (a cold drain mostly measures V8 compiling the dispatch path).
 *   On PostgreSQL the service and the bare fetch loop take turns in
 *   `BENCH_WEBHOOK_ROUNDS` rounds (default 3): each round drains a new
 *   backlog, then the bare loop posts that round's bodies; the table shows
 *   medians, and the ratio is the median of the rounds' own ratios (a drain
 *   lasts about a second, so the machine's state moves between drains by more
 *   than the margin of a target).
 * - First-attempt latency: `latency` agents created one at a time; for each,
 *   from the `POST /v1/agents` response (the commit is before it) to the
 *   delivery reaching the receiver; p50 / p95 / max. The poll interval is the
 *   default (1 s), so a first attempt waiting for the poll rather than the
 *   after-commit wake-up of the dispatcher's queue shows.
 *
 * The receiver is a child process (this file run with `--receiver`), so the
 * bare loops do not share a process with it; it is steered over HTTP on
 * `/control/*`. Times crossing processes are epoch milliseconds
 * (`performance.timeOrigin + performance.now()`).
 */
import { request as httpRequest, createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { cpus } from "node:os"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { perSubscription } from "../../src/webhooks/Dispatcher.js"
import { signatureHeader } from "../../src/webhooks/Signature.js"
import {
  bootstrapSecret,
  type Child,
  cpuMs,
  ownCpuMs,
  postgresCpuMs,
  createAgent,
  fmt,
  freePort,
  median,
  host,
  noRateLimit,
  ratio,
  type Section,
  serviceEnv,
  spawnService,
  spawnTracked,
  startTimed,
  stop,
  tempDir,
  throwawayDatabase,
  waitForOk
} from "./lib.js"

// BENCH_DELIVERIES / BENCH_LATENCY_N shorten runs while working on the scripts
const deliveries = Number(process.env["BENCH_DELIVERIES"] ?? 2_000)
const latencyN = Number(process.env["BENCH_LATENCY_N"] ?? 200)
/** The dispatcher's slots per process. */
const dispatcherSlots = 16
/** In flight to the one subscription's receiver: the service's cap, and the bare loops' concurrency. */
const concurrency = Math.min(dispatcherSlots, perSubscription)
/** `BENCH_PGLITE=0`: the PostgreSQL run only (the bare loops then replay its bodies). */
const withPglite = process.env["BENCH_PGLITE"] !== "0"
/** Rounds of service drain, then bare fetch loop, on PostgreSQL. */
const rounds = Math.max(1, Number(process.env["BENCH_WEBHOOK_ROUNDS"] ?? 3))
const holdMillis = 8_000
const backlogDeadlineMillis = 240_000

const epochNow = () => performance.timeOrigin + performance.now()

const percentile = (xs: ReadonlyArray<number>, p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!
}

// The receiver (child process)

interface Delivery {
  readonly eventId: string
  readonly eventType: string
  readonly deliveryId: string
  readonly agentId: string | undefined
  readonly body: string
  readonly arrivedAt: number
  answeredAt: number
}

interface Summary {
  readonly received: number
  readonly distinctEvents: number
  readonly openedAt: number | null
  readonly answeredAfterOpen: number
  readonly lastAnsweredAt: number | null
  /** Connections opened to the receiver since the last reset. */
  readonly connections: number
}

const receiverMain = (port: number) => {
  let records: Array<Delivery> = []
  let connections = 0
  let hold = false
  let openedAt: number | null = null
  let held: Array<() => void> = []
  const arrivals = new Map<string, number>()
  const waiters = new Map<string, Array<(at: number) => void>>()

  const json = (res: ServerResponse, status: number, value: unknown) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value))

  const readBody = (req: IncomingMessage) =>
    new Promise<string>((done, fail) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => done(Buffer.concat(chunks).toString("utf8")))
      req.on("error", fail)
    })

  const delivery = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req)
    const arrivedAt = epochNow()
    let agentId: string | undefined
    try {
      const id = (JSON.parse(body) as { data?: { agent?: { id?: unknown } } }).data?.agent?.id
      agentId = typeof id === "string" ? id : undefined
    } catch {
      agentId = undefined
    }
    const record: Delivery = {
      eventId: String(req.headers["service-event-id"] ?? ""),
      eventType: String(req.headers["service-event-type"] ?? ""),
      deliveryId: String(req.headers["service-delivery-id"] ?? ""),
      agentId,
      body,
      arrivedAt,
      answeredAt: 0
    }
    records.push(record)
    if (agentId !== undefined && !arrivals.has(agentId)) {
      arrivals.set(agentId, arrivedAt)
      for (const wake of waiters.get(agentId) ?? []) wake(arrivedAt)
      waiters.delete(agentId)
    }
    const answer = () => {
      if (record.answeredAt !== 0) return
      record.answeredAt = epochNow()
      res.writeHead(200, { "content-type": "text/plain" }).end("ok")
    }
    if (!hold) return answer()
    held.push(answer)
    setTimeout(answer, holdMillis)
  }

  const summary = (): Summary => {
    const after = openedAt === null ? [] : records.filter((r) => r.answeredAt >= openedAt!)
    return {
      received: records.length,
      distinctEvents: new Set(records.map((r) => r.eventId)).size,
      openedAt,
      answeredAfterOpen: after.length,
      lastAnsweredAt: after.length === 0 ? null : Math.max(...after.map((r) => r.answeredAt)),
      connections
    }
  }

  const control = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    switch (url.pathname) {
      case "/control/summary":
        return json(res, 200, summary())
      case "/control/reset": {
        const options = JSON.parse((await readBody(req)) || "{}") as { hold?: boolean }
        for (const answer of held) answer()
        held = []
        records = []
        connections = 0
        openedAt = null
        hold = options.hold === true
        return json(res, 200, { ok: true })
      }
      case "/control/open": {
        openedAt = epochNow()
        hold = false
        for (const answer of held) answer()
        held = []
        return json(res, 200, { openedAt })
      }
      case "/control/bodies":
        return json(
          res,
          200,
          records.map(({ eventId, eventType, deliveryId, body }) => ({ eventId, eventType, deliveryId, body }))
        )
      case "/control/wait": {
        // long poll: when the first delivery for this agent arrived (at most `timeout` ms)
        const agent = url.searchParams.get("agent") ?? ""
        const known = arrivals.get(agent)
        if (known !== undefined) return json(res, 200, { arrivedAt: known })
        const timer = setTimeout(() => {
          if (!res.headersSent) json(res, 504, { error: "not delivered" })
        }, Number(url.searchParams.get("timeout") ?? 15_000))
        waiters.set(agent, [
          ...(waiters.get(agent) ?? []),
          (arrivedAt) => {
            clearTimeout(timer)
            if (!res.headersSent) json(res, 200, { arrivedAt })
          }
        ])
        return
      }
      default:
        return json(res, 404, { error: "no such control" })
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", `http://${host}`)
    const work = url.pathname.startsWith("/control/") ? control(req, res, url) : delivery(req, res)
    work.catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { error: String(error) })
    })
  })
  server.on("connection", () => void connections++)
  server.listen(port, host)
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)
if (isMain && process.argv.includes("--receiver")) receiverMain(Number(process.env["PORT"]))

// HTTP from the benchmark

const callJson = async <A>(url: string, init: { method?: string; token?: string; body?: unknown; timeout?: number } = {}) => {
  const res = await fetch(url, {
    method: init.method ?? "GET",
    headers: {
      ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }),
      ...(init.body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    signal: AbortSignal.timeout(init.timeout ?? 30_000)
  })
  const text = await res.text()
  return { status: res.status, text, body: (text === "" ? null : JSON.parse(text)) as A }
}

/** Runs `task(i)` for i < n, `concurrency` at a time. */
const pool = async (n: number, task: (i: number) => Promise<void>) => {
  let next = 0
  const worker = async () => {
    while (next < n) await task(next++)
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker))
}

interface Receiver {
  /** Its process, for its CPU. */
  readonly pid: number
  readonly base: string
  readonly hookUrl: string
  readonly reset: (hold: boolean) => Promise<void>
  readonly open: () => Promise<number>
  readonly summary: () => Promise<Summary>
}

const startReceiver = async (): Promise<Receiver> => {
  const port = await freePort()
  const base = `http://${host}:${port}`
  const child = spawnTracked(process.execPath, ["--import", "tsx", "scripts/bench/webhooks.ts", "--receiver"], {
    ...process.env,
    PORT: String(port)
  })
  await waitForOk(`${base}/control/summary`, child, performance.now())
  return {
    pid: child.pid,
    base,
    hookUrl: `${base}/hooks`,
    reset: async (hold) => void (await callJson(`${base}/control/reset`, { method: "POST", body: { hold } })),
    open: async () => (await callJson<{ openedAt: number }>(`${base}/control/open`, { method: "POST" })).body.openedAt,
    summary: async () => (await callJson<Summary>(`${base}/control/summary`)).body
  }
}

// Measurements

interface Throughput {
  readonly label: string
  readonly count: number
  readonly millis: number
  /** PostgreSQL's CPU (all its processes) a delivery, during the same window. */
  readonly postgresUsPerDelivery?: number
  /** The sender's CPU a delivery: the service's, or this process's for the bare loops. */
  readonly senderUsPerDelivery: number
  /** The receiver's CPU a delivery (its own process). */
  readonly receiverUsPerDelivery: number
}

interface Latency {
  readonly label: string
  readonly samples: ReadonlyArray<number>
}

/** What a bare loop posts again: the bodies of one drain (once each), and the secret to sign them with. */
interface Drained {
  readonly secret: string
  readonly bodies: ReadonlyArray<{ eventId: string; eventType: string; deliveryId: string; body: string }>
}

/** One measured drain of the service, and the bare fetch loop's run over its bodies right after it. */
interface Round {
  readonly service: Throughput
  readonly bare?: Throughput
}

interface ServiceRun {
  readonly rounds: ReadonlyArray<Round>
  readonly latency: Latency
  /** The last drain's. */
  readonly drained: Drained
}

/** After each measured drain, while the service idles: the bare loop's run over the same bodies. */
type Pair = (drained: Drained) => Promise<Throughput>

const measureService = async (
  label: string,
  receiver: Receiver,
  extraEnv: Record<string, string>,
  measuredRounds: number,
  pair?: Pair
): Promise<ServiceRun> => {
  const port = await freePort()
  const { child } = await startTimed(
    () => spawnService(serviceEnv({ PORT: String(port), ALLOW_PRIVATE_URLS: "true", ...noRateLimit, ...extraEnv })),
    port
  )
  try {
    const database = extraEnv["DATABASE_URL"] === undefined ? "pglite" : "postgres"
    return await againstService(label, receiver, `http://${host}:${port}`, child, database, measuredRounds, pair)
  } finally {
    await stop(child)
  }
}

const againstService = async (
  label: string,
  receiver: Receiver,
  base: string,
  child: Child,
  database: "postgres" | "pglite",
  measuredRounds: number,
  pair: Pair | undefined
): Promise<ServiceRun> => {
  const token = bootstrapSecret(child)
  await receiver.reset(false)
  const sub = await callJson<{ data: { secret: string } }>(`${base}/v1/webhooks`, {
    method: "POST",
    token,
    body: { url: receiver.hookUrl, events: ["agent.created"] }
  })
  if (sub.status !== 201) throw new Error(`POST /v1/webhooks: ${sub.status} ${sub.text}`)

  // first-attempt latency, one agent at a time (10 unmeasured first)
  const samples: Array<number> = []
  for (let i = 0; i < latencyN + 10; i++) {
    const agentId = await createAgent(base, token, `Latency ${i}`)
    const committed = epochNow()
    const r = await callJson<{ arrivedAt: number }>(`${receiver.base}/control/wait?agent=${agentId}&timeout=15000`, { timeout: 20_000 })
    if (r.status !== 200) throw new Error(`${label}: agent ${agentId} not delivered within 15 s`)
    if (i >= 10) samples.push(r.body.arrivedAt - committed)
  }
  console.log(`    latency: p50 ${fmt(percentile(samples, 50), 1)} ms, p95 ${fmt(percentile(samples, 95), 1)} ms`)

  // throughput from a backlog: the first drain warms the dispatch path up (as the bare loops' first pass warms
  // theirs), the next ones are measured
  const drain = async (round: string) => {
    // hold the receiver while the agents are created
    await receiver.reset(true)
    const creationStarted = performance.now()
    await pool(deliveries, async (i) => void (await createAgent(base, token, `${round} ${i}`)))
    const creationMillis = performance.now() - creationStarted
    const before = await receiver.summary()
    const cpuBefore = cpuMs(child.pid)
    const postgresBefore = postgresCpuMs()
    const receiverBefore = cpuMs(receiver.pid)
    const openedAt = await receiver.open()
    const deadline = performance.now() + backlogDeadlineMillis
    let s = await receiver.summary()
    while (s.distinctEvents < deliveries && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100))
      s = await receiver.summary()
    }
    if (s.distinctEvents < deliveries) throw new Error(`${label}: ${s.distinctEvents} of ${deliveries} delivered in time`)
    const cpu = cpuMs(child.pid) - cpuBefore
    const postgresCpu = postgresCpuMs() - postgresBefore
    const receiverCpu = cpuMs(receiver.pid) - receiverBefore
    const millis = s.lastAnsweredAt! - openedAt
    console.log(
      `    ${round} backlog: ${deliveries} agents created in ${fmt(creationMillis / 1000, 1)} s (${before.received} deliveries arrived meanwhile); ` +
        `${s.answeredAfterOpen} delivered in ${fmt(millis)} ms after the gate opened (${fmt((s.answeredAfterOpen * 1000) / millis)}/s), ` +
        `${s.received - s.distinctEvents} duplicates, ${s.connections} connections to the receiver (control calls included)`
    )
    return { s, cpu, postgresCpu, receiverCpu, millis }
  }
  await drain("warm-up")
  const measured: Array<Round> = []
  let drained: Drained = { secret: sub.body.data.secret, bodies: [] }
  for (let round = 1; round <= measuredRounds; round++) {
    const { s, cpu, postgresCpu, receiverCpu, millis } = await drain(measuredRounds === 1 ? "measured" : `measured ${round}`)
    // each event once (a delivery the receiver saw twice is posted once by the bare loop)
    const seen = new Set<string>()
    const bodies = (await callJson<Drained["bodies"]>(`${receiver.base}/control/bodies`)).body
    drained = { secret: sub.body.data.secret, bodies: bodies.filter((b) => !seen.has(b.eventId) && seen.add(b.eventId)) }
    const service: Throughput = {
      label,
      count: s.answeredAfterOpen,
      millis,
      // PGlite runs inside the service: no server processes of its own
      ...(database === "postgres" ? { postgresUsPerDelivery: (postgresCpu * 1000) / s.answeredAfterOpen } : {}),
      senderUsPerDelivery: (cpu * 1000) / s.answeredAfterOpen,
      receiverUsPerDelivery: (receiverCpu * 1000) / s.answeredAfterOpen
    }
    measured.push(pair === undefined ? { service } : { service, bare: await pair(drained) })
  }
  return { rounds: measured, latency: { label, samples }, drained }
}

const headersFor = (secret: string, b: Drained["bodies"][number]) => ({
  "content-type": "application/json",
  "user-agent": "bench-baseline",
  "service-signature": signatureHeader([secret], Math.floor(Date.now() / 1000), b.body),
  "service-event-id": b.eventId,
  "service-event-type": b.eventType,
  "service-delivery-id": b.deliveryId
})

/** The same bodies and headers, POSTed by a bare loop `concurrency` at a time. */
const bareLoop = async (
  label: string,
  receiver: Receiver,
  run: Drained,
  post: (url: string, body: string, headers: Record<string, string>) => Promise<number>
): Promise<Throughput> => {
  const send = async (i: number) => {
    const b = run.bodies[i]!
    const status = await post(receiver.hookUrl, b.body, headersFor(run.secret, b))
    if (status !== 200) throw new Error(`${label}: receiver answered ${status}`)
  }
  // warm-up: one unmeasured pass, as the service's first drain
  await pool(run.bodies.length, send)
  await receiver.reset(false)
  const senderBefore = ownCpuMs()
  const receiverBefore = cpuMs(receiver.pid)
  const started = performance.now()
  await pool(run.bodies.length, send)
  const millis = performance.now() - started
  const senderCpu = ownCpuMs() - senderBefore
  const receiverCpu = cpuMs(receiver.pid) - receiverBefore
  const s = await receiver.summary()
  if (s.received !== run.bodies.length) throw new Error(`${label}: receiver got ${s.received} of ${run.bodies.length}`)
  console.log(
    `    ${label}: ${run.bodies.length} in ${fmt(millis)} ms (${fmt((run.bodies.length * 1000) / millis)}/s), ` +
      `${s.connections} connections to the receiver`
  )
  return {
    label,
    count: run.bodies.length,
    millis,
    senderUsPerDelivery: (senderCpu * 1000) / run.bodies.length,
    receiverUsPerDelivery: (receiverCpu * 1000) / run.bodies.length
  }
}

const viaFetch = async (url: string, body: string, headers: Record<string, string>) => {
  const res = await fetch(url, { method: "POST", body, headers, signal: AbortSignal.timeout(10_000) })
  await res.arrayBuffer()
  return res.status
}

const viaNodeHttp = (url: string, body: string, headers: Record<string, string>) =>
  new Promise<number>((done, fail) => {
    const req = httpRequest(url, {
      method: "POST",
      agent: false,
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      timeout: 10_000
    })
    req.once("timeout", () => req.destroy(new Error("timeout")))
    req.once("error", fail)
    req.once("response", (res) => {
      res.resume()
      res.once("end", () => done(res.statusCode ?? 0))
    })
    req.end(body)
  })

const rate = (t: Throughput) => (t.count * 1000) / t.millis

/** A table row: medians over runs of one sender, and its ratio to the bare fetch loop (per round, where paired). */
interface Row {
  readonly label: string
  readonly runs: ReadonlyArray<Throughput>
  /** Its rate over the bare fetch loop's, each round (empty: the bare loop itself, or not paired). */
  readonly ratios: ReadonlyArray<number>
}

const rowLine = (row: Row, bareRate: number) => {
  const m = (f: (t: Throughput) => number) => median(row.runs.map(f))
  const postgres = row.runs.every((t) => t.postgresUsPerDelivery !== undefined) ? m((t) => t.postgresUsPerDelivery!) : undefined
  const versus =
    row.ratios.length === 0
      ? ratio(m(rate), bareRate)
      : `${fmt(median(row.ratios), 2)}×${row.ratios.length > 1 ? ` (${row.ratios.map((r) => fmt(r, 2)).join(", ")})` : ""}`
  return (
    `| ${row.label} | ${m((t) => t.count)} | ${fmt(m((t) => t.millis))} | ${fmt(m(rate))} | ${versus} | ` +
    `${fmt(m((t) => t.senderUsPerDelivery))} | ${postgres === undefined ? "–" : fmt(postgres)} | ` +
    `${fmt(m((t) => t.receiverUsPerDelivery))} | ` +
    `${fmt(m((t) => t.senderUsPerDelivery + (t.postgresUsPerDelivery ?? 0) + t.receiverUsPerDelivery))} |`
  )
}

export const webhooks = async (): Promise<Section> => {
  const receiver = await startReceiver()
  const fetchLoop = (drained: Drained) => bareLoop("bare fetch loop (undici, keep-alive)", receiver, drained, viaFetch)

  console.log(`  service on PostgreSQL, then the bare fetch loop, ${rounds} rounds`)
  const onPg = await measureService("service on PostgreSQL", receiver, { DATABASE_URL: await throwawayDatabase() }, rounds, fetchLoop)
  const onPglite = withPglite
    ? (console.log("  service on PGlite"), await measureService("service on PGlite", receiver, { DATA_DIR: await tempDir("webhooks") }, 1))
    : undefined

  // the bodies the service delivered in its last drain, posted again with a fresh signature
  console.log("  bare node:http loop")
  const httpLoop = await bareLoop("bare node:http loop (new connection per POST)", receiver, (onPglite ?? onPg).drained, viaNodeHttp)

  // every PostgreSQL round has its bare loop run (`fetchLoop` was passed for them)
  const paired = onPg.rounds.flatMap(({ service, bare }) => (bare === undefined ? [] : [{ service, bare }]))
  const bareRuns = paired.map((r) => r.bare)
  const bareRate = median(bareRuns.map(rate))
  const rows: Array<Row> = [
    { label: "bare fetch loop (undici, keep-alive)", runs: bareRuns, ratios: [] },
    { label: "bare node:http loop (new connection per POST)", runs: [httpLoop], ratios: [] },
    { label: "service on PostgreSQL", runs: paired.map((r) => r.service), ratios: paired.map((r) => rate(r.service) / rate(r.bare)) },
    ...(onPglite ? [{ label: "service on PGlite", runs: onPglite.rounds.map((r) => r.service), ratios: [] }] : [])
  ]
  return {
    title:
      `Webhook delivery (${deliveries} backlogged agent.created deliveries, ${concurrency} in flight to one receiver; ` +
      `PostgreSQL and the bare fetch loop: medians of ${rounds} interleaved rounds; first attempt of ${latencyN} agents created one at a time)`,
    lines: [
      "| sender | deliveries | ms | deliveries/s | vs bare fetch loop (each round) | sender CPU µs/delivery | PostgreSQL CPU µs/delivery | receiver CPU µs/delivery | all, µs/delivery |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
      ...rows.map((row) => rowLine(row, bareRate)),
      "",
      "The sender, PostgreSQL and the receiver share the machine's cores: a delivery's whole CPU bounds the rate " +
        `(${cpus().length} cores: ${fmt(cpus().length * 1e6)} µs of CPU a second). The node:http loop and PGlite ran once, ` +
        "after the rounds; their ratios are to the bare fetch loop's median. Each column is a median over the rounds, " +
        "so the last is not always the sum of the three before it.",
      "",
      "First attempt after commit (from the `POST /v1/agents` response to the receiver; `WEBHOOK_POLL_MS` default 1000):",
      "",
      "| service on | agents | p50 ms | p95 ms | max ms |",
      "|---|---:|---:|---:|---:|",
      ...[onPg.latency, ...(onPglite ? [onPglite.latency] : [])].map(
        (l) =>
          `| ${l.label.replace("service on ", "")} | ${l.samples.length} | ${fmt(percentile(l.samples, 50), 1)} | ` +
          `${fmt(percentile(l.samples, 95), 1)} | ${fmt(Math.max(...l.samples), 1)} |`
      )
    ]
  }
}
