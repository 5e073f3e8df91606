/**
 * Usage and credits: `GET /v1/usage`, reservations exact under a burst, credits
 * on live keys only, releases, and calendar-month periods under TestClock.
 */
import { expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import type { Tenant } from "../../schema/Tenant.js"
import { Usage } from "../../src/usage/Usage.js"
import { Harness, type SeededWorkspace, testEpoch, testServer } from "../support/harness.js"
import { createAgent, createTicket } from "../tickets/support.js"

const tenantOf = (ws: SeededWorkspace, environment: "test" | "live"): Tenant => ({
  workspaceId: ws.workspace.id,
  environment
})

const burst = <A, E, R>(n: number, make: (i: number) => Effect.Effect<A, E, R>) =>
  Effect.all(
    Array.from({ length: n }, (_, i) => make(i)),
    { concurrency: "unbounded" }
  )

layer(testServer())("usage", (it) => {

  it.effect("reports the plan, the month, tickets and replies against their caps, and credits", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const usage = yield* Usage
      const ws = yield* h.seed({ plan: "free" })
      const fresh = yield* h.call("GET", "/v1/usage", { key: ws.secretTest })
      expect(fresh.status).toBe(200)
      expect(fresh.body.data).toEqual({
        object: "usage",
        plan: "free",
        livemode: false,
        period: { start: "2026-11-01T00:00:00.000Z", end: "2026-12-01T00:00:00.000Z" },
        tickets: { used: 0, cap: 20 },
        replies: { used: 0, cap: 100 },
        credits: { consumed: 0 }
      })

      const agent_id = yield* createAgent(h, ws.secretTest)
      for (let i = 0; i < 2; i++) expect((yield* createTicket(h, ws.secretTest, { agent_id })).status).toBe(201)
      for (let i = 0; i < 3; i++) yield* usage.reserveReply(tenantOf(ws, "live"))
      yield* usage.reserveReply(tenantOf(ws, "test"))

      const test = yield* h.call("GET", "/v1/usage", { key: ws.secretTest })
      expect(test.body.data).toMatchObject({ tickets: { used: 2, cap: 20 }, replies: { used: 1, cap: 100 }, credits: { consumed: 0 } })
      const live = yield* h.call("GET", "/v1/usage", { key: ws.secretLive })
      expect(live.body.data).toMatchObject({
        livemode: true,
        tickets: { used: 0, cap: 20 },
        replies: { used: 3, cap: 100 },
        credits: { consumed: 3 }
      })

      const pro = yield* h.seed({ plan: "pro" })
      expect((yield* h.call("GET", "/v1/usage", { key: pro.secretTest })).body.data).toMatchObject({
        plan: "pro",
        tickets: { used: 0, cap: null },
        replies: { used: 0, cap: null }
      })
      const starter = yield* h.seed({ plan: "starter" })
      expect((yield* h.call("GET", "/v1/usage", { key: starter.secretLive })).body.data).toMatchObject({
        tickets: { cap: 200 },
        replies: { cap: 2000 }
      })
    })
  )

  it.effect("130 concurrent reservations at the Free cap of 100: exactly 100 pass, 30 are 402 limit_reached", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const usage = yield* Usage
      const ws = yield* h.seed({ plan: "free" })
      const results = yield* burst(130, () => Effect.either(usage.reserveReply(tenantOf(ws, "live"))))
      const passed = results.filter(Either.isRight)
      const refused = results.filter(Either.isLeft)
      expect(passed).toHaveLength(100)
      expect(refused).toHaveLength(30)
      for (const r of refused) expect(r.left).toMatchObject({ _tag: "LimitReached" })
      const summary = yield* usage.summary(tenantOf(ws, "live"))
      expect(summary.replies).toEqual({ used: 100, cap: 100 })
      // refused reservations consumed nothing
      expect(summary.credits.consumed).toBe(100)

      // a release frees one place, exactly one
      yield* usage.releaseReply(tenantOf(ws, "live"), passed[0]!.right)
      const again = yield* burst(5, () => Effect.either(usage.reserveReply(tenantOf(ws, "live"))))
      expect(again.filter(Either.isRight)).toHaveLength(1)
      expect((yield* usage.summary(tenantOf(ws, "live"))).replies.used).toBe(100)

      // the sandbox has its own count
      expect(Either.isRight(yield* Effect.either(usage.reserveReply(tenantOf(ws, "test"))))).toBe(true)
    })
  )

  it.effect("credits: 10 live replies consume 10, 10 sandbox replies consume none; pro is never capped", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const usage = yield* Usage
      const ws = yield* h.seed({ plan: "pro" })
      const live = yield* burst(10, () => usage.reserveReply(tenantOf(ws, "live")))
      const sandbox = yield* burst(10, () => usage.reserveReply(tenantOf(ws, "test")))
      expect(live.map((r) => r.credits)).toEqual(Array(10).fill(1))
      expect(sandbox.map((r) => r.credits)).toEqual(Array(10).fill(0))
      expect(yield* usage.summary(tenantOf(ws, "live"))).toMatchObject({ replies: { used: 10, cap: null }, credits: { consumed: 10 } })
      expect(yield* usage.summary(tenantOf(ws, "test"))).toMatchObject({ replies: { used: 10, cap: null }, credits: { consumed: 0 } })

      // releasing a live reply gives its credit back; a sandbox release leaves credits alone
      yield* usage.releaseReply(tenantOf(ws, "live"), live[0]!)
      yield* usage.releaseReply(tenantOf(ws, "test"), sandbox[0]!)
      expect(yield* usage.summary(tenantOf(ws, "live"))).toMatchObject({ replies: { used: 9 }, credits: { consumed: 9 } })
      expect(yield* usage.summary(tenantOf(ws, "test"))).toMatchObject({ replies: { used: 9 }, credits: { consumed: 0 } })

      // many more than the Free cap: pro has none
      const many = yield* burst(120, () => Effect.either(usage.reserveReply(tenantOf(ws, "test"))))
      expect(many.filter(Either.isRight)).toHaveLength(120)
    })
  )

  it.effect("withReply counts a completed reply, and gives back one that fails or is interrupted", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const usage = yield* Usage
      const ws = yield* h.seed({ plan: "starter" })
      const tenant = tenantOf(ws, "live")
      const done = yield* usage.withReply(tenant, (r) => Effect.succeed(`reply costing ${r.credits}`))
      expect(done).toBe("reply costing 1")
      const failed = yield* Effect.either(usage.withReply(tenant, () => Effect.fail("model down" as const)))
      expect(failed).toEqual(Either.left("model down"))

      // a reply interrupted mid-way (the client went away)
      const started = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(
        usage.withReply(tenant, () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never))
      )
      yield* Deferred.await(started)
      expect((yield* usage.summary(tenant)).replies.used).toBe(2)
      yield* Fiber.interrupt(fiber)

      expect(yield* usage.summary(tenant)).toMatchObject({ replies: { used: 1, cap: 2000 }, credits: { consumed: 1 } })
    })
  )

  it.effect("the typed client reads usage and refuses a key without read:usage with KeyScopeMismatch", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed({ plan: "starter" })
      const client = yield* h.client(ws.secretLive)
      const { data } = yield* client.usage.retrieve()
      expect(data).toMatchObject({ object: "usage", plan: "starter", livemode: true, replies: { used: 0, cap: 2000 } })
      const narrow = yield* ws.key({ kind: "secret", scopes: ["read:leads"] })
      const refused = yield* Effect.flip(Effect.flatMap(h.client(narrow.secret), (c) => c.usage.retrieve()))
      expect(refused).toMatchObject({ _tag: "KeyScopeMismatch" })
    })
  )
})

