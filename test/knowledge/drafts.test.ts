/**
 * Big documents and the chunk drafts they are written through (`src/knowledge/ChunkDraftsRepo.ts`): a text source of
 * one line at the text limit ends indexed with every chunk and its Q&A, nothing left in a draft; while a source's
 * chunks are written, retrieval sees none of them or all of them; chunks an attempt that died left in a draft are
 * never found, and go when the source is tried again (or deleted).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { MAX_TEXT_BYTES } from "../../schema/Knowledge.js"
import { chunk } from "../../src/knowledge/Chunk.js"
import { textPieceChars, visibleChunk } from "../../src/knowledge/ChunkDraftsRepo.js"
import { readSourceText } from "../../src/knowledge/SourceTexts.js"
import { KnowledgeRepo } from "../../src/knowledge/KnowledgeRepo.js"
import { AgentId, SourceId } from "../../schema/Ids.js"
import { eventually } from "../support/eventually.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { createAgent, html, page, serveSite, source, waitSettled } from "./support.js"

/** `bytes` of words on one line: no paragraph or sentence break for the chunker to cut at. */
const oneLine = (bytes: number, last: string) => {
  const words = ["refund", "shipping", "invoice", "warranty", "account", "delivery"]
  const parts: Array<string> = []
  let length = last.length + 1
  for (let i = 0; length < bytes; i++) {
    const word = `${words[i % words.length]}${i % 89}`
    if (length + word.length + 1 > bytes) break
    parts.push(word)
    length += word.length + 1
  }
  return [...parts, last].join(" ")
}

/** A source's chunk rows in the database: all of them, and those retrieval may find. */
const chunkRows = (sourceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ all: number; visible: number }>`
      select count(*)::int as all, (count(*) filter (where ${sql.literal(visibleChunk)}))::int as visible
      from knowledge_chunks where source_id = ${sourceId}`
  ).pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

/** How many pieces of a source's extracted text are stored, of any draft. */
const textPieces = (sourceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`select count(*)::int as n from knowledge_source_texts where source_id = ${sourceId}`
  ).pipe(Effect.map((rows) => rows[0]!.n), Effect.orDie)

const draftsOf = (sourceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`select id from knowledge_chunk_drafts where source_id = ${sourceId}`
  ).pipe(Effect.orDie)

const search = (h: HarnessShape, key: string, agentId: string, query: string) =>
  Effect.map(
    h.call("POST", `/v1/agents/${agentId}/knowledge/search`, { key, body: { query, limit: 20 } }),
    (r) => (r.body.data.hits as Array<any>).filter((hit) => hit.kind === "chunk").map((hit) => hit.text as string)
  )

