/**
 * Knowledge ingestion with the `local` AI provider, on PGlite and on PostgreSQL
 * (a throwaway database per service run): `pages` local HTML pages of 5–20 KB
 * (served by this process on 127.0.0.1) sent as one batch to one agent, timed
 * from the batch request until every source is indexed or failed (each agent's
 * newest source polled every 250 ms). Beside it, in the same rounds (the order
 * reversed every other round, as in reads.ts): a bare loop in this process doing
 * the same fetch + extract (Readability on linkedom, the same code) + chunk +
 * insert of the chunks (into an in-memory PGlite, or the PostgreSQL server), one
 * page at a time as the service does for one agent; a loop doing the service's
 * whole work (`sameWorkLoop`); and the same pages as `agents` agents of
 * `pages / agents` each (pages/s against one agent's).
 * Before the rounds, one run of one agent with tracing on, its spans sent to a
 * collector in this process (spans.ts) and summed by phase (`knowledge.<phase>`
 * spans of the pipeline, the queue's claims and settles, the batch request). Reported: times, pages/s,
 * the service's peak RSS (sampled every 200 ms from /proc), the 1-minute load
 * average at each run's start, and the profile.
 *
 * `BENCH_PAGES` (default 500), `BENCH_KNOWLEDGE_ROUNDS` (default 2), `BENCH_KNOWLEDGE_AGENTS` (default 5),
 * `BENCH_PGLITE=0` or `BENCH_POSTGRES=0` to leave one database out.
 */
import { PGlite } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite-pgvector"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { createRequire } from "node:module"
import { loadavg } from "node:os"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import { chunk } from "../../src/knowledge/Chunk.js"
import { fromHtml } from "../../layers/extractor/Documents.js"
import { localDimensions } from "../../layers/Ai.js"
import type { Document } from "../../layers/Extractor.js"
import * as Extract from "../../layers/ai/Extract.js"
import { hashEmbed } from "../../layers/ai/Text.js"
import { type CopyType, encodeBinaryCopy } from "../../src/db/BinaryCopy.js"
import { realArrayLiteral } from "../../src/db/Columns.js"
import {
  bootstrapSecret,
  cpuMs,
  createAgent,
  postgresCpuMs,
  fmt,
  freePort,
  host,
  median,
  noRateLimit,
  pg,
  rssMb,
  type Section,
  serviceEnv,
  sleep,
  spawnService,
  startTimed,
  stop,
  tempDir,
  throwawayDatabase
} from "./lib.js"
import { type Collector, type PhaseRow, phaseRows, type Profile, profile, startCollector } from "./spans.js"

const pages = Number(process.env["BENCH_PAGES"] ?? 500)
const rounds = Number(process.env["BENCH_KNOWLEDGE_ROUNDS"] ?? 2)
const agentCount = Number(process.env["BENCH_KNOWLEDGE_AGENTS"] ?? 5)

const words = "delivery order return refund payment account password invoice warranty shipping parcel customer support store price discount size colour stock exchange tracking".split(" ")

