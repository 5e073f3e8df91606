/**
 * Knowledge sources through the real server: each type, the polling read and
 * the list with its `status` filter, deletion (chunks and Q&A go with the
 * source), CSV parsing and the batch endpoint's contract. Keys and
 * isolation: test/http/security-matrix.test.ts.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { SourceId } from "../../schema/Ids.js"
import { JobQueue } from "../../layers/JobQueue.js"
import { INGEST_QUEUE } from "../../src/knowledge/Knowledge.js"
import { KnowledgeRepo } from "../../src/knowledge/KnowledgeRepo.js"
import { Harness, testServer } from "../support/harness.js"
import { createAgent, eventsOfType, html, page, serveSite, tinyPng, waitSettled } from "./support.js"

const faq = `# Shipping and returns

## Shipping
We ship every order within two business days. Delivery takes five days in Europe.

## Returns
You can return any item within 30 days of delivery for a full refund.

## Payments
We accept credit cards and bank transfers. Invoices are sent by e-mail.`

const count = (table: "knowledge_chunks" | "qa_items", sourceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: string }>`select count(*)::text as n from ${sql(table)} where source_id = ${sourceId}`
  ).pipe(Effect.map((rows) => Number(rows[0]!.n)), Effect.orDie)

/** A new workspace's agent, and the FAQ added to it as a text source (the creation's answer). */
const faqSource = Effect.gen(function* () {
  const h = yield* Harness
  const ws = yield* h.seed()
  const agentId = yield* createAgent(h, ws.secretTest)
  const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
    key: ws.secretTest,
    body: { type: "text", title: "Shop FAQ", content: faq }
  })
  return { h, ws, agentId, created }
})

