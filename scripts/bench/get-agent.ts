/**
 * `GET /v1/agents/{id}` throughput: the service on PostgreSQL and on PGlite
 * against a bare node:http + pg baseline (scripts/bench/baseline-server.ts)
 * reading the same key and agent from the same throwaway database. One server
 * runs at a time; autocannon runs in this process.
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
interface Target extends Measured {
  readonly label: string
}

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
  console.log(`    ${fmt(result.requests.average)} req/s, mean ${fmt(result.latency.mean, 2)} ms, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${fmt(cpuUsPerRequest)} µs CPU/req`)
  return { result, cpuUsPerRequest }
}

const getJson = async (url: string, token: string) => {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5_000) })
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`)
  return (await res.json()) as { readonly data: { readonly id: string } }
}

export const getAgent = async (): Promise<Section> => {
  const databaseUrl = await throwawayDatabase()
  const targets: Array<Target> = []
  const rss: Record<string, number> = {}
  const idleRss = async (label: string, child: Child) => {
    await sleep(3_000)
    rss[label] = rssMb(child.pid)
  }

  console.log("  service on PostgreSQL")
  const { token, agentId, expected } = await withServer(
    (port) => spawnService(serviceEnv({ PORT: String(port), DATABASE_URL: databaseUrl, ...noRateLimit })),
    async (base, child) => {
      const token = bootstrapSecret(child)
      const agentId = await createAgent(base, token)
      const expected = JSON.stringify((await getJson(`${base}/v1/agents/${agentId}`, token)).data)
      await idleRss("service on PostgreSQL", child)
      targets.push({ label: "service on PostgreSQL", ...(await load(`${base}/v1/agents/${agentId}`, token, child)) })
      return { token, agentId, expected }
    }
  )

  console.log("  baseline node:http + pg")
  await withServer(
    (port) =>
      spawnTracked(process.execPath, ["--import", "tsx", "scripts/bench/baseline-server.ts"], {
        ...process.env,
        PORT: String(port),
        DATABASE_URL: databaseUrl
      }),
    async (base, child) => {
      // the baseline must answer exactly what the service answers
      const got = JSON.stringify((await getJson(`${base}/v1/agents/${agentId}`, token)).data)
      if (got !== expected) throw new Error(`baseline body differs:\n  service  ${expected}\n  baseline ${got}`)
      await idleRss("baseline", child)
      targets.unshift({ label: "baseline node:http + pg", ...(await load(`${base}/v1/agents/${agentId}`, token, child)) })
    }
  )

  console.log("  service on PGlite")
  const dataDir = await tempDir("get-agent")
  await withServer(
    (port) => spawnService(serviceEnv({ PORT: String(port), DATA_DIR: dataDir, ...noRateLimit })),
    async (base, child) => {
      const token = bootstrapSecret(child)
      const id = await createAgent(base, token)
      targets.push({ label: "service on PGlite", ...(await load(`${base}/v1/agents/${id}`, token, child)) })
    }
  )

  const baseline = targets[0]!
  return {
    title: `GET /v1/agents/{id} (${connections} connections, ${seconds} s after ${warmupSeconds} s warm-up, one server at a time)`,
    lines: [
      // autocannon's percentiles are whole milliseconds; the mean is finer
      "| target | req/s | mean ms | p50 ms | p99 ms | server CPU µs/req | req/s vs baseline | CPU/req vs baseline |",
      "|---|---:|---:|---:|---:|---:|---:|---:|",
      ...targets.map(
        ({ label, result: r, cpuUsPerRequest: cpu }) =>
          `| ${label} | ${fmt(r.requests.average)} | ${fmt(r.latency.mean, 2)} | ${r.latency.p50} | ${r.latency.p99} | ` +
          `${fmt(cpu)} | ${ratio(r.requests.average, baseline.result.requests.average)} | ${ratio(cpu, baseline.cpuUsPerRequest)} |`
      ),
      "",
      `Idle RSS before load: service on PostgreSQL ${fmt(rss["service on PostgreSQL"]!)} MB, ` +
        `baseline ${fmt(rss["baseline"]!)} MB (${ratio(rss["service on PostgreSQL"]!, rss["baseline"]!)}).`
    ]
  }
}