/** Page n: deterministic, 5–20 KB of sections and paragraphs. */
export const pageHtml = (n: number): string => {
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

export const serveSite = () =>
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


type Db = "PGlite" | "PostgreSQL"

const load1 = () => loadavg()[0]!

/** Where the bare loop inserts: one query at a time, as PGlite and `pg` both take them. */
interface Sink {
  readonly query: (text: string, values?: ReadonlyArray<unknown>) => Promise<unknown>
  /** A binary COPY from these bytes (PGlite only). */
  readonly copy?: (text: string, bytes: Uint8Array) => Promise<unknown>
  readonly close: () => Promise<void>
}

const sinkOf = async (db: Db): Promise<Sink> => {
  if (db === "PGlite") {
    // with pgvector, as the service's embedded database always has it
    const lite = await PGlite.create({ extensions: { vector } })
    await lite.exec("create extension vector")
    return {
      query: (text, values) => lite.query(text, values as Array<unknown>),
      copy: (text, bytes) => lite.query(text, [], { blob: new Blob([bytes as Uint8Array<ArrayBuffer>]) }),
      close: () => lite.close()
    }
  }
  const client = new pg.Client({ connectionString: await throwawayDatabase({ prefix: "bench_knowledge" }) })
  await client.connect()
  return { query: (text, values) => client.query(text, values), close: () => client.end() }
}

const bareLoop = async (db: Db, urls: ReadonlyArray<string>) => {
  const sink = await sinkOf(db)
  await sink.query("create table chunks (id serial primary key, url text not null, position int not null, content text not null)")
  const started = performance.now()
  for (const url of urls) {
    const html = await (await fetch(url)).text()
    const doc = fromHtml(html, url)
    const pieces = chunk(`${doc.title}\n\n${doc.text}`)
    await sink.query("begin")
    for (const [position, content] of pieces.entries()) {
      await sink.query("insert into chunks (url, position, content) values ($1, $2, $3)", [url, position, content])
    }
    await sink.query("commit")
  }
  const ms = performance.now() - started
  await sink.close()
  return ms
}

interface Run {
  readonly ms: number
  readonly indexed: number
  readonly failed: number
  readonly peakMb: number
  readonly loadAtStart: number
  /** The service process's CPU time (all its threads; on PostgreSQL the server's own processes are not in it). */
  readonly cpuMs: number
  /** PostgreSQL's server processes' CPU time over the run (0 on PGlite, which runs in the service). */
  readonly databaseCpuMs: number
}

/**
 * One service from an empty database: `agents` agents, each sent its share of `urls` as one batch, timed until
 * every agent's newest source has settled (one agent's sources run in creation order). Polling only the newest
 * keeps the poll's own load off the database the service is working on.
 */
const ingest = async (db: Db, urls: ReadonlyArray<string>, agents: number, collector?: Collector): Promise<Run> => {
  const port = await freePort()
  const database: Record<string, string> =
    db === "PGlite" ? { DATA_DIR: await tempDir("knowledge") } : { DATABASE_URL: await throwawayDatabase({ prefix: "bench_knowledge" }) }
  const tracing: Record<string, string> =
    collector === undefined
      ? {}
      : // a queue big enough for a whole run: spans dropped would be time missing from the profile
        { OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin, OTEL_BSP_MAX_QUEUE_SIZE: "1000000", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "2048" }
  const env = serviceEnv({ PORT: String(port), ALLOW_PRIVATE_URLS: "true", ...noRateLimit, ...database, ...tracing })
  if (collector === undefined) delete env["OTEL_EXPORTER_OTLP_ENDPOINT"]
  const { child } = await startTimed(() => spawnService(env), port)
  const base = `http://${host}:${port}`
  let peakMb = 0
  const sampler = setInterval(() => {
    try {
      peakMb = Math.max(peakMb, rssMb(child.pid))
    } catch {
      // the process may be gone at the very end
    }
  }, 200)
  try {
    const key = bootstrapSecret(child)
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
    const agentIds: Array<string> = []
    for (let a = 0; a < agents; a++) agentIds.push(await createAgent(base, key, `Bench agent ${a + 1}`))
    const share = Math.ceil(urls.length / agents)
    const loadAtStart = load1()
    const cpuAtStart = cpuMs(child.pid)
    const databaseCpuAtStart = db === "PostgreSQL" ? postgresCpuMs() : 0
    const started = performance.now()
    for (const [a, agentId] of agentIds.entries()) {
      const batch = await fetch(`${base}/v1/agents/${agentId}/knowledge/batch`, {
        method: "POST",
        headers,
        body: JSON.stringify({ urls: urls.slice(a * share, (a + 1) * share) })
      })
      if (batch.status !== 201) throw new Error(`batch: ${batch.status} ${(await batch.text()).slice(0, 300)}`)
    }
    const settled = async (agentId: string) => {
      const body = (await (await fetch(`${base}/v1/agents/${agentId}/knowledge?limit=1`, { headers })).json()) as any
      const status = body.data[0]?.status
      return status === "indexed" || status === "failed"
    }
    const waiting = new Set(agentIds)
    const deadline = started + 30 * 60_000
    while (waiting.size > 0 && performance.now() < deadline) {
      for (const agentId of [...waiting]) if (await settled(agentId)) waiting.delete(agentId)
      if (waiting.size > 0) await sleep(250)
    }
    const ms = performance.now() - started
    const cpu = cpuMs(child.pid) - cpuAtStart
    const databaseCpu = db === "PostgreSQL" ? postgresCpuMs() - databaseCpuAtStart : 0
    if (waiting.size > 0) throw new Error(`${waiting.size} agents still ingesting after 30 minutes`)
    let indexed = 0
    let failed = 0
    for (const agentId of agentIds) {
      for (const status of ["indexed", "failed"] as const) {
        let after: string | null = null
        for (let page = 0; page < 10; page++) {
          const q: string = `?limit=100&status=${status}${after === null ? "" : `&starting_after=${after}`}`
          const body = (await (await fetch(`${base}/v1/agents/${agentId}/knowledge${q}`, { headers })).json()) as any
          if (status === "indexed") indexed += body.data.length
          else failed += body.data.length
          if (!body.meta.pagination.has_more) break
          after = body.meta.pagination.next_cursor
        }
      }
    }
    if (collector !== undefined) {
      // the last spans leave within the exporter's delay (1 s); wait for every handler's
      const until = performance.now() + 15_000
      while (collector.spans.filter((s) => s.name === "Pipeline.handle").length < urls.length && performance.now() < until) {
        await sleep(200)
      }
    }
    return { ms, indexed, failed, peakMb, loadAtStart, cpuMs: cpu, databaseCpuMs: databaseCpu }
  } finally {
    clearInterval(sampler)
    await stop(child)
  }
}

/**
 * A bare loop doing the service's whole work, without its design (job queue, phases written, decoder processes):
 * per page its attempt recorded before the work (the source `processing`, its attempts counted), fetch, extract
 * (off the main thread, as DESIGN requires of untrusted documents: a worker thread, where the service uses a
 * process), the first page's categories, Q&A into them, chunk, embed chunks and Q&A with the local provider's own
 * functions, and write both with their vectors into tables indexed as the service's are (text
 * search on stored `tsv` columns with GIN and the service's short pending lists, and where pgvector exists, always
 * on PGlite, the partial HNSW indexes `src/knowledge/VectorIndex.ts` creates, with the same build parameters;
 * btree indexes of the same shapes), one transaction per page, in one statement per table as the service writes
 * them (binary COPY on PGlite, a multi-row INSERT on PostgreSQL), with the page's source row made `indexed` with its
 * counts and text (the row created with the batch, as the contract keeps a source) and the contract's event of it
 * written, its webhook subscriptions looked up, in the same transaction. What the service's work costs before any
 * design: the service's overhead is its time above this loop's.
 */
const sameWorkLoop = async (db: Db, urls: ReadonlyArray<string>): Promise<LoopRun> => {
  const sink = await sinkOf(db)
  await sink.query(
    "create table chunks (id serial primary key, agent text not null, url text not null, position int not null, " +
      "content text not null, embedding real[] not null, tsv tsvector generated always as (to_tsvector('english', content)) stored)"
  )
  await sink.query("create index on chunks (url)")
  await sink.query("create index on chunks (agent)")
  // short pending lists as migration 0027 sets: their merges are part of the service's writes
  await sink.query("create index on chunks using gin (tsv) with (gin_pending_list_limit = 128)")
  await sink.query(
    "create table qa (id serial primary key, agent text not null, url text not null, question text not null, " +
      "answer text not null, category text, embedding real[] not null, " +
      "tsv tsvector generated always as (to_tsvector('english', question || ' ' || answer)) stored)"
  )
  await sink.query("create index on qa (agent, id desc)")
  await sink.query("create index on qa (url)")
  await sink.query("create index on qa (category) where category is not null")
  await sink.query("create index on qa using gin (tsv) with (gin_pending_list_limit = 128)")
  // the text is what Q&A regeneration reads; the attempts are counted before the work (a page that kills its
  // process still ends failed)
  await sink.query(
    "create table sources (id serial primary key, agent text not null, url text not null, status text not null, " +
      "attempts int not null default 0, chunk_count int, qa_count int, extracted_text text, " +
      "created_at timestamptz not null, started_at timestamptz, finished_at timestamptz)"
  )
  await sink.query("create index on sources (agent, id desc)")
  // the contract's event of each indexed page, and the subscriptions its webhook deliveries would go to
  await sink.query(
    "create table events (seq bigint generated always as identity, id text primary key, workspace text not null, " +
      "type text not null, created_at timestamptz not null, body text not null)"
  )
  await sink.query("create index on events (workspace, seq)")
  await sink.query(
    "create table subscriptions (seq bigint generated always as identity, id text primary key, workspace text not null, " +
      "events text[] not null, is_active boolean not null, deleted_at timestamptz)"
  )
  await sink.query("create index on subscriptions (workspace, seq desc) where deleted_at is null")
  if (db === "PGlite") {
    for (const table of ["chunks", "qa"]) {
      await sink.query(
        `create index on ${table} using hnsw ((embedding::vector(${localDimensions})) vector_cosine_ops) ` +
          `with (m = 16, ef_construction = 64) where cardinality(embedding) = ${localDimensions}`
      )
    }
  }
  const write = async (table: string, columns: ReadonlyArray<string>, types: ReadonlyArray<CopyType>, rows: ReadonlyArray<ReadonlyArray<unknown>>) => {
    if (rows.length === 0) return
    if (sink.copy !== undefined) {
      return sink.copy(`copy ${table} (${columns.join(", ")}) from '/dev/blob' with (format binary)`, encodeBinaryCopy(types, rows))
    }
    const values = rows.map(
      (row, r) => `(${row.map((_, c) => `$${r * columns.length + c + 1}${types[c] === "float4[]" ? "::real[]" : ""}`).join(", ")})`
    )
    const params = rows.flatMap((row) => row.map((v, c) => (types[c] === "float4[]" ? realArrayLiteral(v as Array<number>) : v)))
    await sink.query(`insert into ${table} (${columns.join(", ")}) values ${values.join(", ")}`, params)
  }
  // pages are read off the main thread, as DESIGN requires of untrusted documents (the service: in a decoder process)
  const reader = startReader()
  const agent = "agt_bench"
  const cpuAtStart = process.cpuUsage()
  const databaseCpuAtStart = db === "PostgreSQL" ? postgresCpuMs() : 0
  const started = performance.now()
  const sourceIds = new Map<string, number>()
  for (let i = 0; i < urls.length; i += 100) {
    const batch = urls.slice(i, i + 100)
    const rows = await sink.query(
      `insert into sources (agent, url, status, created_at) values ${batch.map((_, j) => `($1, $${j + 2}, 'pending', now())`).join(", ")} returning id, url`,
      [agent, ...batch]
    )
    for (const row of (rows as { rows: Array<{ id: number; url: string }> }).rows) sourceIds.set(row.url, row.id)
  }
  let categories: ReadonlyArray<Extract.Category> | undefined
  // the attempt recorded before the work; on PostgreSQL without waiting for the WAL flush, as the service's claim
  const asyncCommit = db === "PostgreSQL" ? "from (select set_config('synchronous_commit', 'off', true)) async_commit " : ""
  for (const [n, url] of urls.entries()) {
    await sink.query(
      `update sources set status = 'processing', attempts = attempts + 1, started_at = now() ${asyncCommit}where id = $1`,
      [sourceIds.get(url)]
    )
    const html = await (await fetch(url)).text()
    const doc = await readOffThread(reader, html, url)
    categories ??= Extract.categories(doc)
    const items = Extract.qa(doc, categories)
    const pieces = chunk(`${doc.title}\n\n${doc.text}`)
    const vectors = [...pieces, ...items.map((i) => `${i.question}\n${i.answer}`)].map((t) => hashEmbed(t, localDimensions))
    await sink.query("begin")
    await write(
      "chunks",
      ["agent", "url", "position", "content", "embedding"],
      ["text", "text", "int4", "text", "float4[]"],
      pieces.map((content, position) => [agent, url, position, content, vectors[position]])
    )
    await write(
      "qa",
      ["agent", "url", "question", "answer", "category", "embedding"],
      ["text", "text", "text", "text", "text", "float4[]"],
      items.map((item, i) => [agent, url, item.question, item.answer, item.category, vectors[pieces.length + i]])
    )
    const updated = (await sink.query(
      "update sources set status = 'indexed', chunk_count = $2, qa_count = $3, extracted_text = $4, finished_at = now() " +
        "where id = $1 returning id, agent, url, status, attempts, chunk_count, qa_count, created_at, started_at, finished_at",
      [sourceIds.get(url), pieces.length, items.length, doc.text]
    )) as { rows: Array<Record<string, unknown>> }
    const event = { id: `evt_${n}`, object: "event", type: "knowledge.source.indexed", data: { source: updated.rows[0] } }
    await sink.query("insert into events (id, workspace, type, created_at, body) values ($1, $2, $3, now(), $4)", [
      event.id,
      "ws_bench",
      event.type,
      JSON.stringify(event)
    ])
    await sink.query("select id from subscriptions where workspace = $1 and is_active and deleted_at is null and $2 = any(events)", [
      "ws_bench",
      event.type
    ])
    await sink.query("commit")
  }
  const ms = performance.now() - started
  const cpu = process.cpuUsage(cpuAtStart)
  // before the close: a backend's CPU leaves the count with its process
  const databaseCpuMs = db === "PostgreSQL" ? postgresCpuMs() - databaseCpuAtStart : 0
  await reader.terminate()
  await sink.close()
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, databaseCpuMs }
}

