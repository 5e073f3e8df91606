/**
 * A crawl's schedule, time driven by the TestClock: a daily crawl's site is crawled again a day later (a new
 * crawl, `scheduled_by` it, that keeps the page added since and refreshes the known ones), then every day; a
 * schedule set anew moves the next run and leaves the timers set before without effect; `off` stops it.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import { JobQueue } from "../../layers/JobQueue.js"
import { CRAWL_SCHEDULE_QUEUE } from "../../src/crawls/Queues.js"
import { eventually } from "../support/eventually.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { loopbackServer } from "../support/loopback.js"
import { createAgent } from "../knowledge/support.js"

const DAY = 24 * 60 * 60 * 1000

const html = (title: string, body: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body><article><h1>${title}</h1>${body}</article></body></html>`

/** A site of two pages, then three once `grown`. */
const growingSite = () =>
  Effect.gen(function* () {
    const state = { grown: false }
    const server = yield* loopbackServer(({ path }, res) => {
      const send = (title: string, body: string) =>
        void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html(title, body))
      switch (path) {
        case "/":
          return send("Help centre", `<p>Answers to the questions our customers ask most.</p><a href="/shipping">Shipping</a>${state.grown ? `<a href="/gifts">Gift cards</a>` : ""}`)
        case "/shipping":
          return send("Shipping", "<p>Every order ships within two business days of payment.</p>")
        case "/gifts":
          return state.grown ? send("Gift cards", "<p>Gift cards never expire and work in every shop.</p>") : void res.writeHead(404).end()
        default:
          return void res.writeHead(404).end()
      }
    })
    return { state, origin: server.origin }
  })

const crawlsOf = (h: HarnessShape, key: string, agentId: string) =>
  Effect.map(h.call("GET", `/v1/agents/${agentId}/crawls`, { key }), (r) => r.body.data as Array<any>)

/**
 * The agent's crawls once there are `count` and the newest ended with its pages indexed. Polled every 100 ms of
 * real time: a walk on PGlite shares its one connection with the polls.
 */
const settled = (crawls: Effect.Effect<Array<any>>, count: number) =>
  eventually(
    Effect.zipRight(TestServices.provideLive(Effect.sleep("100 millis")), crawls),
    (all) => all.length === count && all[0].status === "completed" && all[0].pages.indexing === 0,
    { tries: 600, label: `crawl ${count} ended` }
  )

layer(testServer())("crawl schedules", (it) => {
  it.scoped("a daily crawl runs again a day later as a new crawl that finds the new page; off stops it", () =>
    Effect.gen(function* () {
      const site = yield* growingSite()
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const agentId = yield* createAgent(h, key)
      const created = yield* h.call("POST", `/v1/agents/${agentId}/crawls`, { key, body: { url: `${site.origin}/`, schedule: "daily" } })
      expect(created.status, created.text).toBe(201)
      const first = created.body.data
      const startedAt = new Date(yield* TestClock.currentTimeMillis)
      expect(first).toMatchObject({ schedule: "daily", next_run_at: new Date(startedAt.getTime() + DAY).toISOString(), scheduled_by: null })
      yield* settled(crawlsOf(h, key, agentId), 1)

      site.state.grown = true
      yield* TestClock.adjust(DAY - 60_000)
      expect(yield* crawlsOf(h, key, agentId)).toHaveLength(1)
      yield* TestClock.adjust(60_000)
      const runs = yield* settled(crawlsOf(h, key, agentId), 2)
      expect(runs[0]).toMatchObject({ scheduled_by: first.id, schedule: "off", url: first.url, limit: first.limit })
      expect(runs[0].pages).toMatchObject({ kept: 1, skipped: { known: 2 } })
      const holder = yield* h.call("GET", `/v1/agents/${agentId}/crawls/${first.id}`, { key })
      expect(holder.body.data.next_run_at).toBe(new Date(startedAt.getTime() + 2 * DAY).toISOString())
      const sources = (yield* h.call("GET", `/v1/agents/${agentId}/knowledge?limit=100`, { key })).body.data
      expect(sources.map((s: any) => new URL(s.source_ref).pathname).sort()).toEqual(["/", "/gifts", "/shipping"])

      // set anew: weekly from now; the daily timer set before starts nothing
      const weekly = yield* h.call("PATCH", `/v1/agents/${agentId}/crawls/${first.id}`, { key, body: { schedule: "weekly" } })
      expect(weekly.status, weekly.text).toBe(200)
      const setAt = yield* TestClock.currentTimeMillis
      expect(weekly.body.data).toMatchObject({ schedule: "weekly", next_run_at: new Date(setAt + 7 * DAY).toISOString() })
      yield* TestClock.adjust(2 * DAY)
      yield* (yield* JobQueue).awaitIdle(CRAWL_SCHEDULE_QUEUE)
      expect(yield* crawlsOf(h, key, agentId)).toHaveLength(2)

      const off = yield* h.call("PATCH", `/v1/agents/${agentId}/crawls/${first.id}`, { key, body: { schedule: "off" } })
      expect(off.body.data).toMatchObject({ schedule: "off", next_run_at: null })
      yield* TestClock.adjust(8 * DAY)
      yield* (yield* JobQueue).awaitIdle(CRAWL_SCHEDULE_QUEUE)
      expect(yield* crawlsOf(h, key, agentId)).toHaveLength(2)

      const bad = yield* h.call("PATCH", `/v1/agents/${agentId}/crawls/${first.id}`, { key, body: { schedule: "hourly" } })
      expect([bad.status, bad.body.error.param]).toEqual([400, "schedule"])
      const unknown = yield* h.call("PATCH", `/v1/agents/${agentId}/crawls/crl_unknownunknownunknown`, { key, body: { schedule: "off" } })
      expect([unknown.status, unknown.body.error.code]).toEqual([404, "resource_missing"])
    })
  )
})
