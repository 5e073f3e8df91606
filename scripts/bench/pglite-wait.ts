/**
 * How long another workspace waits while big documents are indexed on the embedded database. The service (the
 * bundle) on PGlite; workspace A gets, on three agents at once, the largest documents the limits admit: a `text`
 * source of one line at the text limit (1 MB), a `text/plain` file of one 2 MB line, and a `url` page of one
 * line at `INGEST_MAX_PAGE_BYTES` (default 10 MB; served by this process on 127.0.0.1). Meanwhile workspace B's
 * `GET /v1/agents` is probed every 50 ms until the three are settled; beside it, the same probe on the service
 * idle, in the same run. Prints the slowest and p99 wait of each and their ratio.
 *
 * `BENCH_WAIT_PAGE_BYTES` (the page's size and the service's limit), `BENCH_WAIT_IDLE_SECONDS` (default 5),
 * `BENCH_POSTGRES=1` runs the same on a throwaway PostgreSQL database too; `BENCH_WAIT_LOG=<path>`: the service's
 * output (its last 64 KB) kept in `<path>.<database>`.
 */
import { randomBytes } from "node:crypto"
import { writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import {
  createAgent,
  fmt,
  freePort,
  host,
  noRateLimit,
  percentile,
  proWorkspace,
  ratio,
  type Section,
  serviceEnv,
  sleep,
  spawnService,
  startTimed,
  stop,
  tempDir,
  throwawayDatabase
} from "./lib.js"

const pageBytes = Number(process.env["BENCH_WAIT_PAGE_BYTES"] ?? 10 * 1024 * 1024)
const idleSeconds = Number(process.env["BENCH_WAIT_IDLE_SECONDS"] ?? 5)
const textBytes = 1024 * 1024
const fileBytes = 2 * 1024 * 1024
const probeEveryMs = 50

/** `bytes` of words on one line, no paragraph or sentence break: the chunker's worst case. */
const oneLine = (bytes: number, seed: string) => {
  const words = ["refund", "shipping", "invoice", "warranty", "account", "password", "delivery", "return", seed]
  const parts: Array<string> = []
  let length = 0
  for (let i = 0; length < bytes; i++) {
    const word = `${words[i % words.length]}${i % 97}`
    parts.push(word)
    length += word.length + 1
  }
  return parts.join(" ").slice(0, bytes)
}

/** One page, a single paragraph of `pageBytes` bytes in all. */
const servePage = () =>
  new Promise<{ url: string; close: () => void }>((resolve) => {
    const head = "<!doctype html><html><head><title>The long page</title></head><body><p>"
    const tail = "</p></body></html>"
    const page = Buffer.from(head + oneLine(pageBytes - head.length - tail.length, "page") + tail)
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": page.length })
      res.end(page)
    })
    server.listen(0, host, () =>
      resolve({
        url: `http://${host}:${(server.address() as AddressInfo).port}/long`,
        close: () => {
          server.closeAllConnections()
          server.close()
        }
      })
    )
  })

interface Waits {
  readonly count: number
  readonly max: number
  readonly p99: number
  readonly p50: number
}

const summarize = (ms: ReadonlyArray<number>): Waits => ({
  count: ms.length,
  max: Math.max(...ms),
  p99: percentile(ms, 99),
  p50: percentile(ms, 50)
})

/** `GET /v1/agents` every 50 ms (after the previous answer) until `done()`, at most `limitMs`; each one's time. */
const probe = async (base: string, token: string, done: () => boolean, limitMs: number) => {
  const times: Array<number> = []
  const until = performance.now() + limitMs
  while (!done() && performance.now() < until) {
    const started = performance.now()
    const get = () => fetch(`${base}/v1/agents?limit=5`, { headers: { authorization: `Bearer ${token}` } })
    // a kept-alive connection the server closed as it was reused: asked again, on a new one, timed from the first
    const res = await get().catch(get)
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`probe: GET /v1/agents answered ${res.status}`)
    times.push(performance.now() - started)
    await sleep(probeEveryMs)
  }
  return times
}

const post = async (url: string, token: string, body: unknown) => {
  const res = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  if (res.status !== 201 && res.status !== 200) throw new Error(`POST ${url}: ${res.status} ${(await res.text()).slice(0, 300)}`)
  return ((await res.json()) as { data: any }).data
}

/** A `text/plain` file of `text`, uploaded and confirmed; its id. */
const uploadText = async (base: string, token: string, text: string) => {
  const bytes = Buffer.from(text)
  const file = await post(`${base}/v1/files`, token, { filename: "long.txt", content_type: "text/plain", size_bytes: bytes.length })
  const put = await fetch(`${base}/v1/files/${file.id}/content`, {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "text/plain" },
    body: bytes
  })
  if (put.status !== 200) throw new Error(`PUT file: ${put.status} ${await put.text()}`)
  await post(`${base}/v1/files/${file.id}/confirm`, token, {})
  return file.id as string
}

type Db = "PGlite" | "PostgreSQL"

interface Run {
  readonly idle: Waits
  readonly busy: Waits
  readonly ingestMs: number
  readonly sources: ReadonlyArray<{ readonly what: string; readonly status: string; readonly chunks: number; readonly qa: number }>
}

