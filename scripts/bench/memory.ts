/**
 * The service's memory during knowledge ingestion, alone (no throughput
 * comparison): one service from an empty database, its RSS when ready and
 * idle, then `BENCH_PAGES` (default 500) local pages of 5–20 KB sent as one
 * batch to one agent; RSS sampled every 200 ms from /proc until every source
 * has settled (and the service's CPU time meanwhile), with the split of the peak sample's resident memory
 * (anonymous / file-backed, from smaps_rollup). `BENCH_PGLITE=0` or
 * `BENCH_POSTGRES=0` leaves a database out. Run: `npx tsx scripts/bench/memory.ts`
 * (the bundle in `dist/`, built first when a source is newer; `BENCH_DIST` for another).
 */
import { readFileSync } from "node:fs"
import { serveSite } from "./knowledge.js"
import {
  bootstrapSecret,
  cleanupAll,
  cpuMs,
  createAgent,
  ensureBuilt,
  fmt,
  freePort,
  host,
  noRateLimit,
  serviceEnv,
  sleep,
  spawnService,
  startTimed,
  stop,
  tempDir,
  throwawayDatabase
} from "./lib.js"

const pages = Number(process.env["BENCH_PAGES"] ?? 500)

type Db = "PGlite" | "PostgreSQL"

/** Resident memory by kind, in MB, from /proc/<pid>/smaps_rollup. */
const rollup = (pid: number): Record<string, number> => {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8")
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0) / 1024
  return { rss: field("Rss"), anon: field("Anonymous"), file: field("Rss") - field("Anonymous") }
}

const measure = async (db: Db, urls: ReadonlyArray<string>) => {
  const port = await freePort()
  const database: Record<string, string> =
    db === "PGlite" ? { DATA_DIR: await tempDir("memory") } : { DATABASE_URL: await throwawayDatabase({ prefix: "bench_memory" }) }
  const env = serviceEnv({ PORT: String(port), ALLOW_PRIVATE_URLS: "true", ...noRateLimit, ...database })
  delete env["OTEL_EXPORTER_OTLP_ENDPOINT"]
  const { child } = await startTimed(() => spawnService(env), port)
  const base = `http://${host}:${port}`
  try {
    await sleep(2000)
    const idle = rollup(child.pid)
    let peak = idle
    const sampler = setInterval(() => {
      try {
        const now = rollup(child.pid)
        if (now.rss > peak.rss) peak = now
      } catch {
        // gone at the very end
      }
    }, 200)
    const key = bootstrapSecret(child)
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
    const agentId = await createAgent(base, key, "Memory bench agent")
    const started = performance.now()
    const cpuStart = cpuMs(child.pid)
    const batch = await fetch(`${base}/v1/agents/${agentId}/knowledge/batch`, { method: "POST", headers, body: JSON.stringify({ urls }) })
    if (batch.status !== 201) throw new Error(`batch: ${batch.status} ${(await batch.text()).slice(0, 300)}`)
    for (;;) {
      const body = (await (await fetch(`${base}/v1/agents/${agentId}/knowledge?limit=1`, { headers })).json()) as any
      const status = body.data[0]?.status
      if (status === "indexed" || status === "failed") break
      await sleep(250)
    }
    const ms = performance.now() - started
    const cpu = cpuMs(child.pid) - cpuStart
    clearInterval(sampler)
    const after = rollup(child.pid)
    const mb = (r: Record<string, number>) => `${fmt(r.rss!)} MB (anon ${fmt(r.anon!)}, file ${fmt(r.file!)})`
    console.log(`${db}: idle ${mb(idle)}; peak ${mb(peak)}; at the end ${mb(after)}; ${fmt(ms / 1000, 1)} s, ${fmt((pages / ms) * 1000, 2)} pages/s, service CPU ${fmt(cpu / 1000, 1)} s`)
  } finally {
    await stop(child)
  }
}

const site = await serveSite()
try {
  if (process.env["BENCH_DIST"] === undefined) {
    process.env["BENCH_SERVICE"] = "bundle"
    ensureBuilt()
  }
  const urls = Array.from({ length: pages }, (_, i) => `${site.origin}/p/${i}`)
  if (process.env["BENCH_PGLITE"] !== "0") await measure("PGlite", urls)
  if (process.env["BENCH_POSTGRES"] !== "0") await measure("PostgreSQL", urls)
} finally {
  site.close()
  await cleanupAll()
}
