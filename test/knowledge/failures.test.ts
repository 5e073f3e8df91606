/**
 * Failure handling of the pipeline under TestClock: a transient failure (503,
 * 503, then 200) is retried with backoff, `attempts` and `next_attempt_at`
 * visible while it waits; a permanent one (404, an unsupported type, a page
 * too large) fails at once with `knowledge.source.failed`; processing that dies
 * (a defect of a dependency) is retried by the queue, shown on the source while
 * it waits, and fails it with `internal_error` at the last attempt, after which
 * the agent's next source runs.
 */
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { layerInline } from "../../layers/extractor/Inline.js"
import { JobQueue, retryBackoffMillis } from "../../layers/JobQueue.js"
import { fromPrimitives } from "../../layers/jobqueue/Worker.js"
import { AppConfig } from "../../src/Config.js"
import { Workers } from "../../src/knowledge/Area.js"
import { INGEST_QUEUE } from "../../src/knowledge/Knowledge.js"
import { JOB_MAX_ATTEMPTS, Pipeline, stoppedMessage } from "../../src/knowledge/Pipeline.js"
import { eventually } from "../support/eventually.js"
import { Harness, testConfig, testEpoch, testServer } from "../support/harness.js"
import { createAgent, dyingAi, eventsOfType, html, page, serveSite, source, waitSettled } from "./support.js"

layer(testServer())("ingestion failures", (it) => {
  it.effect("503, 503, 200: retried on the Clock, attempts 3, next_attempt_at visible while waiting, then indexed", () =>
    Effect.gen(function* () {
      let calls = 0
      const site = yield* serveSite((_req, res) => {
        calls++
        if (calls <= 2) {
          res.writeHead(503, { "content-type": "text/plain" })
          res.end("busy")
        } else {
          html(res, page("Opening hours", [["Hours", "We are open from nine to five on weekdays."]]))
        }
      })
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "url", url: `${site.origin}/hours` }
      })
      expect(created.status).toBe(201)
      const id = created.body.data.id as string
      const read = source(h, ws.secretTest, agentId, id)

      const first = yield* eventually(read, (s) => s.attempts === 1 && s.next_attempt_at !== null, { label: "first wait" })
      expect(first).toMatchObject({ status: "pending", phase: "queued", error_code: "http_error" })
      expect(first.error).toContain("503")
      expect(Date.parse(first.next_attempt_at)).toBe(testEpoch + 10_000)

      yield* TestClock.adjust("10 seconds")
      const second = yield* eventually(read, (s) => s.attempts === 2 && s.next_attempt_at !== null, { label: "second wait" })
      expect(Date.parse(second.next_attempt_at)).toBe(testEpoch + 10_000 + 40_000)

      yield* TestClock.adjust("40 seconds")
      const [done] = yield* waitSettled(h, ws.secretTest, agentId, [id])
      expect(done).toMatchObject({ status: "indexed", attempts: 3, next_attempt_at: null, error: null, error_code: null })
      expect(calls).toBe(3)
      const indexed = yield* eventsOfType(ws.workspace.id, "knowledge.source.indexed")
      expect(indexed.map((e) => e.data.source.id)).toEqual([id])
    }).pipe(Effect.scoped)
  )

  it.effect("404 fails at once with the failed event; so do an unsupported type and a page that is too large", () =>
    Effect.gen(function* () {
      const site = yield* serveSite((req, res) => {
        if (req.url === "/image") {
          res.writeHead(200, { "content-type": "image/gif" })
          return res.end("GIF89a")
        }
        if (req.url === "/huge") {
          res.writeHead(200, { "content-type": "text/plain" })
          return res.end("x".repeat(3 * 1024 * 1024))
        }
        html(res, "gone", 404)
      })
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const ids: Array<string> = []
      for (const path of ["/missing", "/image", "/huge"]) {
        const r = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
          key: ws.secretTest,
          body: { type: "url", url: `${site.origin}${path}` }
        })
        ids.push(r.body.data.id)
      }
      const settled = yield* waitSettled(h, ws.secretTest, agentId, ids)
      expect(settled.map((s: any) => [s.status, s.error_code, s.attempts, s.next_attempt_at])).toEqual([
        ["failed", "not_found", 1, null],
        ["failed", "unsupported_type", 1, null],
        ["failed", "too_large", 1, null]
      ])
      expect(settled[0].error).toContain("404")
      const failed = yield* eventsOfType(ws.workspace.id, "knowledge.source.failed")
      expect(failed.map((e) => e.data.source.id)).toEqual(ids)
      expect(failed[0].data.error).toEqual({ code: "not_found", message: settled[0].error })
      expect(failed[0].data.source.status).toBe("failed")
    }).pipe(Effect.scoped)
  )
})