const measure = async (db: Db, pageUrl: string): Promise<Run> => {
  const port = await freePort()
  const adminToken = randomBytes(24).toString("hex")
  const database: Record<string, string> =
    db === "PGlite" ? { DATA_DIR: await tempDir("pglite-wait") } : { DATABASE_URL: await throwawayDatabase({ prefix: "bench_wait" }) }
  const env = serviceEnv({
    PORT: String(port),
    ALLOW_PRIVATE_URLS: "true",
    ADMIN_TOKEN: adminToken,
    INGEST_CONCURRENCY: "3",
    INGEST_MAX_PAGE_BYTES: String(pageBytes),
    ...noRateLimit,
    ...database
  })
  const { child } = await startTimed(() => spawnService(env), port)
  const base = `http://${host}:${port}`
  try {
    const a = await proWorkspace(base, adminToken, "Big documents")
    const b = await proWorkspace(base, adminToken, "Bystander")
    await createAgent(base, b.token, "Bystander agent")
    const agents = [
      await createAgent(base, a.token, "Text agent"),
      await createAgent(base, a.token, "File agent"),
      await createAgent(base, a.token, "Page agent")
    ]
    const fileId = await uploadText(base, a.token, oneLine(fileBytes, "file"))
    // warm both paths before either measurement
    await probe(base, b.token, () => false, 1_000)
    const idle = summarize(await probe(base, b.token, () => false, idleSeconds * 1_000))

    const started = performance.now()
    const bodies = [
      { what: "text, 1 MB line", body: { type: "text", title: "The long text", content: oneLine(textBytes, "text") } },
      { what: "file, 2 MB line", body: { type: "file_id", file_id: fileId } },
      { what: `page, ${fmt(pageBytes / 1024 / 1024, 1)} MB line`, body: { type: "url", url: pageUrl } }
    ]
    const created: Array<{ what: string; agent: string; id: string }> = []
    for (const [i, { what, body }] of bodies.entries()) {
      const source = await post(`${base}/v1/agents/${agents[i]}/knowledge`, a.token, body)
      created.push({ what, agent: agents[i]!, id: source.id })
    }
    let settled = false
    const busyProbe = probe(base, b.token, () => settled, 10 * 60_000)
    // its failure is reported when awaited below, not as an unhandled rejection meanwhile
    busyProbe.catch(() => undefined)
    const finals: Array<any> = []
    // bounded: at most ten minutes of polls, every 250 ms
    for (let i = 0; i < 2_400 && !settled; i++) {
      await sleep(250)
      finals.length = 0
      for (const s of created) {
        const res = await fetch(`${base}/v1/agents/${s.agent}/knowledge/${s.id}`, { headers: { authorization: `Bearer ${a.token}` } })
        finals.push(((await res.json()) as { data: any }).data)
      }
      settled = finals.every((s) => s.status === "indexed" || s.status === "failed")
    }
    const ingestMs = performance.now() - started
    const busy = summarize(await busyProbe)
    if (!settled) throw new Error("the big sources did not settle within ten minutes")
    return {
      idle,
      busy,
      ingestMs,
      sources: finals.map((s, i) => ({ what: created[i]!.what, status: s.status, chunks: s.chunk_count, qa: s.qa_count }))
    }
  } finally {
    await stop(child)
    const log = process.env["BENCH_WAIT_LOG"]
    if (log !== undefined) writeFileSync(`${log}.${db}`, child.output())
  }
}

export const pgliteWait = async (): Promise<Section> => {
  const page = await servePage()
  const dbs: Array<Db> = process.env["BENCH_POSTGRES"] === "1" ? ["PGlite", "PostgreSQL"] : ["PGlite"]
  const runs = new Map<Db, Run>()
  try {
    for (const db of dbs) {
      const run = await measure(db, page.url)
      runs.set(db, run)
      console.log(`${db}: busy max ${fmt(run.busy.max)} ms, p99 ${fmt(run.busy.p99)} ms; idle max ${fmt(run.idle.max)} ms`)
    }
  } finally {
    page.close()
  }
  const lines = [
    `Another workspace's \`GET /v1/agents\`, every ${probeEveryMs} ms, while one workspace's three biggest documents are indexed ` +
      "at once (three agents), beside the same probe on the idle service.",
    "",
    "| database | probes (idle / busy) | idle p50 / p99 / max, ms | busy p50 / p99 / max, ms | p99 ratio | max ratio | indexing, s |",
    "|---|---|---|---|---|---|---|",
    ...[...runs].map(
      ([db, r]) =>
        `| ${db} | ${r.idle.count} / ${r.busy.count} | ${fmt(r.idle.p50, 1)} / ${fmt(r.idle.p99, 1)} / ${fmt(r.idle.max, 1)} | ` +
        `${fmt(r.busy.p50, 1)} / ${fmt(r.busy.p99, 1)} / **${fmt(r.busy.max, 1)}** | ${ratio(r.busy.p99, r.idle.p99)} | ` +
        `${ratio(r.busy.max, r.idle.max)} | ${fmt(r.ingestMs / 1000, 1)} |`
    ),
    "",
    ...[...runs].flatMap(([db, r]) => [
      `${db}: ${r.sources.map((s) => `${s.what} ${s.status} (${s.chunks} chunks, ${s.qa} Q&A)`).join("; ")}.`
    ])
  ]
  return { title: "PGlite: another workspace's wait behind big documents", lines }
}
