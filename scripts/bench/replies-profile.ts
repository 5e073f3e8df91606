/**
 * Where a reply's time to its first token goes: the service (bundle, PGlite,
 * `local` model) with its spans sent to a collector in this process
 * (spans.ts), `PROFILE_SEQUENTIAL` replies one at a time, then one round of
 * `PROFILE_CONCURRENT` at once. For each part: the spans by name and the SQL
 * statements by text (count, total ms, ms a reply), from the spans of the
 * reply requests' traces. Run: `npx tsx scripts/bench/replies-profile.ts`.
 */
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { cleanupAll, createAgent, ensureBuilt, fmt, noRateLimit, percentile, proWorkspace, serviceEnv, sleep, spawnService, tempDir, withServer } from "./lib.js"
import { addQa, post, question } from "./replies.js"
import { type SpanRecord, startCollector } from "./spans.js"

const sequential = Number(process.env["PROFILE_SEQUENTIAL"] ?? 20)
const concurrent = Number(process.env["PROFILE_CONCURRENT"] ?? 100)

const summarise = (label: string, spans: ReadonlyArray<SpanRecord>, replies: number) => {
  const byName = new Map<string, { n: number; ms: number }>()
  for (const span of spans) {
    const key =
      span.name === "sql.execute"
        ? `sql: ${(span.detail ?? "").slice(0, 90)}`
        : span.name.startsWith("JobQueue.")
          ? `${span.name} ${span.detail ?? ""}`
          : span.name
    const entry = byName.get(key) ?? { n: 0, ms: 0 }
    entry.n++
    entry.ms += span.ms
    byName.set(key, entry)
  }
  console.log(`\n### ${label}: ${replies} replies, ${spans.length} spans`)
  console.log("| span | n | n a reply | ms total | ms a span |")
  console.log("|---|---:|---:|---:|---:|")
  for (const [name, { n, ms }] of [...byName.entries()].sort((a, b) => b[1].ms - a[1].ms)) {
    console.log(`| ${name.replace(/\|/g, "\\|")} | ${n} | ${fmt(n / replies, 2)} | ${fmt(ms, 1)} | ${fmt(ms / n, 2)} |`)
  }
}

const main = async () => {
  process.env["BENCH_SERVICE"] ??= "bundle"
  if (process.env["BENCH_SERVICE"] === "bundle") ensureBuilt()
  const collector = await startCollector()
  const dir = await tempDir("replies-profile")
  const adminToken = randomBytes(24).toString("hex")
  // PROFILE_TRACE=0: no spans (with BENCH_CPU_PROF_DIR, a CPU profile without the exporter's own work)
  const traceOn = process.env["PROFILE_TRACE"] !== "0"
  const tracing: Record<string, string> = !traceOn ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin, OTEL_BSP_MAX_QUEUE_SIZE: "1000000", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "2048" }
  try {
    await withServer(
      (port) => spawnService(serviceEnv({ PORT: String(port), DATA_DIR: join(dir, "db"), ADMIN_TOKEN: adminToken, ...noRateLimit, ...tracing })),
      async (base) => {
        const { token } = await proWorkspace(base, adminToken, "Replies profile")
        const agentId = await createAgent(base, token)
        await addQa(base, token, agentId)
        const url = `${base}/v1/agents/${agentId}/messages`
        const body = JSON.stringify({ message: question })
        for (let i = 0; i < 10; i++) await post(url, token, body)
        await sleep(1_500)
        collector.spans.length = 0
        const firsts: Array<number> = []
        for (let i = 0; i < sequential; i++) firsts.push((await post(url, token, body)).firstToken)
        await sleep(2_000)
        summarise(`one at a time (first token p50 ${fmt(percentile(firsts, 50), 1)} ms)`, collector.spans.splice(0), sequential)
        const round = await Promise.all(Array.from({ length: concurrent }, () => post(url, token, body)))
        const first = round.map((t) => t.firstToken)
        await sleep(3_000)
        summarise(
          `${concurrent} at once (first token p50 ${fmt(percentile(first, 50), 1)} / p95 ${fmt(percentile(first, 95), 1)} ms)`,
          collector.spans.splice(0),
          concurrent
        )
      }
    )
  } finally {
    collector.close()
    await cleanupAll()
  }
}

await main()