layer(testServer({}, { ai: dyingAi }))("ingestion that dies", (it) => {
  it.effect("retried with the error and next_attempt_at shown, then failed with internal_error; the next source runs", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const queue = yield* JobQueue
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const post = (title: string, content: string) =>
        Effect.map(
          h.call("POST", `/v1/agents/${agentId}/knowledge`, { key: ws.secretTest, body: { type: "text", title, content } }),
          (r) => {
            expect(r.status).toBe(201)
            return r.body.data.id as string
          }
        )
      const crashing = yield* post("Crash course", "We are open from nine to five on weekdays.")
      const next = yield* post("Opening hours", "We are open from nine to five on weekdays, and on Saturday mornings.")
      const read = source(h, ws.secretTest, agentId, crashing)

      for (let attempt = 1; attempt < JOB_MAX_ATTEMPTS; attempt++) {
        yield* queue.awaitIdle(INGEST_QUEUE)
        const at = yield* Clock.currentTimeMillis
        const waiting = yield* read
        expect(waiting).toMatchObject({ status: "pending", phase: "queued", attempts: attempt, error_code: "internal_error" })
        expect(waiting.error).toBe("the source could not be processed: an internal error occurred; it will be tried again")
        expect(Date.parse(waiting.next_attempt_at)).toBe(at + retryBackoffMillis(attempt - 1))
        // one source at a time per agent: the next one waits behind it
        expect((yield* source(h, ws.secretTest, agentId, next)).status).toBe("pending")
        yield* TestClock.adjust(retryBackoffMillis(attempt - 1))
      }
      // the last attempt dies: the source fails, and the agent's next source runs
      yield* queue.awaitIdle(INGEST_QUEUE)
      const [failed, indexed] = yield* waitSettled(h, ws.secretTest, agentId, [crashing, next])
      expect(failed).toMatchObject({
        status: "failed",
        attempts: JOB_MAX_ATTEMPTS,
        next_attempt_at: null,
        error: "the source could not be processed: an internal error occurred",
        error_code: "internal_error"
      })
      expect(indexed).toMatchObject({ status: "indexed", error: null, error_code: null })
      const events = yield* eventsOfType(ws.workspace.id, "knowledge.source.failed")
      expect(events.map((e) => e.data.source.id)).toEqual([crashing])
      expect(events[0].data.error).toEqual({ code: "internal_error", message: failed.error })
      expect((yield* eventsOfType(ws.workspace.id, "knowledge.source.indexed")).map((e) => e.data.source.id)).toEqual([next])
    })
  )
})

/** The bundle's old failure: the HTML reader itself dies (a missing constructor), for every page. */
const dyingExtractor = layerInline({
  extract: () => Effect.die(new TypeError("Readability is not a constructor"))
})

layer(testServer({}, { extractor: dyingExtractor }))("an extractor that dies", (it) => {
  it.effect("the page's source fails with internal_error after the last attempt, and the agent's next source is indexed", () =>
    Effect.gen(function* () {
      const site = yield* serveSite((_req, res) => html(res, page("Opening hours", [["Hours", "Open from nine to five."]])))
      const h = yield* Harness
      const queue = yield* JobQueue
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const post = (body: Record<string, unknown>) =>
        Effect.map(h.call("POST", `/v1/agents/${agentId}/knowledge`, { key: ws.secretTest, body }), (r) => r.body.data.id as string)
      const page1 = yield* post({ type: "url", url: `${site.origin}/hours` })
      // inline text is not an untrusted document: it is read without the extractor
      const next = yield* post({ type: "text", title: "Returns", content: "Returns are accepted within thirty days." })
      for (let attempt = 1; attempt < JOB_MAX_ATTEMPTS; attempt++) {
        yield* queue.awaitIdle(INGEST_QUEUE)
        expect((yield* source(h, ws.secretTest, agentId, page1)).attempts).toBe(attempt)
        yield* TestClock.adjust(retryBackoffMillis(attempt - 1))
      }
      yield* queue.awaitIdle(INGEST_QUEUE)
      const [failed, indexed] = yield* waitSettled(h, ws.secretTest, agentId, [page1, next])
      expect(failed).toMatchObject({ status: "failed", error_code: "internal_error", attempts: JOB_MAX_ATTEMPTS })
      expect(failed.error).not.toContain("Readability")
      expect(indexed.status).toBe("indexed")
      expect((yield* eventsOfType(ws.workspace.id, "knowledge.source.failed")).map((e) => e.data.source.id)).toEqual([page1])
    }).pipe(Effect.scoped)
  )
})