layer(testServer())("big documents and chunk drafts", (it) => {
  it.effect("a text of one line at the text limit ends indexed with every chunk and its Q&A, no draft left", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const content = oneLine(MAX_TEXT_BYTES, "zanzibarcoda")
      expect(Buffer.byteLength(content)).toBeLessThanOrEqual(MAX_TEXT_BYTES)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "text", title: "The long text", content }
      })
      expect(created.status, created.text).toBe(201)
      const id = created.body.data.id as string
      const [done] = yield* waitSettled(h, ws.secretTest, agentId, [id], 20_000)
      const expected = chunk(`The long text\n\n${content}`).length
      expect(done).toMatchObject({ status: "indexed", chunk_count: expected, error: null })
      // a run of words with no sentence in it has nothing a visitor would ask: no Q&A is made of it
      expect(done.qa_count).toBe(0)
      expect(yield* chunkRows(id)).toEqual({ all: expected, visible: expected })
      expect(yield* draftsOf(id)).toEqual([])
      // its text written in pieces, read back whole; none in the one value it was written as before
      const sql = yield* SqlClient.SqlClient
      expect(Option.getOrThrow(yield* readSourceText(sql, SourceId.make(id)))).toBe(content)
      expect(yield* textPieces(id)).toBe(Math.ceil(content.length / textPieceChars))
      expect(yield* textPieces(id)).toBeGreaterThan(1)
      const [row] = yield* sql<{ extracted_text: string | null }>`select extracted_text from knowledge_sources where id = ${id}`.pipe(Effect.orDie)
      expect(row!.extracted_text).toBeNull()
      const repo = yield* Effect.provide(KnowledgeRepo, KnowledgeRepo.Default)
      const [texts] = yield* repo.indexedTexts({ workspaceId: ws.workspace.id, environment: "test" }, AgentId.make(agentId))
      expect(texts).toEqual({ sourceId: id, title: "The long text", text: content })
      // the text's last word is in its last chunk: found
      const hits = yield* search(h, ws.secretTest, agentId, "zanzibarcoda")
      expect(hits.some((text) => text.includes("zanzibarcoda"))).toBe(true)
      const qa = yield* h.call("GET", `/v1/agents/${agentId}/qa?limit=100`, { key: ws.secretTest })
      expect(qa.body.data.filter((item: any) => item.source_id === id)).toHaveLength(done.qa_count)
    })
  )

  it.effect("while a source's chunks are written, retrieval sees none of them, then all of them", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      // some 200 chunks: written in several steps
      const content = oneLine(240_000, "quokkaterminal")
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "text", title: "Many passages", content }
      })
      const id = created.body.data.id as string
      const expected = chunk(`Many passages\n\n${content}`).length
      const samples: Array<{ all: number; visible: number; status: string }> = []
      const sampler = yield* Effect.fork(
        eventually(
          // the state first: a source seen indexed was published before its rows are read
          Effect.flatMap(source(h, ws.secretTest, agentId, id), (s) =>
            Effect.map(chunkRows(id), (rows) => {
              samples.push({ ...rows, status: s.status })
              return s
            })
          ),
          (s) => s.status === "indexed" || s.status === "failed",
          { tries: 20_000, label: "the source settled" }
        )
      )
      const settled = yield* Fiber.join(sampler)
      expect(settled).toMatchObject({ status: "indexed", chunk_count: expected })
      for (const sample of samples) expect([0, expected], JSON.stringify(sample)).toContain(sample.visible)
      // once a poller sees the source indexed, its chunks are all there
      for (const sample of samples.filter((s) => s.status === "indexed")) expect(sample.visible).toBe(expected)
      expect(yield* chunkRows(id)).toEqual({ all: expected, visible: expected })
    })
  )

  it.scoped("chunks an attempt that died left in a draft are never found, and go when the source is tried again", () =>
    Effect.gen(function* () {
      let calls = 0
      const site = yield* serveSite((_req, res) => {
        calls++
        if (calls === 1) return void res.writeHead(503, { "content-type": "text/plain" }).end("busy")
        html(res, page("Opening hours", [["Hours", "We are open from nine to five on weekdays."]]))
      })
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "url", url: `${site.origin}/hours` }
      })
      const id = created.body.data.id as string
      yield* eventually(source(h, ws.secretTest, agentId, id), (s) => s.attempts === 1 && s.next_attempt_at !== null, {
        label: "waiting for its retry"
      })
      // what an attempt killed half-way through its chunks leaves: a draft, some of its chunks
      const sql = yield* SqlClient.SqlClient
      yield* sql`insert into knowledge_chunk_drafts (id, source_id, created_at) values ('drf_dead', ${id}, now())`.pipe(Effect.orDie)
      yield* sql`
        insert into knowledge_chunks (id, source_id, agent_id, workspace_id, environment, position, content, embedding, draft)
        values ('chk_dead1', ${id}, ${agentId}, ${ws.workspace.id}, 'test', 0, 'Opening hours: we are closed on mondays, says the dead draft', '{}', 'drf_dead')`.pipe(
        Effect.orDie
      )
      expect(yield* search(h, ws.secretTest, agentId, "closed mondays dead draft")).toEqual([])

      yield* TestClock.adjust("10 seconds")
      const [done] = yield* waitSettled(h, ws.secretTest, agentId, [id])
      expect(done).toMatchObject({ status: "indexed", attempts: 2 })
      expect(yield* chunkRows(id)).toEqual({ all: done.chunk_count, visible: done.chunk_count })
      expect(yield* draftsOf(id)).toEqual([])
      const hits = yield* search(h, ws.secretTest, agentId, "open nine five weekdays")
      expect(hits.some((text) => text.includes("nine to five"))).toBe(true)
      expect(hits.some((text) => text.includes("dead draft"))).toBe(false)
    })
  )

  it.effect("a deleted source takes its drafts and their chunks with it", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "text", title: "Returns", content: "Returns are accepted within thirty days of delivery." }
      })
      const id = created.body.data.id as string
      yield* waitSettled(h, ws.secretTest, agentId, [id])
      const sql = yield* SqlClient.SqlClient
      yield* sql`insert into knowledge_chunk_drafts (id, source_id, created_at) values ('drf_left', ${id}, now())`.pipe(Effect.orDie)
      yield* sql`
        insert into knowledge_chunks (id, source_id, agent_id, workspace_id, environment, position, content, embedding, draft)
        values ('chk_left1', ${id}, ${agentId}, ${ws.workspace.id}, 'test', 0, 'left behind', '{}', 'drf_left')`.pipe(Effect.orDie)
      const deleted = yield* h.call("DELETE", `/v1/agents/${agentId}/knowledge/${id}`, { key: ws.secretTest })
      expect(deleted.status).toBe(200)
      expect(yield* chunkRows(id)).toEqual({ all: 0, visible: 0 })
      expect(yield* draftsOf(id)).toEqual([])
      expect(yield* textPieces(id)).toBe(0)
    })
  )
})
