/**
 * Freshness of `url` sources against a local site, time driven by the TestClock: a refresh asks with the page's
 * validators and re-indexes nothing on a `304` or on the same text; a changed page's passages and generated Q&A are
 * replaced (a hand-edited Q&A kept) with `knowledge.source.updated`; a page answering 404 is gone, and its
 * knowledge is removed once the agent's grace has passed; an agent's daily schedule refreshes its pages; a round of
 * every page asked for now, its pages checked together; a search during a re-index sees one page whole; the walk of a round through an agent's sources, a batch at
 * a time; the refusals (another type, an unknown source or agent, the month's refreshes used up); a refresh job whose
 * every attempt killed its process, given up with its pages' knowledge kept.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import type { IncomingMessage, ServerResponse } from "node:http"
import { AgentId, SourceId } from "../../schema/Ids.js"
import { visibleChunk } from "../../src/knowledge/ChunkDraftsRepo.js"
import { readSourceText } from "../../src/knowledge/SourceTexts.js"
import { RefreshRepo } from "../../src/knowledge/RefreshRepo.js"
import { eventually } from "../support/eventually.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { JobQueue } from "../../layers/JobQueue.js"
import { INGEST_QUEUE } from "../../src/knowledge/Knowledge.js"
import { JOB_MAX_ATTEMPTS } from "../../src/knowledge/Pipeline.js"
import { createAgent, eventsOfType, page, serveSite, source, waitSettled } from "./support.js"

const DAY = 24 * 60 * 60 * 1000

/** A page whose text, `ETag` and status the test changes; it answers `304` when asked with its current `ETag`. */
const changingPage = () => {
  const state = { version: 1, status: 200, honoursEtag: true, conditional: [] as Array<string | undefined> }
  const body = () =>
    state.version === 1
      ? page("Opening hours", [["Hours", "The shop opens from nine to five on weekdays."]])
      : page("Opening hours", [["Hours", "The shop now opens from eight to eight, every day of the week."]])
  const route = (req: IncomingMessage, res: ServerResponse) => {
    state.conditional.push(req.headers["if-none-match"])
    const etag = `"v${state.version}"`
    if (state.status !== 200) {
      res.writeHead(state.status, { "content-type": "text/plain" }).end("gone")
      return
    }
    if (state.honoursEtag && req.headers["if-none-match"] === etag) {
      res.writeHead(304, { etag }).end()
      return
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", etag }).end(body())
  }
  return { state, route }
}

const setup = Effect.gen(function* () {
  const site = changingPage()
  const served = yield* serveSite(site.route)
  const h = yield* Harness
  const ws = yield* h.seed()
  const agentId = yield* createAgent(h, ws.secretTest)
  const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
    key: ws.secretTest,
    body: { type: "url", url: `${served.origin}/hours` }
  })
  expect(created.status, created.text).toBe(201)
  const id = created.body.data.id as string
  const [indexed] = yield* waitSettled(h, ws.secretTest, agentId, [id])
  expect(indexed).toMatchObject({ status: "indexed", refresh: { status: "idle", checked_at: null, changed_at: null, gone_since: null } })
  return { site, h, ws, agentId, id }
})

const refresh = (h: HarnessShape, key: string, agentId: string, id: string) =>
  h.call("POST", `/v1/agents/${agentId}/knowledge/${id}/refresh`, { key })

/** The source once its refresh ended (read the page, or removed it: then the read answers 404). */
const refreshed = (h: HarnessShape, key: string, agentId: string, id: string, after: string | null = null) =>
  eventually(
    h.call("GET", `/v1/agents/${agentId}/knowledge/${id}`, { key }),
    (r) => r.status === 404 || (r.body.data.refresh.status === "idle" && r.body.data.refresh.checked_at !== after),
    { label: "the refresh ended" }
  )

/** The source's chunks a reader sees (a replaced page's old ones are hidden at once, deleted a moment after). */
const chunkIds = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string; content: string }>`
      select id, content from knowledge_chunks where source_id = ${id} and ${sql.literal(visibleChunk)} order by position`
  ).pipe(Effect.orDie)

/** Every row the source holds, hidden ones too: chunks and distinct drafts of its text pieces. */
const storedRows = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ chunks: number; drafts: number }>`
      select (select count(*)::int from knowledge_chunks where source_id = ${id}) as chunks,
             (select count(distinct draft)::int from knowledge_source_texts where source_id = ${id}) as drafts`
  ).pipe(Effect.map((rows) => rows[0]), Effect.orDie)

