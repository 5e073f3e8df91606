/**
 * Lesson sources through the knowledge pipeline: each type (text, url,
 * file_id) to `course.lesson.source.indexed`, a failing URL to
 * `course.lesson.source.failed`, the serial per-agent order shared with
 * knowledge sources, and a training agent's reply naming the lesson.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { JobQueue } from "../../layers/JobQueue.js"
import { INGEST_QUEUE } from "../../src/knowledge/Knowledge.js"
import { JOB_MAX_ATTEMPTS } from "../../src/knowledge/Pipeline.js"
import { dyingAi, eventsOfType, html, page, serveSite } from "../knowledge/support.js"
import { eventually } from "../support/eventually.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { addSource, course, listSources, settledSources } from "./support.js"

const notes = `# Opening hours

## Weekdays
The studio opens at nine in the morning and closes at six in the evening, Monday to Friday.

## Weekends
On Saturdays the studio opens at ten; on Sundays it stays closed.`

const uploadText = (h: HarnessShape, key: string, filename: string, content: string) =>
  Effect.gen(function* () {
    const bytes = new TextEncoder().encode(content)
    const declared = yield* h.call("POST", "/v1/files", {
      key,
      body: { filename, content_type: "text/plain", size_bytes: bytes.length }
    })
    const id = declared.body.data.id as string
    yield* Effect.promise(() =>
      fetch(`${h.url}/v1/files/${id}/content`, {
        method: "PUT",
        headers: { authorization: `Bearer ${key}`, "content-type": "text/plain" },
        body: bytes
      })
    )
    yield* h.call("POST", `/v1/files/${id}/confirm`, { key })
    return id
  })

layer(testServer())("lesson sources", (it) => {
  it.effect("text, url and file_id sources are indexed and each ends with course.lesson.source.indexed", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const site = yield* serveSite((_req, res) => html(res, page("Studio rules", [["Shoes", "Wear clean shoes inside."]])))
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const { agentId, lessonId } = yield* course(h, key)
        const fileId = yield* uploadText(h, key, "safety.txt", "Always switch the kiln off before leaving the studio.")
        const text = yield* addSource(h, key, agentId, { lesson_id: lessonId, type: "text", title: "Hours", content: notes })
        expect(text).toMatchObject({ type: "text", source_ref: "inline", title: "Hours" })
        expect(["pending", "processing", "indexed"]).toContain(text.status)
        const url = yield* addSource(h, key, agentId, { lesson_id: lessonId, type: "url", url: `${site.origin}/rules` })
        expect(url).toMatchObject({ type: "url", source_ref: `${site.origin}/rules` })
        const file = yield* addSource(h, key, agentId, { lesson_id: lessonId, type: "file_id", file_id: fileId })
        expect(file).toMatchObject({ type: "file_id", source_ref: fileId, title: "safety.txt" })

        const settled = yield* settledSources(h, key, agentId, lessonId)
        for (const source of settled) {
          expect(source, JSON.stringify(source)).toMatchObject({ status: "indexed", phase: "done", progress: 100, attempts: 1 })
          expect(source.chunk_count).toBeGreaterThan(0)
        }
        const events = yield* eventsOfType(ws.workspace.id, "course.lesson.source.indexed")
        expect(events.map((e) => e.data.source.id).sort()).toEqual([text.id, url.id, file.id].sort())
        for (const event of events) {
          expect(event.data.lesson).toMatchObject({ id: lessonId, object: "lesson", title: "Getting started" })
          expect(event.data.source).toMatchObject({ object: "lesson_source", lesson_id: lessonId, status: "indexed" })
        }
        // lesson sources do not report as knowledge sources
        expect(yield* eventsOfType(ws.workspace.id, "knowledge.source.indexed")).toEqual([])
      })
    )
  )

  it.effect("knowledge and lesson sources of one agent run one at a time, in creation order", () =>
    Effect.scoped(
      Effect.gen(function* () {
        let release: (() => void) | undefined
        const held = new Promise<void>((resolve) => {
          release = resolve
        })
        const site = yield* serveSite((_req, res) => {
          void held.then(() => html(res, page("Glazes", [["Glazes", "Dip each pot in the glaze for three seconds."]])))
        })
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const { agentId, lessonId } = yield* course(h, key)
        const first = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, { key, body: { type: "url", url: `${site.origin}/glazes` } })
        expect(first.status).toBe(201)
        const second = yield* addSource(h, key, agentId, { lesson_id: lessonId, type: "text", title: "Hours", content: notes })
        // the page is held: the knowledge source is being fetched, the lesson source waits its turn
        yield* eventually(
          Effect.sync(() => site.hits.length),
          (n) => n === 1,
          { label: "page requested" }
        )
        const [waiting] = yield* listSources(h, key, agentId, lessonId)
        expect(waiting).toMatchObject({ id: second.id, status: "pending", phase: "queued" })
        release!()
        yield* settledSources(h, key, agentId, lessonId)
        const order = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ type: string }>`select type from events where workspace_id = ${ws.workspace.id}
            and type in ('knowledge.source.indexed', 'course.lesson.source.indexed') order by seq`
        ).pipe(Effect.orDie)
        expect(order.map((e) => e.type)).toEqual(["knowledge.source.indexed", "course.lesson.source.indexed"])
      })
    )
  )

  it.effect("a rename made while the page is fetched wins over the page's own title", () =>
    Effect.scoped(
      Effect.gen(function* () {
        let release: (() => void) | undefined
        const held = new Promise<void>((resolve) => {
          release = resolve
        })
        const site = yield* serveSite((req, res) => {
          const answer = () => html(res, page("Kiln safety", [["Kiln", "Switch the kiln off before leaving."]]))
          if (req.url === "/held") void held.then(answer)
          else answer()
        })
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const { agentId, lessonId } = yield* course(h, key)
        const renamed = yield* addSource(h, key, agentId, { lesson_id: lessonId, type: "url", url: `${site.origin}/held` })
        const untouched = yield* addSource(h, key, agentId, { lesson_id: lessonId, type: "url", url: `${site.origin}/free` })
        yield* eventually(
          Effect.sync(() => site.hits.length),
          (n) => n === 1,
          { label: "page requested" }
        )
        const patched = yield* h.call("PATCH", `/v1/agents/${agentId}/sources/${renamed.id}`, {
          key,
          body: { title: "Before you leave" }
        })
        expect(patched.status, JSON.stringify(patched.body)).toBe(200)
        release!()
        const settled = yield* settledSources(h, key, agentId, lessonId)
        expect(settled.map((s) => [s.id, s.status, s.title])).toEqual([
          [renamed.id, "indexed", "Before you leave"],
          [untouched.id, "indexed", "Kiln safety"]
        ])
      })
    )
  )

  it.effect("a failing source ends with course.lesson.source.failed naming the error", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const site = yield* serveSite((_req, res) => {
          res.writeHead(404, { "content-type": "text/plain" })
          res.end("gone")
        })
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const { agentId, lessonId } = yield* course(h, key)
        const source = yield* addSource(h, key, agentId, { lesson_id: lessonId, type: "url", url: `${site.origin}/missing` })
        const [failed] = yield* settledSources(h, key, agentId, lessonId)
        expect(failed).toMatchObject({ id: source.id, status: "failed", error_code: "not_found" })
        const events = yield* eventsOfType(ws.workspace.id, "course.lesson.source.failed")
        expect(events).toHaveLength(1)
        expect(events[0].data).toMatchObject({
          lesson: { id: lessonId },
          source: { id: source.id, status: "failed" },
          error: { code: "not_found", message: expect.stringContaining("404") }
        })
      })
    )
  )

  it.effect("the body is checked like a knowledge source's: missing fields, unknown types, private rules", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const { agentId, lessonId } = yield* course(h, key)
      const post = (body: Record<string, unknown>) => h.call("POST", `/v1/agents/${agentId}/sources`, { key, body })
      const noTitle = yield* post({ lesson_id: lessonId, type: "text", content: "x" })
      expect([noTitle.status, noTitle.body.error.code, noTitle.body.error.param]).toEqual([400, "parameter_missing", "title"])
      const csv = yield* post({ lesson_id: lessonId, type: "csv_qa", content: "q,a" })
      expect([csv.status, csv.body.error.param]).toEqual([400, "type"])
      const noFile = yield* post({ lesson_id: lessonId, type: "file_id", file_id: "file_doesnotexist000" })
      expect([noFile.status, noFile.body.error.code]).toEqual([404, "resource_missing"])
      const noLesson = yield* post({ type: "text", title: "T", content: "x" })
      expect([noLesson.status, noLesson.body.error.code]).toEqual([400, "parameter_missing"])
    })
  )

  it.effect("a training agent answers from its lessons' sources and the sources event names the lesson", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const { agentId, lessonId } = yield* course(h, key)
      const source = yield* addSource(h, key, agentId, { lesson_id: lessonId, type: "text", title: "Hours", content: notes })
      yield* settledSources(h, key, agentId, lessonId)
      const reply = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
        key,
        body: { message: "When does the studio open on weekdays?", stream: false }
      })
      expect(reply.status, JSON.stringify(reply.body)).toBe(201)
      const chunks = reply.body.data.sources.filter((s: any) => s.type === "chunk")
      expect(chunks.length, JSON.stringify(reply.body.data)).toBeGreaterThan(0)
      expect(chunks[0]).toMatchObject({ title: "Hours", url: null, lesson: { id: lessonId, title: "Getting started" } })
      expect(chunks[0].id).toMatch(/^src_/)
      expect(reply.body.data.content).toMatch(/nine/)
      expect(source.is_primary).toBe(true)
    })
  )
})

layer(testServer({}, { ai: dyingAi }))("lesson sources whose processing dies", (it) => {
  it.effect("fail with internal_error after the last attempt, reported as course.lesson.source.failed", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const queue = yield* JobQueue
      const ws = yield* h.seed()
      const key = ws.secretTest
      const { agentId, lessonId } = yield* course(h, key)
      const source = yield* addSource(h, key, agentId, { lesson_id: lessonId, type: "text", title: "Crash notes", content: notes })
      // each attempt dies; the clock goes to the instant the source says it is tried again (the backoff's own
      // instants are held by test/knowledge/failures.test.ts), never past it while an attempt runs: a lease would
      // lapse under it, and the attempt count as one that stopped its worker
      for (let step = 0; step < JOB_MAX_ATTEMPTS * 2; step++) {
        yield* queue.awaitIdle(INGEST_QUEUE)
        const [current] = yield* listSources(h, key, agentId, lessonId)
        if (current.status === "failed") break
        const now = yield* Clock.currentTimeMillis
        yield* TestClock.adjust(Math.max(0, Date.parse(current.next_attempt_at) - now))
      }
      const [failed] = yield* settledSources(h, key, agentId, lessonId)
      expect(failed).toMatchObject({ id: source.id, status: "failed", error_code: "internal_error" })
      const events = yield* eventsOfType(ws.workspace.id, "course.lesson.source.failed")
      expect(events.map((e) => e.data.error)).toEqual([
        { code: "internal_error", message: "the source could not be processed: an internal error occurred" }
      ])
      expect(yield* eventsOfType(ws.workspace.id, "knowledge.source.failed")).toEqual([])
    })
  )
})
