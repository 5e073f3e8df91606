/**
 * The corpus of broken files (test/support/brokenFiles.ts) uploaded to the
 * built service run as a process (`node server.mjs`, PGlite or PostgreSQL):
 * each case ends as it says (refused with a readable message, `indexed`, or
 * `failed` with its `error_code` and a readable `error`), the process stays
 * up, `/readyz` answers 200 and another workspace's list of agents within a
 * second throughout, and the agent's next ordinary source is indexed after them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type BrokenCase, brokenFiles, type End, expectEnds } from "../support/brokenFiles.js"
import {
  bootstrapWorkspace,
  call,
  cleanupAll,
  cliJson,
  databaseName,
  eventually,
  expectCall,
  htmlPage,
  type Peer,
  sendHtml,
  type Service,
  setupTimeout,
  sleep,
  startPeer,
  startService,
  type Workspace
} from "./support.js"

let service: Service
let ws: Workspace
let otherKey: string
let site: Peer
let corpus: ReadonlyArray<BrokenCase>

beforeAll(async () => {
  corpus = await brokenFiles()
  site = await startPeer((request, res) => {
    const served = corpus.find((c) => c.kind === "page" && c.path === request.path)
    if (served?.kind === "page") {
      res.writeHead(200, served.headers)
      return res.end(served.body)
    }
    if (request.path === "/ordinary") return sendHtml(res, htmlPage("Returns", [["Refunds", "Refunds are paid within five days."]]))
    sendHtml(res, "gone", 404)
  })
  service = await startService()
  ws = await bootstrapWorkspace(service)
  const other = await cliJson(service, ["workspaces", "create", "--name", "Bystander", "--owner-email", "bystander@dist-e2e.test"])
  otherKey = (await cliJson(service, ["keys", "create", "--workspace", other.id, "--kind", "secret", "--environment", "test"])).secret
}, setupTimeout)

afterAll(async () => {
  await cleanupAll()
})

/** A refusal's end, after checking its message is one a person can read. */
const refusal = (at: "upload" | "create", status: number, body: any): End => {
  expect(body?.error?.message, JSON.stringify(body)).toMatch(/^[^\n]{10,1000}$/)
  return { at, status, code: body?.error?.code }
}

/** The source id for this case, or how the API refused it on the way. */
const submit = async (agentId: string, c: BrokenCase): Promise<string | End> => {
  let body: Record<string, unknown>
  switch (c.kind) {
    case "file": {
      const declared = await expectCall(service, "POST", "/v1/files", 201, {
        key: ws.secret,
        body: { filename: c.filename, content_type: c.contentType, size_bytes: c.bytes.length }
      })
      const fileId = declared.data.id as string
      const put = await fetch(`${service.base}/v1/files/${fileId}/content`, {
        method: "PUT",
        headers: { authorization: `Bearer ${ws.secret}`, "content-type": c.contentType },
        body: new Uint8Array(c.bytes),
        signal: AbortSignal.timeout(30_000)
      })
      const text = await put.text()
      if (put.status !== 200) return refusal("upload", put.status, JSON.parse(text))
      await expectCall(service, "POST", `/v1/files/${fileId}/confirm`, 200, { key: ws.secret })
      body = { type: "file_id", file_id: fileId }
      break
    }
    case "csv":
      body = { type: "csv_qa", content: c.content, title: c.name }
      break
    case "page":
      body = { type: "url", url: `${site.origin}${c.path}`, title: c.name }
  }
  const created = await call(service, "POST", `/v1/agents/${agentId}/knowledge`, { key: ws.secret, body })
  if (created.status !== 201) return refusal("create", created.status, created.body)
  return created.body.data.id as string
}

interface Probe {
  readonly what: "readyz" | "other workspace"
  readonly status: number
  readonly millis: number
}

/** `/readyz` and another workspace's list of agents, timed, every 100 ms until `stop.done`. */
const watch = async (probes: Array<Probe>, stop: { done: boolean }) => {
  const timed = async (what: Probe["what"], path: string, key?: string) => {
    const started = performance.now()
    const reply = await call(service, "GET", path, key === undefined ? {} : { key }).catch(() => ({ status: 0 }))
    probes.push({ what, status: reply.status, millis: performance.now() - started })
  }
  while (!stop.done) {
    await timed("readyz", "/readyz")
    await timed("other workspace", "/v1/agents", otherKey)
    await sleep(100)
  }
}

describe(`broken files through the bundle (${databaseName})`, () => {
  it("each ends as its case says, the service answers throughout, the next source is indexed after them", async () => {
    const agentId = (await expectCall(service, "POST", "/v1/agents", 201, { key: ws.secret, body: { type: "support", name: "Broken files" } })).data.id as string
    const probes: Array<Probe> = []
    const stop = { done: false }
    const watching = watch(probes, stop)
    try {
      const submitted: Array<string | End> = []
      for (const c of corpus) submitted.push(await submit(agentId, c))
      const next = (await expectCall(service, "POST", `/v1/agents/${agentId}/knowledge`, 201, {
        key: ws.secret,
        body: { type: "url", url: `${site.origin}/ordinary` }
      })).data.id as string
      const ids = [...submitted.filter((s): s is string => typeof s === "string"), next]
      const listed = await eventually(
        async () => (await expectCall(service, "GET", `/v1/agents/${agentId}/knowledge?limit=100`, 200, { key: ws.secret })).data as Array<any>,
        (sources) => ids.every((id) => sources.some((s) => s.id === id && (s.status === "indexed" || s.status === "failed"))),
        { label: "the corpus and the next source settled", tries: 1200, intervalMs: 200, timeoutMs: 240_000 }
      )
      const byId = new Map(listed.map((s) => [s.id as string, s]))
      expectEnds(corpus, submitted, byId)
      expect(byId.get(next), JSON.stringify(byId.get(next))).toMatchObject({ status: "indexed", error: null })
      // settled after every corpus source (the service's clock is real here)
      const last = Math.max(...ids.slice(0, -1).map((id) => Date.parse(byId.get(id).updated_at)))
      expect(Date.parse(byId.get(next).updated_at)).toBeGreaterThanOrEqual(last)
    } finally {
      stop.done = true
      await watching
    }
    // the process stayed up: no exit code, no signal
    expect([service.child.process.exitCode, service.child.process.signalCode], service.output().slice(-2000)).toEqual([null, null])
    expect(probes.filter((p) => p.what === "readyz").length).toBeGreaterThan(0)
    expect(probes.filter((p) => p.status !== 200)).toEqual([])
    const slowest = Math.max(...probes.filter((p) => p.what === "other workspace").map((p) => p.millis))
    expect(slowest, "another workspace's list of agents answered within a second").toBeLessThan(1000)
  }, 300_000)
})
