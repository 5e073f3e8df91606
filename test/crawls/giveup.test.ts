/**
 * A crawl whose walk dies at every attempt (a bug, not the site's answer: here the fetcher itself dies) is retried
 * by the queue with its backoff on the TestClock, then given up: the crawl ends `failed` with `internal_error` and
 * `crawl.failed`, its job failed, and the site is free for another crawl.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as Fetcher from "../../layers/Fetcher.js"
import { retryBackoffMillis } from "../../layers/JobQueue.js"
import { CRAWL_MAX_ATTEMPTS, crawlInternalMessage } from "../../src/crawls/CrawlJob.js"
import { CRAWL_QUEUE } from "../../src/crawls/Queues.js"
import { eventually } from "../support/eventually.js"
import { Harness, testServer } from "../support/harness.js"
import { createAgent, eventsOfType } from "../knowledge/support.js"

let walks = 0
const dying = Fetcher.layerTest(
  () => Fetcher.response(200, "ok"),
  () =>
    Effect.suspend(() => {
      walks++
      return Effect.die(new Error("the fetcher broke"))
    })
)

layer(testServer({}, { fetcher: dying }))("a crawl whose walk dies", (it) => {
  it.effect("is retried with backoff, then fails with internal_error and crawl.failed; the site is free again", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/crawls`, {
        key: ws.secretTest,
        body: { url: "https://help.example.com/" }
      })
      expect(created.status, created.text).toBe(201)
      const id = created.body.data.id as string
      const read = Effect.map(h.call("GET", `/v1/agents/${agentId}/crawls/${id}`, { key: ws.secretTest }), (r) => r.body.data)
      for (let attempt = 1; attempt < CRAWL_MAX_ATTEMPTS; attempt++) {
        yield* eventually(Effect.sync(() => walks), (n) => n >= attempt, { label: `attempt ${attempt}` })
        expect((yield* read).status).toBe("running")
        yield* TestClock.adjust(retryBackoffMillis(attempt))
      }
      const failed = yield* eventually(
        Effect.zipRight(TestClock.adjust(1000), read),
        (c) => c.status === "failed",
        { label: "the crawl given up" }
      )
      expect(walks).toBe(CRAWL_MAX_ATTEMPTS)
      expect(failed.error).toEqual({ code: "internal_error", message: crawlInternalMessage })
      const events = yield* eventsOfType(ws.workspace.id, "crawl.failed")
      expect(events.map((e) => [e.data.crawl.id, e.data.error.code])).toEqual([[id, "internal_error"]])
      const sql = yield* SqlClient.SqlClient
      const jobs = yield* Effect.orDie(sql<{ status: string }>`select status from jobs where queue = ${CRAWL_QUEUE}`)
      expect(jobs.map((j) => j.status)).toEqual(["failed"])
      // the site is free: another crawl of it is accepted
      const again = yield* h.call("POST", `/v1/agents/${agentId}/crawls`, { key: ws.secretTest, body: { url: "https://help.example.com/" } })
      expect(again.status, again.text).toBe(201)
    })
  )
})