// its own server: it moves the clock a month ahead, so the background workers poll monthly
const month = 31 * 24 * 3_600_000
layer(testServer({ emailPollMillis: month, webhookPollMillis: month }))("usage by month", (it) => {
  it.effect("periods are calendar months (UTC): the 1st opens a fresh count; a release returns to its own month", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const usage = yield* Usage
      const ws = yield* h.seed({ plan: "free" })
      const tenant = tenantOf(ws, "live")
      expect(yield* Clock.currentTimeMillis).toBe(testEpoch)
      for (let i = 0; i < 99; i++) yield* usage.reserveReply(tenant)

      // one second before midnight UTC of December 1st: still November
      const nowMs = yield* Clock.currentTimeMillis
      const december = Date.UTC(2026, 11, 1)
      yield* TestClock.adjust(december - nowMs - 1000)
      const last = yield* usage.reserveReply(tenant)
      expect(last.month).toBe("2026-11")
      expect(Either.isLeft(yield* Effect.either(usage.reserveReply(tenant)))).toBe(true)
      const november = yield* h.call("GET", "/v1/usage", { key: ws.secretLive })
      expect(november.body.data).toMatchObject({
        period: { start: "2026-11-01T00:00:00.000Z", end: "2026-12-01T00:00:00.000Z" },
        replies: { used: 100 },
        credits: { consumed: 100 }
      })

      yield* TestClock.adjust("1 second")
      const fresh = yield* h.call("GET", "/v1/usage", { key: ws.secretLive })
      expect(fresh.body.data).toMatchObject({
        period: { start: "2026-12-01T00:00:00.000Z", end: "2027-01-01T00:00:00.000Z" },
        replies: { used: 0, cap: 100 },
        credits: { consumed: 0 }
      })
      const first = yield* usage.reserveReply(tenant)
      expect(first.month).toBe("2026-12")

      // November's last reply did not complete: its release lowers November, not December
      yield* usage.releaseReply(tenant, last)
      expect((yield* usage.summary(tenant)).replies.used).toBe(1)
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ month: string; replies: number; credits: number }>`
        select month, replies, credits from reply_usage where workspace_id = ${ws.workspace.id} order by month`.pipe(
        Effect.orDie
      )
      expect(rows.map((r) => [r.month, r.replies, r.credits])).toEqual([
        ["2026-11", 99, 99],
        ["2026-12", 1, 1]
      ])
    })
  )
})