/** The loop's reading thread: `extract-thread.ts`, through tsx's API as the benchmarks run from source. */
const startReader = () => {
  const tsx = new URL("dist/esm/api/index.mjs", pathToFileURL(createRequire(import.meta.url).resolve("tsx/package.json"))).href
  const source = new URL("./extract-thread.ts", import.meta.url).href
  return new Worker(`import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(source)}) })`, { eval: true })
}

/** A page read by the loop's reading thread. */
const readOffThread = (worker: Worker, html: string, url: string) =>
  new Promise<Document>((resolve, reject) => {
    worker.once("error", reject)
    worker.once("message", (doc: Document) => {
      worker.off("error", reject)
      resolve(doc)
    })
    worker.postMessage({ html, url })
  })

/** The same-work loop's time, and its CPU: the benchmark's process (which serves the site's pages too) and PostgreSQL's. */
interface LoopRun {
  readonly ms: number
  readonly cpuMs: number
  readonly databaseCpuMs: number
}

interface Measured {
  readonly db: Db
  readonly round: number
  readonly one: Run
  readonly bareMs: number
  readonly bareLoad: number
  readonly sameMs: number
  readonly sameCpu: string
  readonly sameLoad: number
  readonly many: Run
}

const pagesPerSecond = (ms: number) => (pages / ms) * 1000

