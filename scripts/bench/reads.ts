/**
 * The read path: `GET /v1/agents/{id}` and `GET /v1/tickets/{id}` (a ticket
 * with its thread: one message and one event), each against a bare node:http +
 * pg baseline (scripts/bench/baseline-server.ts) reading the same rows from the
 * same throwaway database and answering the same JSON. For agents, the
 * framework's floor too (scripts/bench/floor-server.ts: a bare HttpApi doing
 * the baseline's two queries), which splits the service's cost into Effect's
 * share and the service's own. One server runs at a time; autocannon runs in
 * this process. On PostgreSQL the three run in `BENCH_READ_ROUNDS` interleaved
 * rounds (default 3) and the table shows medians. `BENCH_PGLITE=0`: PostgreSQL
 * and the baselines only.
 */
import {
  autocannon,
  type AutocannonResult,
  bootstrapSecret,
  type Child,
  connections,
  cpuMs,
  createAgent,
  fmt,
  median,
  noRateLimit,
  ratio,
  rssMb,
  seconds,
  type Section,
  serviceEnv,
  sleep,
  spawnService,
  spawnTracked,
  tempDir,
  throwawayDatabase,
  warmupSeconds,
  withServer
} from "./lib.js"

interface Measured {
  readonly result: AutocannonResult
  /** Server CPU time per request: steadier than req/s on a small shared machine. */
  readonly cpuUsPerRequest: number
}
interface Row extends Measured {
  readonly endpoint: "agents" | "tickets"
  readonly label: string
  readonly round: number
}

/** Rounds of the three servers on PostgreSQL (`BENCH_READ_ROUNDS`, default 3); PGlite runs once. */
const rounds = Number(process.env["BENCH_READ_ROUNDS"] ?? 3)

const load = async (url: string, token: string, server: Child): Promise<Measured> => {
  const headers = { authorization: `Bearer ${token}` }
  await autocannon({ url, connections, duration: warmupSeconds, headers })
  const cpuBefore = cpuMs(server.pid)
  const result = await autocannon({ url, connections, duration: seconds, headers })
  const cpuUsPerRequest = ((cpuMs(server.pid) - cpuBefore) * 1000) / result.requests.total
  // a run with failures measures error paths, not the endpoint
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`)
  }
  console.log(
    `    ${url.replace(/^.*\/v1\//, "/v1/")}: ${fmt(result.requests.average)} req/s, mean ${fmt(result.latency.mean, 2)} ms, ` +
      `p99 ${result.latency.p99} ms, ${fmt(cpuUsPerRequest)} µs CPU/req`
  )
  return { result, cpuUsPerRequest }
}

const getData = async (url: string, token: string): Promise<string> => {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5_000) })
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`)
  return JSON.stringify(((await res.json()) as { readonly data: unknown }).data)
}

/** A ticket with a first message (the thread then holds the message and the `created` event). */
const createTicket = async (base: string, token: string, agentId: string): Promise<string> => {
  const res = await fetch(`${base}/v1/tickets`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ agent_id: agentId, subject: "Parcel not delivered", body: "It has been a week.", visitor_email: "visitor@example.com" })
  })
  if (res.status !== 201) throw new Error(`POST /v1/tickets: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { readonly data: { readonly public_id: string } }).data.public_id
}

const bare = (databaseUrl: string) => (port: number) =>
  spawnTracked(process.execPath, ["--import", "tsx", "scripts/bench/baseline-server.ts"], {
    ...process.env,
    PORT: String(port),
    DATABASE_URL: databaseUrl
  })

const floor = (databaseUrl: string) => (port: number) =>
  spawnTracked(process.execPath, ["--import", "tsx", "scripts/bench/floor-server.ts"], {
    ...process.env,
    PORT: String(port),
    DATABASE_URL: databaseUrl
  })

