/**
 * Plan caps and idempotent creation under concurrency, through the real server.
 * The cap must be exact on PGlite and PostgreSQL alike: the counter row is
 * incremented conditionally inside the creation's transaction.
 */
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { Harness, testConfig, testServer } from "../support/harness.js"
import { createAgent, createTicket, eventsOf, ticketCount } from "./support.js"

const burst = <A, E, R>(n: number, make: (i: number) => Effect.Effect<A, E, R>) =>
  Effect.all(
    Array.from({ length: n }, (_, i) => make(i)),
    { concurrency: "unbounded" }
  )

layer(testServer())("ticket caps", (it) => {
  it.effect("100 concurrent creations on Free: exactly 20 created, 80 refused with 402 limit_reached", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed({ plan: "free" })
      const agent_id = yield* createAgent(h, ws.secretTest)
      const replies = yield* burst(100, (i) => createTicket(h, ws.secretTest, { agent_id, subject: `t${i}` }))
      const statuses = replies.map((r) => r.status)
      expect(statuses.filter((s) => s === 201)).toHaveLength(20)
      expect(statuses.filter((s) => s === 402)).toHaveLength(80)
      for (const r of replies.filter((r) => r.status === 402)) {
        expect(r.body.error).toMatchObject({ type: "invalid_request", code: "limit_reached" })
      }
      expect(yield* ticketCount(ws.workspace.id)).toBe(20)
      // refused creations wrote no event
      const created = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "ticket.created")
      expect(created).toHaveLength(20)

      // the live environment counts separately
      const liveAgent = yield* createAgent(h, ws.secretLive)
      const live = yield* burst(25, () => createTicket(h, ws.secretLive, { agent_id: liveAgent }))
      expect(live.filter((r) => r.status === 201)).toHaveLength(20)
      expect(live.filter((r) => r.status === 402)).toHaveLength(5)
      expect(yield* ticketCount(ws.workspace.id, "live")).toBe(20)

      // and each workspace has its own count
      const other = yield* h.seed({ plan: "free" })
      const otherAgent = yield* createAgent(h, other.secretTest)
      expect((yield* createTicket(h, other.secretTest, { agent_id: otherAgent })).status).toBe(201)
    })
  )

  it.effect("Pro is unlimited: 30 concurrent creations all pass", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed({ plan: "pro" })
      const agent_id = yield* createAgent(h, ws.secretTest)
      const replies = yield* burst(30, () => createTicket(h, ws.secretTest, { agent_id }))
      expect(replies.map((r) => r.status)).toEqual(Array(30).fill(201))
      expect(yield* ticketCount(ws.workspace.id)).toBe(30)
    })
  )

  it.effect("widget-created tickets count against the same cap", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed({ plan: "free" })
      const agent_id = yield* createAgent(h, ws.secretTest)
      const replies = yield* burst(22, (i) =>
        createTicket(h, i % 2 === 0 ? ws.widgetTest : ws.secretTest, { agent_id })
      )
      expect(replies.filter((r) => r.status === 201)).toHaveLength(20)
      expect(replies.filter((r) => r.status === 402)).toHaveLength(2)
    })
  )

  it.effect("50 concurrent creations with one Idempotency-Key create one ticket; replays return its public_id", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed({ plan: "pro" })
      const agent_id = yield* createAgent(h, ws.secretTest)
      const headers = { "idempotency-key": "ticket-once" }
      const body = { agent_id, body: "only once" }
      const replies = yield* burst(50, () => createTicket(h, ws.secretTest, body, headers))
      expect(yield* ticketCount(ws.workspace.id)).toBe(1)
      const created = replies.filter((r) => r.status === 201)
      const busy = replies.filter((r) => r.status === 409)
      expect(created.length + busy.length).toBe(50)
      expect(created.length).toBeGreaterThanOrEqual(1)
      for (const r of busy) expect(r.body.error.code).toBe("idempotency_request_in_progress")
      const publicIds = new Set(created.map((r) => r.body.data.public_id))
      expect(publicIds.size).toBe(1)
      const [publicId] = [...publicIds]

      const replays = yield* burst(10, () => createTicket(h, ws.secretTest, body, headers))
      for (const r of replays) {
        expect(r.status).toBe(201)
        expect(r.headers.get("idempotent-replayed")).toBe("true")
        expect(r.body.data.public_id).toBe(publicId)
      }
      expect(yield* ticketCount(ws.workspace.id)).toBe(1)
      expect((yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "ticket.created")).toHaveLength(1)
    })
  )
})

// its own server: it moves the clock a month ahead, so the background workers poll monthly
// (each wake-up under TestClock costs real time; the sweeper already sleeps until there is work)
const month = 31 * 24 * 3_600_000
layer(testServer({ emailPollMillis: month, webhookPollMillis: month, ingest: { ...testConfig().ingest, pollMillis: month } }))("ticket caps by month", (it) => {
  it.effect("the cap counts calendar months (UTC): the 1st of next month opens again", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed({ plan: "free" })
      const agent_id = yield* createAgent(h, ws.secretTest)
      const first = yield* burst(21, () => createTicket(h, ws.secretTest, { agent_id }))
      expect(first.filter((r) => r.status === 201)).toHaveLength(20)

      const nowMs = yield* Clock.currentTimeMillis
      const current = new Date(nowMs)
      const nextMonth = Date.UTC(current.getUTCFullYear(), current.getUTCMonth() + 1, 1)
      // one second before midnight UTC of the 1st: still this month
      yield* TestClock.adjust(nextMonth - nowMs - 1000)
      const late = yield* createTicket(h, ws.secretTest, { agent_id })
      expect(late.status).toBe(402)
      yield* TestClock.adjust("1 second")
      const next = yield* burst(21, () => createTicket(h, ws.secretTest, { agent_id }))
      expect(next.filter((r) => r.status === 201)).toHaveLength(20)
      expect(next.filter((r) => r.status === 402)).toHaveLength(1)
      expect(yield* ticketCount(ws.workspace.id)).toBe(40)
    })
  )
})