/** CPU time a page (the service's, plus PostgreSQL's on PostgreSQL), and the cores busy on average over the run. */
const cpuCell = (run: Pick<Run, "ms" | "cpuMs" | "databaseCpuMs">) =>
  run.databaseCpuMs === 0
    ? `${fmt(run.cpuMs / pages, 1)} ms (${fmt(run.cpuMs / run.ms, 2)})`
    : `${fmt(run.cpuMs / pages, 1)} + ${fmt(run.databaseCpuMs / pages, 1)} ms (${fmt((run.cpuMs + run.databaseCpuMs) / run.ms, 2)})`

/** `cpuCell` of the runs' medians. */
const medianCpu = (runs: ReadonlyArray<Run>) =>
  cpuCell({
    ms: median(runs.map((r) => r.ms)),
    cpuMs: median(runs.map((r) => r.cpuMs)),
    databaseCpuMs: median(runs.map((r) => r.databaseCpuMs))
  })

const runLine = (label: string, run: Run) =>
  `    ${label}: ${fmt(run.ms / 1000, 1)} s, ${fmt(pagesPerSecond(run.ms), 2)} pages/s, ${run.indexed} indexed, ` +
  `${run.failed} failed, CPU ${cpuCell(run)}, peak RSS ${fmt(run.peakMb)} MB, load ${fmt(run.loadAtStart, 2)}`