layer(testServer())("knowledge sources", (it) => {
  it.effect("a text source moves to indexed with chunks, categories and Q&A, then the event", () =>
    Effect.gen(function* () {
      const { h, ws, agentId, created } = yield* faqSource
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      expect(created.body.data).toMatchObject({
        object: "knowledge_source",
        agent_id: agentId,
        type: "text",
        title: "Shop FAQ",
        source_ref: "inline",
        size_bytes: Buffer.byteLength(faq),
        error: null,
        error_code: null,
        next_attempt_at: null
      })
      expect(["pending", "processing", "indexed"]).toContain(created.body.data.status)
      const [done] = yield* waitSettled(h, ws.secretTest, agentId, [created.body.data.id])
      expect(done).toMatchObject({ status: "indexed", phase: "done", progress: 100, attempts: 1 })
      expect(done.chunk_count).toBeGreaterThan(0)
      expect(done.qa_count).toBeGreaterThan(0)
      expect(yield* count("knowledge_chunks", done.id)).toBe(done.chunk_count)
      expect(yield* count("qa_items", done.id)).toBe(done.qa_count)

      const categories = yield* h.call("GET", `/v1/agents/${agentId}/categories`, { key: ws.secretTest })
      expect(categories.body.data.length).toBeGreaterThanOrEqual(1)

      const events = yield* eventsOfType(ws.workspace.id, "knowledge.source.indexed")
      expect(events).toHaveLength(1)
      expect(events[0].data.source).toMatchObject({ id: done.id, status: "indexed" })
    })
  )

  it.effect("a settled source leaves no job behind: the worker's next claim settles it", () =>
    Effect.gen(function* () {
      const { h, ws, agentId, created } = yield* faqSource
      const [done] = yield* waitSettled(h, ws.secretTest, agentId, [created.body.data.id])
      expect(done.status).toBe("indexed")
      // a job's settle rides in the claim after it; idle means that claim has run
      yield* Effect.flatMap(JobQueue, (queue) => queue.awaitIdle(INGEST_QUEUE))
      const sql = yield* SqlClient.SqlClient
      const left = yield* Effect.orDie(
        sql`select id from jobs where queue = ${INGEST_QUEUE} and strpos(payload::text, ${done.id}) > 0`
      )
      expect(left).toHaveLength(0)
    })
  )

  it.effect("list newest first with a status filter; the polling read; delete takes chunks and Q&A along", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const ids: Array<string> = []
      for (const title of ["one", "two", "three"]) {
        const r = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
          key: ws.secretTest,
          body: { type: "text", title, content: `${faq}\n\nAbout ${title}.` }
        })
        ids.push(r.body.data.id)
      }
      yield* waitSettled(h, ws.secretTest, agentId, ids)
      const list = yield* h.call("GET", `/v1/agents/${agentId}/knowledge?limit=2`, { key: ws.secretTest })
      expect(list.body.data.map((s: any) => s.id)).toEqual([ids[2], ids[1]])
      expect(list.body.meta.pagination.has_more).toBe(true)
      const indexed = yield* h.call("GET", `/v1/agents/${agentId}/knowledge?status=indexed`, { key: ws.secretTest })
      expect(indexed.body.data).toHaveLength(3)
      const failed = yield* h.call("GET", `/v1/agents/${agentId}/knowledge?status=failed`, { key: ws.secretTest })
      expect(failed.body.data).toHaveLength(0)
      const bad = yield* h.call("GET", `/v1/agents/${agentId}/knowledge?status=done`, { key: ws.secretTest })
      expect(bad.status).toBe(400)
      expect(bad.body.error.param).toBe("status")

      const target = ids[0]!
      expect(yield* count("knowledge_chunks", target)).toBeGreaterThan(0)
      expect(yield* count("qa_items", target)).toBeGreaterThan(0)
      const deleted = yield* h.call("DELETE", `/v1/agents/${agentId}/knowledge/${target}`, { key: ws.secretTest })
      expect(deleted.body.data).toEqual({ id: target, object: "knowledge_source", deleted: true })
      expect(yield* count("knowledge_chunks", target)).toBe(0)
      expect(yield* count("qa_items", target)).toBe(0)
      const gone = yield* h.call("GET", `/v1/agents/${agentId}/knowledge/${target}`, { key: ws.secretTest })
      expect(gone.status).toBe(404)
      const otherAgent = yield* createAgent(h, ws.secretTest)
      const wrongAgent = yield* h.call("GET", `/v1/agents/${otherAgent}/knowledge/${ids[1]}`, { key: ws.secretTest })
      expect(wrongAgent.status).toBe(404)
    })
  )

  it.effect("an attempt's result is written only by that attempt: one taken over (its lease lost) writes nothing", () =>
    Effect.gen(function* () {
      const { h, ws, agentId, created } = yield* faqSource
      const id = created.body.data.id as string
      const [done] = yield* waitSettled(h, ws.secretTest, agentId, [id])
      expect(done).toMatchObject({ status: "indexed", attempts: 1 })
      // as if another worker had taken the source over for its second attempt while the first still ran
      const sql = yield* SqlClient.SqlClient
      yield* sql`update knowledge_sources set status = 'processing', attempts = 2 where id = ${id}`.pipe(Effect.orDie)
      const repo = yield* Effect.provide(KnowledgeRepo, KnowledgeRepo.Default)
      const at = new Date(yield* Clock.currentTimeMillis)
      const late = yield* repo.complete(SourceId.make(id), 1, { status: "indexed" }, undefined, at).pipe(Effect.orDie)
      expect(Option.isNone(late)).toBe(true)
      const current = yield* repo.complete(SourceId.make(id), 2, { status: "indexed" }, { from: "Shop FAQ", to: "FAQ" }, at).pipe(Effect.orDie)
      expect(Option.getOrThrow(current)).toMatchObject({ status: "indexed", attempts: 2, title: "FAQ" })
    })
  )

  it.effect("each type's required fields, and file sources need an uploaded file", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const post = (body: unknown) => h.call("POST", `/v1/agents/${agentId}/knowledge`, { key: ws.secretTest, body })
      const noTitle = yield* post({ type: "text", content: "x" })
      expect([noTitle.status, noTitle.body.error.code, noTitle.body.error.param]).toEqual([400, "parameter_missing", "title"])
      const noUrl = yield* post({ type: "url" })
      expect([noUrl.status, noUrl.body.error.param]).toEqual([400, "url"])
      const badUrl = yield* post({ type: "url", url: "ftp://example.com/x" })
      expect([badUrl.status, badUrl.body.error.code]).toEqual([400, "parameter_invalid"])
      const badType = yield* post({ type: "video", url: "http://127.0.0.1:9" })
      expect([badType.status, badType.body.error.param]).toEqual([400, "type"])
      const unknownFile = yield* post({ type: "file_id", file_id: "file_doesnotexist000" })
      expect([unknownFile.status, unknownFile.body.error.code]).toEqual([404, "resource_missing"])

      const declared = yield* h.call("POST", "/v1/files", {
        key: ws.secretTest,
        body: { filename: "scan.png", content_type: "image/png", size_bytes: tinyPng.length }
      })
      const pending = yield* post({ type: "file_id", file_id: declared.body.data.id })
      expect([pending.status, pending.body.error.code]).toEqual([409, "file_not_uploaded"])
    })
  )

  it.effect("an uploaded image goes through OCR (the fixed layer here) and becomes chunks", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const declared = yield* h.call("POST", "/v1/files", {
        key: ws.secretTest,
        body: { filename: "scan.png", content_type: "image/png", size_bytes: tinyPng.length }
      })
      const id = declared.body.data.id
      yield* Effect.promise(() =>
        fetch(`${h.url}/v1/files/${id}/content`, {
          method: "PUT",
          headers: { authorization: `Bearer ${ws.secretTest}`, "content-type": "image/png" },
          body: tinyPng
        })
      )
      yield* h.call("POST", `/v1/files/${id}/confirm`, { key: ws.secretTest })
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "file_id", file_id: id }
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      expect(created.body.data).toMatchObject({ title: "scan.png", source_ref: id, size_bytes: tinyPng.length })
      const [done] = yield* waitSettled(h, ws.secretTest, agentId, [created.body.data.id])
      expect(done.status, JSON.stringify(done)).toBe("indexed")
      const chunks = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ content: string }>`select content from knowledge_chunks where source_id = ${done.id}`
      ).pipe(Effect.orDie)
      expect(chunks.map((c) => c.content).join(" ")).toContain("text read from the image")
    })
  )

  describe("csv_qa", () => {
    it.effect("quoted fields, commas and newlines inside quotes, a BOM, a header; imported as Q&A in categories", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        const csv =
          "\uFEFFquestion,answer,category\n" +
          '"Where do you ship, exactly?","Everywhere in Europe,\nand to the UK.",Shipping\n' +
          'How long is the warranty?,"Two years, parts and labour",Warranty\n' +
          "Do you sell gift cards?,Yes\n"
        const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
          key: ws.secretTest,
          body: { type: "csv_qa", content: csv }
        })
        expect(created.status, JSON.stringify(created.body)).toBe(201)
        const [done] = yield* waitSettled(h, ws.secretTest, agentId, [created.body.data.id])
        expect(done).toMatchObject({ status: "indexed", qa_count: 3, chunk_count: 0 })
        const items = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ question: string; answer: string; origin: string; category: string | null }>`
            select q.question, q.answer, q.origin, c.name as category
            from qa_items q left join categories c on c.id = q.category_id
            where q.source_id = ${done.id} order by q.seq`
        ).pipe(Effect.orDie)
        expect(items).toEqual([
          { question: "Where do you ship, exactly?", answer: "Everywhere in Europe,\nand to the UK.", origin: "csv", category: "Shipping" },
          { question: "How long is the warranty?", answer: "Two years, parts and labour", origin: "csv", category: "Warranty" },
          { question: "Do you sell gift cards?", answer: "Yes", origin: "csv", category: null }
        ])
      })
    )

    it.effect("every bad row is reported with its line; nothing is imported", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        const csv = 'q1,a1\nonly one field\n"multi\nline",fine\nbad"quote,x\nq5,\n'
        const refused = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
          key: ws.secretTest,
          body: { type: "csv_qa", content: csv }
        })
        expect(refused.status).toBe(400)
        expect(refused.body.error.code).toBe("parameter_invalid")
        expect(refused.body.error.param).toBe("content")
        expect(refused.body.error.message).toContain("line 2:")
        expect(refused.body.error.message).toContain("line 5:")
        expect(refused.body.error.message).toContain("line 6:")
        expect(refused.body.error.message).not.toContain("line 3:")
        const list = yield* h.call("GET", `/v1/agents/${agentId}/knowledge`, { key: ws.secretTest })
        expect(list.body.data).toHaveLength(0)
      })
    )

    it.effect("1 MB is the cap: 1 MB + 1 byte is 413", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        // one row with a long answer: the cap is on bytes, and one row keeps the import itself small
        const exact = "What is the question?," + "a".repeat(1024 * 1024 - 22)
        expect(Buffer.byteLength(exact)).toBe(1024 * 1024)
        const ok = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
          key: ws.secretTest,
          body: { type: "csv_qa", content: exact }
        })
        expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).toBe(201)
        const over = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
          key: ws.secretTest,
          body: { type: "csv_qa", content: `${exact}x` }
        })
        expect(over.status).toBe(413)
        expect(over.body.error.code).toBe("payload_too_large")
        expect(over.body.error.param).toBe("content")
      })
    )
  })

  describe("batch", () => {
    it.effect("creates the sources in order: data.count, data.sources, meta null, Request-Id header", () =>
      Effect.gen(function* () {
        const site = yield* serveSite((req, res) => html(res, page(`Page ${req.url}`, [["About", `This is ${req.url}.`]])))
        const h = yield* Harness
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        const urls = [1, 2, 3].map((i) => `${site.origin}/p${i}`)
        const r = yield* h.call("POST", `/v1/agents/${agentId}/knowledge/batch`, {
          key: ws.secretTest,
          body: { urls },
          headers: { "idempotency-key": "0b6a3c1e-8f5d-4c2b-9a7e-1d2c3b4a5f60" }
        })
        expect(r.status, JSON.stringify(r.body)).toBe(201)
        expect(r.body.meta).toBeNull()
        expect(r.headers.get("request-id")).toMatch(/^req_/)
        expect(r.body.data.count).toBe(3)
        expect(r.body.data.sources.map((s: any) => s.source_ref)).toEqual(urls)
        expect(r.body.data.sources.every((s: any) => s.type === "url" && s.status === "pending")).toBe(true)
        const replay = yield* h.call("POST", `/v1/agents/${agentId}/knowledge/batch`, {
          key: ws.secretTest,
          body: { urls },
          headers: { "idempotency-key": "0b6a3c1e-8f5d-4c2b-9a7e-1d2c3b4a5f60" }
        })
        expect(replay.headers.get("idempotent-replayed")).toBe("true")
        expect(replay.body.data.sources.map((s: any) => s.id)).toEqual(r.body.data.sources.map((s: any) => s.id))
        yield* waitSettled(h, ws.secretTest, agentId, r.body.data.sources.map((s: any) => s.id))
      }).pipe(Effect.scoped)
    )

    it.effect("its error variants: too_many_urls, urls[3], a non-UUID Idempotency-Key, an unknown agent", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        const path = `/v1/agents/${agentId}/knowledge/batch`
        const urls = (n: number) => Array.from({ length: n }, (_, i) => `http://127.0.0.1:9/${i}`)
        const tooMany = yield* h.call("POST", path, { key: ws.secretTest, body: { urls: urls(501) } })
        expect([tooMany.status, tooMany.body.error.code, tooMany.body.error.param]).toEqual([400, "too_many_urls", "urls"])
        const bad = yield* h.call("POST", path, {
          key: ws.secretTest,
          body: { urls: ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b", "http://127.0.0.1:9/c", "not a url"] }
        })
        expect([bad.status, bad.body.error.code, bad.body.error.param]).toEqual([400, "parameter_invalid", "urls[3]"])
        const notString = yield* h.call("POST", path, { key: ws.secretTest, body: { urls: ["http://127.0.0.1:9", 7] } })
        expect([notString.status, notString.body.error.param]).toEqual([400, "urls[1]"])
        const key = yield* h.call("POST", path, {
          key: ws.secretTest,
          body: { urls: urls(1) },
          headers: { "idempotency-key": "not-a-uuid" }
        })
        expect([key.status, key.body.error.code]).toEqual([400, "invalid_idempotency_key"])
        const empty = yield* h.call("POST", path, { key: ws.secretTest, body: { urls: [] } })
        expect([empty.status, empty.body.error.param]).toEqual([400, "urls"])
        const missing = yield* h.call("POST", "/v1/agents/agt_doesnotexist0000/knowledge/batch", {
          key: ws.secretTest,
          body: { urls: urls(1) }
        })
        expect([missing.status, missing.body.error.code]).toEqual([404, "resource_missing"])
        const live = yield* h.call("POST", path, { key: ws.secretLive, body: { urls: urls(1) } })
        expect(live.status).toBe(404)
        const exactly500 = yield* h.call("POST", path, { key: ws.secretTest, body: { urls: urls(500) } })
        expect(exactly500.status).toBe(201)
        expect(exactly500.body.data.count).toBe(500)
      })
    )
  })

})