/**
 * A document whose reading kills its process (a decoder's native crash): here the extractor never returns, and
 * the test stands for the processes. The server's own ingestion takes no job (no slot); each "process" is the
 * knowledge area's ingestion worker over a queue of its own that, once killed, neither settles nor hands back its
 * job, so the job's lease lapses as a dead process's does.
 */
const ingestNone = testConfig().ingest
let extractions = 0
const stoppingExtractor = layerInline({ extract: () => Effect.zipRight(Effect.sync(() => extractions++), Effect.never) })

layer(testServer({ ingest: { ...ingestNone, concurrency: 0 } }, { extractor: stoppingExtractor }))(
  "a document whose reading kills its process",
  (it) => {
    it.effect("after the last attempt the source fails with processing_stopped and its event, and the next source is indexed", () =>
      Effect.gen(function* () {
        const site = yield* serveSite((_req, res) => html(res, page("Opening hours", [["Hours", "Open from nine to five."]])))
        const h = yield* Harness
        const store = yield* JobQueue
        const config = yield* AppConfig
        const pipeline = yield* Pipeline
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        const post = (body: Record<string, unknown>) =>
          Effect.map(h.call("POST", `/v1/agents/${agentId}/knowledge`, { key: ws.secretTest, body }), (r) => r.body.data.id as string)
        const poison = yield* post({ type: "url", url: `${site.origin}/hours` })
        const next = yield* post({ type: "text", title: "Returns", content: "Returns are accepted within thirty days." })
        const processConfig = { ...config, ingest: { ...config.ingest, concurrency: 1 }, workersStartAfterMillis: undefined }
        const startProcess = (dies: boolean) => Effect.gen(function* () {
          // a dead process runs no finalizer: neither its lease's release nor the hand-back of what its claim started
          const queue = yield* fromPrimitives({ ...store, release: () => Effect.void })
          const dying = dies ? Pipeline.make({ ...pipeline, handBack: () => Effect.void }) : pipeline
          const scope = yield* Scope.make()
          yield* Layer.buildWithScope(
            Workers.pipe(
              Layer.provide(Layer.succeed(JobQueue, queue)),
              Layer.provide(Layer.succeed(AppConfig, processConfig)),
              Layer.provide(Layer.succeed(Pipeline, dying))
            ),
            scope
          )
          return { queue, kill: Scope.close(scope, Exit.void) }
        })
        for (let attempt = 1; attempt <= JOB_MAX_ATTEMPTS; attempt++) {
          const process = yield* startProcess(true)
          yield* eventually(Effect.sync(() => extractions), (n) => n === attempt, { label: `attempt ${attempt}` })
          const reading = yield* source(h, ws.secretTest, agentId, poison)
          expect(reading).toMatchObject({ status: "processing", attempts: attempt, error: null })
          yield* process.kill
          yield* TestClock.adjust(config.ingest.leaseMillis)
        }
        // the process after the last attempt reads nothing: it gives the source up, then indexes the next one
        const last = yield* startProcess(false)
        yield* last.queue.awaitIdle(INGEST_QUEUE)
        const [failed, indexed] = yield* waitSettled(h, ws.secretTest, agentId, [poison, next])
        expect(extractions).toBe(JOB_MAX_ATTEMPTS)
        expect(failed).toMatchObject({
          status: "failed",
          attempts: JOB_MAX_ATTEMPTS,
          next_attempt_at: null,
          error: stoppedMessage,
          error_code: "processing_stopped"
        })
        expect(indexed).toMatchObject({ status: "indexed", error: null, error_code: null })
        const events = yield* eventsOfType(ws.workspace.id, "knowledge.source.failed")
        expect(events.map((e) => e.data.source.id)).toEqual([poison])
        expect(events[0].data.error).toEqual({ code: "processing_stopped", message: stoppedMessage })
        expect((yield* eventsOfType(ws.workspace.id, "knowledge.source.indexed")).map((e) => e.data.source.id)).toEqual([next])
        yield* last.kill
      }).pipe(Effect.scoped)
    )
  }
)