export const knowledge = async (): Promise<Section> => {
  const site = await serveSite()
  const urls = Array.from({ length: pages }, (_, i) => `${site.origin}/p/${i}`)
  const kb = urls.map((_, i) => pageHtml(i).length / 1024)
  const dbs: Array<Db> = [
    ...(process.env["BENCH_PGLITE"] === "0" ? [] : (["PGlite"] as const)),
    ...(process.env["BENCH_POSTGRES"] === "0" ? [] : (["PostgreSQL"] as const))
  ]
  const measured: Array<Measured> = []
  const profiles = new Map<Db, { profile: Profile; run: Run }>()
  try {
    for (const db of dbs) {
      // the profile first: it is what a shortened run must not lose
      console.log(`  ${db}, traced run (1 agent)`)
      const collector = await startCollector()
      try {
        const run = await ingest(db, urls, 1, collector)
        console.log(runLine("service, 1 agent, traced", run))
        profiles.set(db, { profile: profile(collector.spans), run })
        for (const line of profileLines(new Map([[db, profiles.get(db)!]]))) console.log(line)
      } finally {
        collector.close()
      }
      for (let round = 0; round < rounds; round++) {
        console.log(`  ${db}, round ${round + 1}`)
        let one: Run | undefined
        let many: Run | undefined
        let bareMs = 0
        let bareLoad = 0
        let sameMs = 0
        let sameCpu = ""
        let sameLoad = 0
        const steps = [
          async () => {
            one = await ingest(db, urls, 1)
            console.log(runLine("service, 1 agent", one))
          },
          async () => {
            bareLoad = load1()
            bareMs = await bareLoop(db, urls)
            console.log(`    bare loop: ${fmt(bareMs / 1000, 1)} s, ${fmt(pagesPerSecond(bareMs), 2)} pages/s, load ${fmt(bareLoad, 2)}`)
          },
          async () => {
            sameLoad = load1()
            const same = await sameWorkLoop(db, urls)
            sameMs = same.ms
            sameCpu = cpuCell(same)
            console.log(`    bare loop, same work: ${fmt(sameMs / 1000, 1)} s, ${fmt(pagesPerSecond(sameMs), 2)} pages/s, CPU ${sameCpu}, load ${fmt(sameLoad, 2)}`)
          },
          async () => {
            many = await ingest(db, urls, agentCount)
            console.log(runLine(`service, ${agentCount} agents`, many))
          }
        ]
        // the machine's pace drifts over minutes: neighbours in alternating order compare better
        for (const step of round % 2 === 0 ? steps : [...steps].reverse()) await step()
        measured.push({ db, round, one: one!, bareMs, bareLoad, sameMs, sameCpu, sameLoad, many: many! })
      }
    }
  } finally {
    site.close()
  }

  // BENCH_KNOWLEDGE_ROUNDS=0: the profile alone
  const throughput = measured.length === 0 ? [] : [
    `${pages} pages of ${fmt(Math.min(...kb), 1)}–${fmt(Math.max(...kb), 1)} KB (mean ${fmt(kb.reduce((a, b) => a + b, 0) / kb.length, 1)} KB), ` +
      `\`local\` AI provider, default \`INGEST_CONCURRENCY\` (2 agents at once), ${rounds} interleaved rounds per database ` +
      `(service with 1 agent, bare loop, bare loop doing the same work, service with ${agentCount} agents × ${Math.ceil(pages / agentCount)} pages; order reversed every other round). ` +
      "Load: the 1-minute load average at the start of each run (2 cores).",
    "",
    "| database | round | service, 1 agent | bare loop | service / bare | bare loop, same work | service / same work | service, " +
      `${agentCount} agents | ${agentCount} agents vs 1 (pages/s) | CPU a page, 1 / ${agentCount} agents (cores busy) | CPU a page, same-work loop | peak RSS 1 agent / ${agentCount} agents |`,
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...measured.map(
      (m) =>
        `| ${m.db} | ${m.round + 1} | ${fmt(m.one.ms / 1000, 1)} s, ${fmt(pagesPerSecond(m.one.ms), 2)}/s (load ${fmt(m.one.loadAtStart, 2)}) | ` +
        `${fmt(m.bareMs / 1000, 1)} s, ${fmt(pagesPerSecond(m.bareMs), 1)}/s (load ${fmt(m.bareLoad, 2)}) | ${fmt(m.one.ms / m.bareMs, 2)}× | ` +
        `${fmt(m.sameMs / 1000, 1)} s, ${fmt(pagesPerSecond(m.sameMs), 1)}/s (load ${fmt(m.sameLoad, 2)}) | ${fmt(m.one.ms / m.sameMs, 2)}× | ` +
        `${fmt(m.many.ms / 1000, 1)} s, ${fmt(pagesPerSecond(m.many.ms), 2)}/s (load ${fmt(m.many.loadAtStart, 2)}) | ` +
        `${fmt(m.one.ms / m.many.ms, 2)}× | ${cpuCell(m.one)} / ${cpuCell(m.many)} | ${m.sameCpu} | ${fmt(m.one.peakMb)} / ${fmt(m.many.peakMb)} MB |`
    ),
    ...dbs.map((db) => {
      const mine = measured.filter((m) => m.db === db)
      const mid = (f: (m: Measured) => number) => median(mine.map(f))
      return (
        `| ${db} | median | ${fmt(pagesPerSecond(mid((m) => m.one.ms)), 2)}/s | ${fmt(pagesPerSecond(mid((m) => m.bareMs)), 1)}/s | ` +
        `${fmt(mid((m) => m.one.ms / m.bareMs), 2)}× | ${fmt(pagesPerSecond(mid((m) => m.sameMs)), 1)}/s | ${fmt(mid((m) => m.one.ms / m.sameMs), 2)}× | ` +
        `${fmt(pagesPerSecond(mid((m) => m.many.ms)), 2)}/s | ` +
        `${fmt(mid((m) => m.one.ms / m.many.ms), 2)}× | ${medianCpu(mine.map((m) => m.one))} / ${medianCpu(mine.map((m) => m.many))} | | ` +
        `${fmt(Math.max(...mine.map((m) => m.one.peakMb)))} / ${fmt(Math.max(...mine.map((m) => m.many.peakMb)))} MB (max) |`
      )
    }),
    "",
    "CPU: the service process's user and system time over the run (all its threads, its decoder processes not " +
      "counted), plus on PostgreSQL the " +
      "server's processes' (every `postgres` process on the machine, the benchmark's databases only), per page, and " +
      "as cores busy on average (of 2). The same-work loop's: the benchmark's process (which serves the site's pages " +
      "as well; its reading thread counted) plus PostgreSQL's.",
    "",
    `Every run: ${measured.every((m) => m.one.failed === 0 && m.many.failed === 0 && m.one.indexed === pages && m.many.indexed === pages) ? `all ${pages} sources indexed, none failed` : measured.map((m) => `${m.db} round ${m.round + 1}: ${m.one.indexed}/${m.one.failed} and ${m.many.indexed}/${m.many.failed} indexed/failed`).join("; ")}.`,
    ""
  ]
  const lines = [
    ...throughput,
    ...profileLines(profiles)
  ]
  for (const line of lines) console.log(line)
  return { title: "Knowledge ingestion: throughput and per-phase profile", lines }
}

