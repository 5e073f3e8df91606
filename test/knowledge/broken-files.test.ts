/**
 * The corpus of broken files (test/support/brokenFiles.ts) through the real
 * server, with the real image decoders (sharp, tesseract.js, in the decoder processes): every file is
 * declared, uploaded and confirmed, and named by a `file_id` source of one
 * agent (CSVs as `csv_qa`, the gzip bomb as a `url` page). Each ends as its
 * case says: refused by the API with a readable message, or `indexed`, or
 * `failed` with its `error_code` and a readable `error`. Meanwhile `/readyz`
 * answers 200 and another workspace's list of agents within a second, and the
 * agent's next ordinary sources are indexed after the corpus. A CSV of CRLF
 * then LF lines (once merged into one row) is imported as written.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import * as Ocr from "../../layers/Ocr.js"
import { type BrokenCase, brokenFiles, csvCrlfThenLf, type End, expectEnds, pdfDeflateBombCase } from "../support/brokenFiles.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { eventually } from "../support/eventually.js"
import { createAgent, html, page, serveSite, source, waitSettled } from "./support.js"

const put = (h: HarnessShape, key: string, fileId: string, bytes: Uint8Array, contentType: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${h.url}/v1/files/${fileId}/content`, {
      method: "PUT",
      headers: { authorization: `Bearer ${key}`, "content-type": contentType },
      body: new Uint8Array(bytes)
    })
    const text = await response.text()
    return { status: response.status, body: text === "" ? null : (JSON.parse(text) as any) }
  })

/** A refusal's end, after checking its message is one a person can read. */
const refusal = (at: "upload" | "create", status: number, body: any): End => {
  expect(body?.error?.message, JSON.stringify(body)).toMatch(/^[^\n]{10,1000}$/)
  return { at, status, code: body?.error?.code }
}

/** The source's body for this case, or how the API refused it on the way. */
const submit = (h: HarnessShape, key: string, agentId: string, origin: string, c: BrokenCase) =>
  Effect.gen(function* () {
    let body: Record<string, unknown>
    switch (c.kind) {
      case "file": {
        const declared = yield* h.call("POST", "/v1/files", {
          key,
          body: { filename: c.filename, content_type: c.contentType, size_bytes: c.bytes.length }
        })
        expect(declared.status, JSON.stringify(declared.body)).toBe(201)
        const fileId = declared.body.data.id as string
        const uploaded = yield* put(h, key, fileId, c.bytes, c.contentType)
        if (uploaded.status !== 200) return refusal("upload", uploaded.status, uploaded.body)
        const confirmed = yield* h.call("POST", `/v1/files/${fileId}/confirm`, { key })
        expect(confirmed.status).toBe(200)
        body = { type: "file_id", file_id: fileId }
        break
      }
      case "csv":
        body = { type: "csv_qa", content: c.content, title: c.name }
        break
      case "page":
        body = { type: "url", url: `${origin}${c.path}`, title: c.name }
    }
    const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, { key, body })
    if (created.status !== 201) return refusal("create", created.status, created.body)
    return created.body.data.id as string
  })

interface Probe {
  readonly what: "readyz" | "other workspace"
  readonly status: number
  readonly millis: number
}

/**
 * Until `stop` is set: `/readyz`, then another workspace's list of agents, every 50 ms of real time (the
 * service runs on the TestClock; these wait for nothing of it), each timed.
 */
const watch = (h: HarnessShape, otherKey: string, probes: Array<Probe>, stop: { done: boolean }) =>
  Effect.gen(function* () {
    const timed = (what: Probe["what"], path: string, key?: string) =>
      Effect.gen(function* () {
        const started = performance.now()
        const reply = yield* h.call("GET", path, key === undefined ? {} : { key })
        probes.push({ what, status: reply.status, millis: performance.now() - started })
      })
    while (!stop.done) {
      yield* timed("readyz", "/readyz")
      yield* timed("other workspace", "/v1/agents", otherKey)
      yield* TestServices.provideLive(Effect.sleep("50 millis"))
    }
  })

const ordinaryPage = page("Returns", [["Refunds", "Refunds are paid within five days of the parcel arriving."]])