export const reads = async (): Promise<Section> => {
  const databaseUrl = await throwawayDatabase()
  const rows: Array<Row> = []
  const rss: Record<string, number> = {}
  const idleRss = async (label: string, child: Child) => {
    await sleep(3_000)
    rss[label] = rssMb(child.pid)
  }
  const path = { agents: "", tickets: "" }
  const expected = { agents: "", tickets: "" }
  let token = ""

  /** The same answers as the service's, or the comparison means nothing. */
  const sameAnswer = async (label: string, base: string, endpoint: "agents" | "tickets") => {
    const got = await getData(base + path[endpoint], token)
    if (got !== expected[endpoint]) throw new Error(`${label} answers differently:\n  service ${expected[endpoint]}\n  ${label} ${got}`)
  }

  const service = "service on PostgreSQL"
  const baseline = "baseline node:http + pg"
  const floorLabel = "framework floor: HttpApi + @effect/sql-pg"
  const runService = async (round: number) => {
    console.log(`  round ${round + 1}: ${service}`)
    await withServer(
      (port) => spawnService(serviceEnv({ PORT: String(port), DATABASE_URL: databaseUrl, ...noRateLimit })),
      async (base, child) => {
        if (token === "") {
          token = bootstrapSecret(child)
          const agentId = await createAgent(base, token)
          path.agents = `/v1/agents/${agentId}`
          path.tickets = `/v1/tickets/${await createTicket(base, token, agentId)}`
          for (const endpoint of ["agents", "tickets"] as const) expected[endpoint] = await getData(base + path[endpoint], token)
          await idleRss(service, child)
        }
        for (const endpoint of ["agents", "tickets"] as const) {
          rows.push({ endpoint, label: service, round, ...(await load(base + path[endpoint], token, child)) })
        }
      }
    )
  }
  const runBaseline = async (round: number) => {
    console.log(`  round ${round + 1}: ${baseline}`)
    await withServer(bare(databaseUrl), async (base, child) => {
      if (rss["baseline"] === undefined) await idleRss("baseline", child)
      for (const endpoint of ["agents", "tickets"] as const) {
        await sameAnswer("baseline", base, endpoint)
        rows.push({ endpoint, label: baseline, round, ...(await load(base + path[endpoint], token, child)) })
      }
    })
  }
  const runFloor = async (round: number) => {
    console.log(`  round ${round + 1}: ${floorLabel}`)
    await withServer(floor(databaseUrl), async (base, child) => {
      await sameAnswer("floor", base, "agents")
      rows.push({ endpoint: "agents", label: floorLabel, round, ...(await load(base + path.agents, token, child)) })
    })
  }
  // Rounds of all three, the order reversed every other round: the machine's own pace drifts over minutes
  // (±10-15 % between runs of one server), and a ratio of two neighbouring runs is steadier than one of two
  // runs minutes apart. The service runs first, since it creates the rows.
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [runService, runBaseline, runFloor] : [runFloor, runBaseline, runService]
    for (const run of order) await run(round)
  }

  if (process.env["BENCH_PGLITE"] !== "0") {
    console.log("  service on PGlite")
    const dataDir = await tempDir("reads")
    await withServer(
      (port) => spawnService(serviceEnv({ PORT: String(port), DATA_DIR: dataDir, ...noRateLimit })),
      async (base, child) => {
        const own = bootstrapSecret(child)
        const agentId = await createAgent(base, own)
        const ticket = await createTicket(base, own, agentId)
        rows.push({ endpoint: "agents", label: "service on PGlite", round: 0, ...(await load(`${base}/v1/agents/${agentId}`, own, child)) })
        rows.push({ endpoint: "tickets", label: "service on PGlite", round: 0, ...(await load(`${base}/v1/tickets/${ticket}`, own, child)) })
      }
    )
  }

  const order = [baseline, floorLabel, service, "service on PGlite"]
  /** Medians over the rounds; each ratio is the median of the rounds' own ratios (a target against the baseline run beside it). */
  const table = (endpoint: "agents" | "tickets") => {
    const mine = rows.filter((r) => r.endpoint === endpoint)
    const bareIn = (round: number) => mine.find((r) => r.label === baseline && r.round === round)!
    return order
      .filter((label) => mine.some((r) => r.label === label))
      .map((label) => {
        const runs = mine.filter((r) => r.label === label)
        const cpuRatios = runs.map((r) => r.cpuUsPerRequest / bareIn(r.round).cpuUsPerRequest)
        const rpsRatios = runs.map((r) => r.result.requests.average / bareIn(r.round).result.requests.average)
        const spread = runs.length > 1 ? ` (${cpuRatios.map((x) => x.toFixed(2)).join(", ")})` : ""
        return (
          `| ${endpoint === "agents" ? "`GET /v1/agents/{id}`" : "`GET /v1/tickets/{id}`"} | ${label} | ` +
          `${fmt(median(runs.map((r) => r.result.requests.average)))} | ${fmt(median(runs.map((r) => r.result.latency.mean)), 2)} | ` +
          `${median(runs.map((r) => r.result.latency.p99))} | ${fmt(median(runs.map((r) => r.cpuUsPerRequest)))} | ` +
          `${fmt(median(rpsRatios), 2)}× | ${fmt(median(cpuRatios), 2)}×${spread} |`
        )
      })
  }
  return {
    title: `GET /v1/agents/{id} and GET /v1/tickets/{id} (${connections} connections, ${seconds} s after ${warmupSeconds} s warm-up, one server at a time; PostgreSQL: medians of ${rounds} interleaved rounds)`,
    lines: [
      // autocannon's percentiles are whole milliseconds; the mean is finer
      "| endpoint | target | req/s | mean ms | p99 ms | server CPU µs/req | req/s vs baseline | CPU/req vs baseline (each round) |",
      "|---|---|---:|---:|---:|---:|---:|---:|",
      ...table("agents"),
      ...table("tickets"),
      "",
      `Idle RSS before load: service on PostgreSQL ${fmt(rss[service]!)} MB, ` +
        `baseline ${fmt(rss["baseline"]!)} MB (${ratio(rss[service]!, rss["baseline"]!)}).`
    ]
  }
}