const rowLabels: Record<PhaseRow, string> = {
  "batch request": "batch request (`POST …/knowledge/batch`: the sources and their jobs)",
  claim: "claim (`JobQueue.claim` of the ingestion queue, while no handler ran)",
  "handler (load source, rest)": "handler, rest (load the source row, the attempt's bookkeeping)",
  fetch: "fetch (`knowledge.fetch`)",
  extract: "extract (`knowledge.extract`: in a decoder process)",
  categorize: "categorize (`knowledge.categorize`)",
  qa: "Q&A (`knowledge.qa`)",
  chunk: "chunk (`knowledge.chunk`)",
  embed: "embed (`knowledge.embed`: chunks and Q&A)",
  write: "write (`knowledge.write`: chunks, Q&A, title; transaction)",
  progress: "progress writes (`knowledge.progress`, the final `indexed` state included)",
  event: "event write (`Outbox.emit`)",
  settle: "settle (`JobQueue.settle` of the ingestion queue)"
}

const profileLines = (profiles: Map<Db, { profile: Profile; run: Run }>): Array<string> => {
  if (profiles.size === 0) return []
  const dbs = [...profiles.keys()]
  const columns = dbs.flatMap((db) => [`${db} s`, "share", "ms/source", "of which SQL s"])
  const lines = [
    `### Per-phase profile (1 agent, ${pages} pages, traced run)`,
    "",
    "The sum of each phase's spans, exclusive of the phases nested in it; the share is of the run's wall time " +
      "(one agent's sources run one at a time, so the phases add up). The remainder is time in no span: the worker " +
      "between jobs, the exporter, the last poll's wait (at most 250 ms).",
    "",
    ...dbs.map((db) => {
      const { profile: p, run } = profiles.get(db)!
      return (
        `${db}: ${fmt(run.ms / 1000, 1)} s traced (${fmt(pagesPerSecond(run.ms), 2)} pages/s, load ${fmt(run.loadAtStart, 2)} at start, ` +
        `peak RSS ${fmt(run.peakMb)} MB), ${p.handlers} handler spans for ${pages} pages, ${p.spans} spans in all. ` +
        `Concurrent, outside the sum: the poller's ${p.polls.n} requests ${fmt(p.polls.ms / 1000, 1)} s, ` +
        `other queues' ${p.otherQueues.n} claims and settles ${fmt(p.otherQueues.ms / 1000, 1)} s, ` +
        `the ingestion queue's ${p.claimsBeside.n} claims while a handler ran ${fmt(p.claimsBeside.ms / 1000, 1)} s, ` +
        `${p.looseSql.n} other statements (lease extensions, other workers) ${fmt(p.looseSql.ms / 1000, 1)} s.`
      )
    }),
    "",
    `| phase | ${columns.join(" | ")} |`,
    `|---|${columns.map(() => "---:").join("|")}|`
  ]
  const cell = (db: Db, row: PhaseRow) => {
    const { profile: p, run } = profiles.get(db)!
    const ms = p.ms[row]
    return `${fmt(ms / 1000, 2)} | ${fmt((ms / run.ms) * 100, 1)} % | ${fmt(ms / pages, 2)} | ${fmt(p.sqlMs[row] / 1000, 2)}`
  }
  for (const row of phaseRows) lines.push(`| ${rowLabels[row]} | ${dbs.map((db) => cell(db, row)).join(" | ")} |`)
  const rest = (db: Db) => {
    const { profile: p, run } = profiles.get(db)!
    const spanned = phaseRows.reduce((sum, row) => sum + p.ms[row], 0)
    return `${fmt((run.ms - spanned) / 1000, 2)} | ${fmt(((run.ms - spanned) / run.ms) * 100, 1)} % | ${fmt((run.ms - spanned) / pages, 2)} | `
  }
  lines.push(`| in no span | ${dbs.map(rest).join(" | ")} |`)
  lines.push(`| **wall time** | ${dbs.map((db) => `**${fmt(profiles.get(db)!.run.ms / 1000, 2)}** | 100 % | ${fmt(profiles.get(db)!.run.ms / pages, 2)} | `).join(" | ")} |`)
  for (const db of dbs) {
    const { profile: p } = profiles.get(db)!
    lines.push("", `${db}, the costliest statements (text's start; time per statement includes any wait for a connection):`, "")
    lines.push("| phase | statement | n | total s | ms each |", "|---|---|---:|---:|---:|")
    for (const st of p.statements.slice(0, 10)) {
      lines.push(`| ${st.row} | \`${st.text.replace(/\|/g, "\\|")}…\` | ${st.n} | ${fmt(st.ms / 1000, 2)} | ${fmt(st.ms / st.n, 2)} |`)
    }
  }
  lines.push("")
  lines.push(
    `Per source: ${dbs.map((db) => `${db} ${fmt(profiles.get(db)!.profile.count.progress / pages, 1)} progress writes, ${fmt(profiles.get(db)!.profile.count.claim / pages, 2)} claims`).join("; ")}.`
  )
  return lines
}