layer(testServer({}, { ocr: Ocr.layerDecoders }), { timeout: 600_000 })("broken files", (it) => {
  it.effect("each ends as its case says, /readyz and another workspace answer throughout, the next source is indexed after them", () =>
    Effect.gen(function* () {
      // the deflate bomb has its own test below: the decoders' memory watch runs on the Clock
      const corpus = (yield* Effect.promise(() => brokenFiles())).filter((c) => c.name !== pdfDeflateBombCase)
      const site = yield* serveSite((req, res) => {
        const served = corpus.find((c) => c.kind === "page" && c.path === req.url)
        if (served?.kind === "page") {
          res.writeHead(200, served.headers)
          res.end(served.body)
        } else if (req.url === "/ordinary") html(res, ordinaryPage)
        else html(res, "gone", 404)
      })
      const h = yield* Harness
      const ws = yield* h.seed()
      const other = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest, "Broken files")
      yield* createAgent(h, other.secretTest, "Bystander")

      const probes: Array<Probe> = []
      const stop = { done: false }
      const watcher = yield* Effect.fork(watch(h, other.secretTest, probes, stop))

      const submitted = yield* Effect.forEach(corpus, (c) => submit(h, ws.secretTest, agentId, site.origin, c))
      const sourceIds = submitted.filter((s): s is string => typeof s === "string")
      // added after the corpus: the agent's sources run one at a time in creation order, so these run last
      const next = yield* Effect.forEach(
        [
          { type: "text", title: "Opening hours", content: "# Opening hours\n\nThe shop opens at nine on weekdays." },
          { type: "url", url: `${site.origin}/ordinary` }
        ],
        (body) => Effect.map(h.call("POST", `/v1/agents/${agentId}/knowledge`, { key: ws.secretTest, body }), (r) => r.body.data.id as string)
      )
      const everyId = [...sourceIds, ...next]
      // one list call per poll (the agent has fewer than 100 sources), not one call per source
      const listed = yield* eventually(
        Effect.map(h.call("GET", `/v1/agents/${agentId}/knowledge?limit=100`, { key: ws.secretTest }), (r) => r.body.data as Array<any>),
        (sources) => everyId.every((id) => sources.some((s) => s.id === id && (s.status === "indexed" || s.status === "failed"))),
        { tries: 30_000, label: "the corpus and the next sources settled" }
      )
      const settled = listed.filter((s) => everyId.includes(s.id))
      stop.done = true
      yield* Fiber.join(watcher)

      const byId = new Map(settled.map((s: any) => [s.id as string, s]))
      expectEnds(corpus, submitted, byId)
      for (const id of next) expect(byId.get(id), JSON.stringify(byId.get(id))).toMatchObject({ status: "indexed", error: null })
      // the sources' end events in the order they were written: the next sources' come after every corpus source's
      const ends = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ body: string }>`select body from events where workspace_id = ${ws.workspace.id}
          and type in ('knowledge.source.indexed', 'knowledge.source.failed') order by seq`
      ).pipe(Effect.orDie)
      const order = ends.map((e) => JSON.parse(e.body).data.source.id as string)
      expect(new Set(order)).toEqual(new Set(everyId))
      expect(order.slice(-next.length)).toEqual(next)

      expect(probes.filter((p) => p.what === "readyz").length).toBeGreaterThan(0)
      expect(probes.filter((p) => p.status !== 200)).toEqual([])
      const slowest = Math.max(...probes.filter((p) => p.what === "other workspace").map((p) => p.millis))
      expect(slowest, "another workspace's list of agents answered within a second").toBeLessThan(1000)
    }).pipe(Effect.scoped),
    600_000
  )

  // once a bug (see `csvCrlfThenLf`): the rows ran into each other
  it.effect("a CSV of CRLF then LF lines is imported as the rows written", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest, "Line endings")
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "csv_qa", content: csvCrlfThenLf, title: "FAQ" }
      })
      expect(created.status).toBe(201)
      const [done] = yield* waitSettled(h, ws.secretTest, agentId, [created.body.data.id])
      const qa = yield* h.call("GET", `/v1/agents/${agentId}/qa?limit=100`, { key: ws.secretTest })
      expect(done.status).toBe("indexed")
      expect(qa.body.data.map((q: any) => [q.question, q.answer]).sort()).toEqual([
        ["Do you ship abroad?", "Yes"],
        ["Is there a shop?", "In Valencia"]
      ])
    })
  )

  it.effect("the PDF deflate bomb fails too_large while the Clock moves for the decoders' memory watch", () =>
    Effect.gen(function* () {
      const bomb = (yield* Effect.promise(() => brokenFiles())).find((c) => c.name === pdfDeflateBombCase)
      if (bomb?.kind !== "file") return yield* Effect.die("no deflate bomb in the corpus")
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest, "Deflate bomb")
      const id = yield* submit(h, ws.secretTest, agentId, "", bomb)
      if (typeof id !== "string") return yield* Effect.die(`refused: ${JSON.stringify(id)}`)
      // 20 ms of the Clock per poll: the watch (every 200 ms) gets its turns, and the 30 s time limit is
      // 1,500 polls away, far beyond the second or so the inflating takes
      const done = yield* eventually(
        Effect.zipRight(TestClock.adjust("20 millis"), source(h, ws.secretTest, agentId, id)),
        (s) => s.status === "indexed" || s.status === "failed",
        { tries: 1500, label: "the deflate bomb settled" }
      )
      expect(done, JSON.stringify(done)).toMatchObject({ status: bomb.ends.status, error_code: bomb.ends.code })
      expect(done.error).toMatch(/^[^\n]{10,300}$/)
    })
  )
})