layer(testServer())("refreshing url sources", (it) => {
  it.scoped("a 304 re-indexes nothing: the validators are sent, the passages stay, no event", () =>
    Effect.gen(function* () {
      const { agentId, h, id, site, ws } = yield* setup
      const before = yield* chunkIds(id)
      const asked = yield* refresh(h, ws.secretTest, agentId, id)
      expect(asked.status, asked.text).toBe(202)
      expect(asked.body.data.refresh.status).toBe("queued")
      const after = yield* refreshed(h, ws.secretTest, agentId, id)
      expect(after.body.data).toMatchObject({ status: "indexed", refresh: { status: "idle", changed_at: null, gone_since: null } })
      expect(after.body.data.refresh.checked_at).not.toBeNull()
      expect(site.state.conditional.at(-1)).toBe('"v1"')
      expect(yield* chunkIds(id)).toEqual(before)
      expect(yield* eventsOfType(ws.workspace.id, "knowledge.source.updated")).toEqual([])
    })
  )

  it.scoped("the same text answered in full re-indexes nothing either", () =>
    Effect.gen(function* () {
      const { agentId, h, id, site, ws } = yield* setup
      site.state.honoursEtag = false
      const before = yield* chunkIds(id)
      expect((yield* refresh(h, ws.secretTest, agentId, id)).status).toBe(202)
      const after = yield* refreshed(h, ws.secretTest, agentId, id)
      expect(after.body.data.refresh.changed_at).toBeNull()
      expect(yield* chunkIds(id)).toEqual(before)
      expect(yield* eventsOfType(ws.workspace.id, "knowledge.source.updated")).toEqual([])
    })
  )

  it.scoped("a changed page: passages and generated Q&A replaced at once, a hand-edited Q&A kept, knowledge.source.updated", () =>
    Effect.gen(function* () {
      const { agentId, h, id, site, ws } = yield* setup
      const qa = yield* h.call("GET", `/v1/agents/${agentId}/qa?limit=100`, { key: ws.secretTest })
      const generated = qa.body.data.filter((q: any) => q.source_id === id)
      expect(generated.length).toBeGreaterThanOrEqual(1)
      const edited = yield* h.call("PATCH", `/v1/agents/${agentId}/qa/${generated[0].id}`, {
        key: ws.secretTest,
        body: { answer: "Ask at the desk for the hours." }
      })
      expect(edited.status, edited.text).toBe(200)

      site.state.version = 2
      expect((yield* refresh(h, ws.secretTest, agentId, id)).status).toBe(202)
      const after = yield* refreshed(h, ws.secretTest, agentId, id)
      expect(after.body.data.refresh.changed_at).not.toBeNull()
      const chunks = yield* chunkIds(id)
      expect(chunks.map((c) => c.content).join(" ")).toContain("eight to eight")
      expect(chunks.map((c) => c.content).join(" ")).not.toContain("nine to five")
      expect(after.body.data.chunk_count).toBe(chunks.length)
      // the text indexed is the new one, and only its pieces are left
      const sql = yield* SqlClient.SqlClient
      const text = yield* readSourceText(sql, SourceId.make(id))
      expect(Option.getOrThrow(text)).toContain("eight to eight")
      expect(Option.getOrThrow(text)).not.toContain("nine to five")
      // the old page's rows, hidden at the swap, are deleted after it
      yield* eventually(storedRows(id), (rows) => rows.chunks === chunks.length && rows.drafts === 1, {
        label: "the old page's rows deleted"
      })

      const qaAfter = (yield* h.call("GET", `/v1/agents/${agentId}/qa?limit=100`, { key: ws.secretTest })).body.data
      const mine = qaAfter.filter((q: any) => q.source_id === id)
      expect(mine.find((q: any) => q.id === generated[0].id)).toMatchObject({ origin: "manual", answer: "Ask at the desk for the hours." })
      const fresh = mine.filter((q: any) => q.origin === "generated")
      expect(fresh.length).toBeGreaterThanOrEqual(1)
      expect(fresh.map((q: any) => q.answer).join(" ")).toContain("eight to eight")
      for (const old of generated.slice(1)) expect(mine.map((q: any) => q.id)).not.toContain(old.id)

      const found = yield* h.call("POST", `/v1/agents/${agentId}/knowledge/search`, {
        key: ws.secretTest,
        body: { query: "When does the shop open?" }
      })
      expect(JSON.stringify(found.body.data)).toContain("eight to eight")
      const updated = yield* eventsOfType(ws.workspace.id, "knowledge.source.updated")
      expect(updated.map((e) => e.data.source.id)).toEqual([id])
      expect(updated[0].data.source.refresh.changed_at).not.toBeNull()
    })
  )

  it.scoped("a page answering 404: gone, its knowledge kept through the agent's grace, then removed", () =>
    Effect.gen(function* () {
      const { agentId, h, id, site, ws } = yield* setup
      const grace = yield* h.call("PATCH", `/v1/agents/${agentId}`, {
        key: ws.secretTest,
        body: { knowledge_refresh: { gone_grace_days: 2 } }
      })
      expect(grace.body.data.knowledge_refresh).toEqual({ schedule: "off", gone_grace_days: 2 })
      site.state.status = 404
      expect((yield* refresh(h, ws.secretTest, agentId, id)).status).toBe(202)
      const gone = yield* refreshed(h, ws.secretTest, agentId, id)
      expect(gone.body.data.refresh.gone_since).not.toBeNull()
      expect(gone.body.data.chunk_count).toBeGreaterThan(0)
      expect((yield* chunkIds(id)).length).toBeGreaterThan(0)
      expect((yield* eventsOfType(ws.workspace.id, "knowledge.source.gone")).map((e) => e.data.source.id)).toEqual([id])

      // a day on, still within the grace: nothing removed
      yield* TestClock.adjust(DAY)
      expect((yield* source(h, ws.secretTest, agentId, id)).status).toBe("indexed")
      // past the grace: the timer's refresh finds the page still gone and removes what was learnt from it
      yield* TestClock.adjust(DAY + 1000)
      const removed = yield* eventually(
        Effect.zipRight(TestClock.adjust(1000), h.call("GET", `/v1/agents/${agentId}/knowledge/${id}`, { key: ws.secretTest })),
        (r) => r.status === 404,
        { label: "the gone page removed" }
      )
      expect(removed.status).toBe(404)
      expect(yield* chunkIds(id)).toEqual([])
      expect((yield* eventsOfType(ws.workspace.id, "knowledge.source.removed")).map((e) => e.data.source.id)).toEqual([id])
    })
  )

  it.scoped("an agent's daily schedule refreshes its pages a day after it is set", () =>
    Effect.gen(function* () {
      const { agentId, h, id, site, ws } = yield* setup
      const set = yield* h.call("PATCH", `/v1/agents/${agentId}`, {
        key: ws.secretTest,
        body: { knowledge_refresh: { schedule: "daily" } }
      })
      expect(set.body.data.knowledge_refresh).toEqual({ schedule: "daily", gone_grace_days: 7 })
      site.state.version = 2
      yield* TestClock.adjust(DAY - 60_000)
      expect((yield* source(h, ws.secretTest, agentId, id)).refresh.checked_at).toBeNull()
      const after = yield* eventually(
        Effect.zipRight(TestClock.adjust(60_000), source(h, ws.secretTest, agentId, id)),
        (s) => s.refresh.checked_at !== null && s.refresh.status === "idle",
        { label: "the scheduled refresh ran" }
      )
      expect(after.refresh.changed_at).not.toBeNull()
      expect((yield* chunkIds(id)).map((c) => c.content).join(" ")).toContain("eight to eight")
    })
  )

  it.scoped("refusals: a text source (409), an unknown source (404), the month's refreshes used up (402)", () =>
    Effect.gen(function* () {
      const { agentId, h, id, ws } = yield* setup
      const text = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "text", title: "Returns", content: "Returns are accepted within thirty days." }
      })
      yield* waitSettled(h, ws.secretTest, agentId, [text.body.data.id])
      const notUrl = yield* refresh(h, ws.secretTest, agentId, text.body.data.id)
      expect([notUrl.status, notUrl.body.error.code, notUrl.body.error.param]).toEqual([409, "source_not_refreshable", "source_id"])
      const unknown = yield* refresh(h, ws.secretTest, agentId, "src_unknownunknownunknown")
      expect([unknown.status, unknown.body.error.code]).toEqual([404, "resource_missing"])

      const sql = yield* SqlClient.SqlClient
      const month = new Date(yield* TestClock.currentTimeMillis).toISOString().slice(0, 7)
      yield* Effect.orDie(sql`
        insert into refresh_usage (workspace_id, environment, month, refreshes) values (${ws.workspace.id}, 'test', ${month}, 1000)`)
      const capped = yield* refresh(h, ws.secretTest, agentId, id)
      expect([capped.status, capped.body.error.code]).toEqual([402, "limit_reached"])
      expect((yield* source(h, ws.secretTest, agentId, id)).refresh.status).toBe("idle")
    })
  )

  it.scoped("a round of every page now: each page asked for once, unchanged, changed and gone pages each settled", () =>
    Effect.gen(function* () {
      const pages = { same: changingPage(), moved: changingPage(), lost: changingPage() }
      const served = yield* serveSite((req, res) => pages[(req.url ?? "").slice(1) as keyof typeof pages].route(req, res))
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const ids: Record<string, string> = {}
      for (const name of Object.keys(pages)) {
        const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
          key: ws.secretTest,
          body: { type: "url", url: `${served.origin}/${name}` }
        })
        ids[name] = created.body.data.id
      }
      const text = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "text", title: "Returns", content: "Returns are accepted within thirty days." }
      })
      yield* waitSettled(h, ws.secretTest, agentId, [...Object.values(ids), text.body.data.id])
      for (const p of Object.values(pages)) p.state.conditional.length = 0
      pages.moved.state.version = 2
      pages.lost.state.status = 404

      const round = yield* h.call("POST", `/v1/agents/${agentId}/knowledge/refresh`, { key: ws.secretTest })
      expect(round.status, round.text).toBe(202)
      expect(round.body.data).toEqual({
        object: "knowledge_refresh_round",
        agent_id: agentId,
        started_at: new Date(yield* TestClock.currentTimeMillis).toISOString()
      })
      // every page waits for the round's job; asked again meanwhile, none is queued twice
      expect((yield* source(h, ws.secretTest, agentId, ids.same!)).refresh.status).toBe("queued")
      expect((yield* h.call("POST", `/v1/agents/${agentId}/knowledge/refresh`, { key: ws.secretTest })).status).toBe(202)

      const same = yield* refreshed(h, ws.secretTest, agentId, ids.same!)
      const moved = yield* refreshed(h, ws.secretTest, agentId, ids.moved!)
      const lost = yield* refreshed(h, ws.secretTest, agentId, ids.lost!)
      expect(same.body.data.refresh).toMatchObject({ status: "idle", changed_at: null, gone_since: null })
      expect(moved.body.data.refresh.changed_at).not.toBeNull()
      expect(lost.body.data.refresh.gone_since).not.toBeNull()
      expect((yield* source(h, ws.secretTest, agentId, text.body.data.id)).refresh).toBeNull()
      expect(pages.same.state.conditional).toEqual(['"v1"'])
      expect(pages.moved.state.conditional).toEqual(['"v1"'])
      expect((yield* eventsOfType(ws.workspace.id, "knowledge.source.updated")).map((e) => e.data.source.id)).toEqual([ids.moved])
      expect((yield* eventsOfType(ws.workspace.id, "knowledge.source.gone")).map((e) => e.data.source.id)).toEqual([ids.lost])

      const unknown = yield* h.call("POST", "/v1/agents/agt_unknownunknownunknown/knowledge/refresh", { key: ws.secretTest })
      expect([unknown.status, unknown.body.error.code]).toEqual([404, "resource_missing"])
      const sql = yield* SqlClient.SqlClient
      const month = new Date(yield* TestClock.currentTimeMillis).toISOString().slice(0, 7)
      yield* Effect.orDie(sql`
        update refresh_usage set refreshes = 1000 where workspace_id = ${ws.workspace.id} and month = ${month}`)
      const capped = yield* h.call("POST", `/v1/agents/${agentId}/knowledge/refresh`, { key: ws.secretTest })
      expect([capped.status, capped.body.error.code]).toEqual([402, "limit_reached"])
    })
  )

  it.scoped("a round walks the agent's sources a batch at a time, each batch reading only the sources after the last", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = AgentId.make(yield* createAgent(h, ws.secretTest))
      const sql = yield* SqlClient.SqlClient
      // 1,100 sources: every tenth a text source, every seventh url source still pending; the rest indexed pages
      yield* Effect.orDie(sql`
        insert into knowledge_sources (id, workspace_id, environment, agent_id, type, title, status, phase, source_ref,
          created_at, updated_at)
        select 'src_walk' || lpad(n::text, 5, '0'), ${ws.workspace.id}, 'test', ${agentId},
          case when n % 10 = 0 then 'text' else 'url' end, 'Page ' || n,
          case when n % 7 = 0 then 'pending' else 'indexed' end, 'done', 'https://example.com/' || n, now(), now()
        from generate_series(1, 1100) as n`)
      const refreshable = Array.from({ length: 1100 }, (_, i) => i + 1).filter((n) => n % 10 !== 0 && n % 7 !== 0).length
      const repo = yield* Effect.provide(RefreshRepo, RefreshRepo.Default)
      let after = "0"
      const batches: Array<{ read: number; queued: number }> = []
      for (let i = 0; i < 4; i++) {
        const batch = yield* repo.queueRound(agentId, after, 500)
        batches.push({ read: batch.read, queued: batch.queued.length })
        after = batch.reached
        if (batch.read < 500) break
      }
      expect(batches.map((b) => b.read)).toEqual([500, 500, 100])
      expect(batches.reduce((n, b) => n + b.queued, 0)).toBe(refreshable)
      // all queued now: a walk from the start queues none again
      expect((yield* repo.queueRound(agentId, "0", 500)).queued).toEqual([])
      const [first] = yield* repo.byIds([SourceId.make("src_walk00001")])
      expect(first?.refresh_status).toBe("queued")
    })
  )

  it.scoped("a search while a changed page is re-indexed finds the old page or the new one, never a mix", () =>
    Effect.gen(function* () {
      const state = { edition: "first" }
      // four sections of about 1,300 characters: the page is several passages, each naming its edition
      const body = () =>
        page(
          "Warranty terms",
          ["Coverage", "Claims", "Repairs", "Refunds"].map((topic) => [
            topic,
            Array.from({ length: 12 }, () => `The ${state.edition} edition of our warranty explains ${topic.toLowerCase()} in detail.`).join(" ")
          ] as const)
        )
      const served = yield* serveSite((_req, res) => void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body()))
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "url", url: `${served.origin}/warranty` }
      })
      const id = created.body.data.id as string
      const [indexed] = yield* waitSettled(h, ws.secretTest, agentId, [id])
      expect(indexed.chunk_count).toBeGreaterThanOrEqual(3)

      state.edition = "second"
      const search = Effect.map(
        h.call("POST", `/v1/agents/${agentId}/knowledge/search`, {
          key: ws.secretTest,
          body: { query: "warranty edition coverage claims repairs refunds", limit: 20 }
        }),
        (r) => (r.body.data.hits as Array<any>).filter((hit) => hit.kind === "chunk").map((hit) => hit.text as string)
      )
      expect((yield* refresh(h, ws.secretTest, agentId, id)).status).toBe(202)
      const seen: Array<ReadonlyArray<string>> = []
      yield* eventually(
        Effect.zipRight(
          Effect.flatMap(search, (texts) => Effect.sync(() => seen.push(texts))),
          h.call("GET", `/v1/agents/${agentId}/knowledge/${id}`, { key: ws.secretTest })
        ),
        (r) => r.body.data.refresh.changed_at !== null,
        { label: "the changed page re-indexed" }
      )
      seen.push(yield* search)
      for (const texts of seen) {
        const editions = new Set(texts.flatMap((t) => (t.includes("first edition") ? ["first"] : t.includes("second edition") ? ["second"] : [])))
        expect(editions.size, JSON.stringify(texts)).toBe(1)
      }
      expect(seen.at(-1)!.some((t) => t.includes("second edition"))).toBe(true)
    })
  )

  it.scoped("a round's refresh job whose every attempt killed its process is given up: its pages idle with their knowledge", () =>
    Effect.gen(function* () {
      const { agentId, h, id, ws } = yield* setup
      const before = yield* chunkIds(id)
      const sql = yield* SqlClient.SqlClient
      const at = new Date(yield* TestClock.currentTimeMillis)
      // what such a job leaves: its page queued, the job pending with every attempt counted (at its claim)
      yield* Effect.orDie(sql`update knowledge_sources set refresh_status = 'queued' where id = ${id}`)
      yield* Effect.orDie(sql`
        insert into jobs (queue, key, payload, status, attempts, run_at, created_at)
        values (${INGEST_QUEUE}, ${agentId}, ${JSON.stringify({ sourceIds: [id], refresh: true })}, 'pending',
          ${JOB_MAX_ATTEMPTS}, ${at}, ${at})`)
      // as another instance's enqueue would, the local worker is rung
      const queue = yield* JobQueue
      yield* queue.wake(INGEST_QUEUE)
      yield* queue.awaitIdle(INGEST_QUEUE)
      const after = yield* source(h, ws.secretTest, agentId, id)
      expect(after).toMatchObject({ status: "indexed", refresh: { status: "idle", changed_at: null } })
      expect(yield* chunkIds(id)).toEqual(before)
      const [job] = yield* Effect.orDie(sql<{ status: string; last_error: string | null }>`
        select status, last_error from jobs where queue = ${INGEST_QUEUE} and payload like ${`%"sourceIds"%${id}%`}`)
      expect(job?.status).toBe("failed")
      expect(job?.last_error).toMatch(/^its last attempt stopped its worker/)
      // and it can be refreshed again
      const again = yield* refresh(h, ws.secretTest, agentId, id)
      expect([again.status, again.body.data.refresh.status]).toEqual([202, "queued"])
    })
  )
})
