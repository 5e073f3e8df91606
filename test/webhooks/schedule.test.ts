/**
 * The retry schedule, degrade and auto-disable, driven by TestClock against a
 * receiver (a test Fetcher) that answers as each test says.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as Fetcher from "../../layers/Fetcher.js"
import { MemoryMailbox } from "../../layers/Mailer.js"
import { eventually } from "../support/eventually.js"
import { dispatcherIdle, Harness, type HarnessShape, testEpoch, testServer } from "../support/harness.js"

/** What the fake receiver answers, per subscription URL; every request is kept. */
const answers = new Map<string, (request: Fetcher.PostRequest) => Fetcher.PostResult | Effect.Effect<Fetcher.PostResult>>()
const received: Array<Fetcher.PostRequest> = []
const receiver = Fetcher.layerTest((request) => {
  received.push(request)
  // a receiver that answers just inside the 10 s deadline, by the Clock
  if (request.url.endsWith("/slow")) return Effect.as(Effect.sleep("9 seconds"), Fetcher.response(200))
  return (answers.get(request.url) ?? (() => Fetcher.response(200)))(request)
})

const failing = () => Fetcher.response(500, "receiver down")
const succeeding = () => Fetcher.response(200, "ok")

let receivers = 0
const subscribe = (
  h: HarnessShape,
  key: string,
  answer: (request: Fetcher.PostRequest) => Fetcher.PostResult | Effect.Effect<Fetcher.PostResult>
) =>
  Effect.gen(function* () {
    const url = `https://receiver-${++receivers}.example/hook`
    answers.set(url, answer)
    const created = yield* h.call("POST", "/v1/webhooks", { key, body: { url, events: ["agent.created"] } })
    expect(created.status).toBe(201)
    return { id: created.body.data.id as string, url, secret: created.body.data.secret as string }
  })

const createAgent = (h: HarnessShape, key: string) =>
  Effect.map(h.call("POST", "/v1/agents", { key, body: { type: "support", name: "Scheduled" } }), (r) => r.body.data)

const deliveriesOf = (h: HarnessShape, key: string, subscriptionId: string) =>
  Effect.map(
    h.call("GET", `/v1/webhooks/${subscriptionId}/deliveries?limit=100`, { key }),
    (r) => r.body.data as Array<any>
  )

const subscriptionOf = (h: HarnessShape, key: string, id: string) =>
  Effect.map(h.call("GET", `/v1/webhooks/${id}`, { key }), (r) => r.body.data)

const minutes = (n: number) => n * 60_000
const hours = (n: number) => n * 3_600_000

/** Offsets of attempts 1..10 from the first: the spec's waits summed, the tenth clamped to 24 h. */
const offsets = [
  0,
  30_000,
  minutes(2.5),
  minutes(12.5),
  minutes(42.5),
  minutes(102.5),
  minutes(222.5),
  minutes(462.5),
  minutes(942.5),
  hours(24)
]

/** Moves the TestClock to `start + offset` (never backwards). */
const advanceTo = (start: number, offset: number) =>
  Effect.flatMap(TestClock.currentTimeMillis, (now) =>
    start + offset > now ? TestClock.adjust(start + offset - now) : Effect.void
  )

layer(testServer({}, { fetcher: receiver }))("webhook schedule (TestClock)", (it) => {
  it.effect("ten attempts at the exact instants, the tenth at +24 h; then failed and degraded; a success clears it", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const sub = yield* subscribe(h, ws.secretTest, failing)
      const start = yield* TestClock.currentTimeMillis
      yield* createAgent(h, ws.secretTest)

      for (const [i, offset] of offsets.entries()) {
        yield* advanceTo(start, offset)
        yield* eventually(deliveriesOf(h, ws.secretTest, sub.id), (ds) => ds[0]?.attempt_count === i + 1, {
          label: `attempt ${i + 1}`
        })
      }
      const [delivery] = yield* deliveriesOf(h, ws.secretTest, sub.id)
      expect(delivery.status).toBe("failed")
      expect(delivery.next_attempt_at).toBeNull()
      const detail = (yield* h.call("GET", `/v1/webhooks/${sub.id}/deliveries/${delivery.id}`, { key: ws.secretTest }))
        .body.data
      expect(detail.attempts.map((a: any) => Date.parse(a.attempted_at) - start)).toEqual(offsets)
      expect(detail.attempts.every((a: any) => a.response_status === 500 && a.error === "HTTP 500")).toBe(true)
      expect(detail.attempts[0].response_body_excerpt).toBe("receiver down")
      expect((yield* subscriptionOf(h, ws.secretTest, sub.id)).degraded).toBe(true)

      // nothing more happens to it
      yield* TestClock.adjust(hours(48))
      yield* dispatcherIdle
      expect((yield* deliveriesOf(h, ws.secretTest, sub.id))[0].attempt_count).toBe(10)

      // the receiver recovers: the next event succeeds and the flag clears
      answers.set(sub.url, succeeding)
      yield* createAgent(h, ws.secretTest)
      yield* eventually(deliveriesOf(h, ws.secretTest, sub.id), (ds) => ds[0]?.status === "succeeded")
      expect((yield* subscriptionOf(h, ws.secretTest, sub.id)).degraded).toBe(false)
      expect(start).toBeGreaterThanOrEqual(testEpoch)
    })
  )

  it.effect("the tenth attempt is made when its claim runs late: the dispatcher still busy at the horizon", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      // the first event fails at once; the later ones hold the receiver 5 s (by the Clock), then succeed
      let first: string | undefined
      const sub = yield* subscribe(h, ws.secretTest, (request) =>
        first === undefined || request.headers["service-event-id"] === first
          ? failing()
          : Effect.as(Effect.sleep("5 seconds"), succeeding())
      )
      const start = yield* TestClock.currentTimeMillis
      yield* createAgent(h, ws.secretTest)
      for (const [i, offset] of offsets.slice(0, 9).entries()) {
        yield* advanceTo(start, offset)
        yield* eventually(deliveriesOf(h, ws.secretTest, sub.id), (ds) => ds[0]?.attempt_count === i + 1, {
          label: `attempt ${i + 1}`
        })
      }
      const [delivery] = yield* deliveriesOf(h, ws.secretTest, sub.id)
      first = delivery.event_id
      expect(delivery.next_attempt_at).toBe(new Date(start + hours(24)).toISOString())

      // a second before the tenth is due, eight deliveries of new events fill the subscription's slots (8) until
      // 4 s past it: the claim of the tenth attempt runs then, 4 s or more after its due time and the horizon
      yield* advanceTo(start, hours(24) - 1000)
      for (let i = 0; i < 8; i++) yield* createAgent(h, ws.secretTest)
      const inFlight = () => received.filter((r) => r.url === sub.url && r.headers["service-event-id"] !== first).length
      yield* eventually(Effect.sync(inFlight), (n) => n === 8, { label: "slots filled" })
      yield* advanceTo(start, hours(24) + 10_000)

      const [last] = yield* eventually(
        Effect.map(deliveriesOf(h, ws.secretTest, sub.id), (ds) => ds.filter((d) => d.id === delivery.id)),
        (ds) => ds[0]?.attempt_count === 10,
        { label: "attempt 10" }
      )
      expect(last.status).toBe("failed")
      expect(last.next_attempt_at).toBeNull()
      const detail = (yield* h.call("GET", `/v1/webhooks/${sub.id}/deliveries/${delivery.id}`, { key: ws.secretTest }))
        .body.data
      expect(detail.attempts).toHaveLength(10)
      expect(Date.parse(detail.attempts[9].attempted_at) - start).toBeGreaterThanOrEqual(hours(24) + 4000)
      expect(received.filter((r) => r.headers["service-event-id"] === first)).toHaveLength(10)
    })
  )

  it.effect("50 consecutive failures spanning 24 h deactivate the subscription and e-mail the owner", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const mailbox = yield* MemoryMailbox
      const sub = yield* subscribe(h, ws.secretTest, failing)
      const start = yield* TestClock.currentTimeMillis
      for (let i = 0; i < 10; i++) yield* createAgent(h, ws.secretTest)
      for (const [i, offset] of offsets.slice(0, 9).entries()) {
        yield* advanceTo(start, offset)
        yield* eventually(
          deliveriesOf(h, ws.secretTest, sub.id),
          (ds) => ds.length === 10 && ds.every((d) => d.attempt_count === i + 1),
          { label: `round ${i + 1}` }
        )
      }
      // 90 failures so far, but within 24 h: still active
      expect((yield* subscriptionOf(h, ws.secretTest, sub.id)).is_active).toBe(true)
      const sentBefore = (yield* mailbox.sent).length
      yield* advanceTo(start, hours(24))
      yield* eventually(subscriptionOf(h, ws.secretTest, sub.id), (s) => s.is_active === false, { label: "deactivated" })
      // the e-mail sender picks up a freshly enqueued message a second later (by the Clock)
      yield* TestClock.adjust("1 second")
      const mails = yield* eventually(mailbox.sent, (sent) => sent.length > sentBefore, { label: "owner e-mail" })
      const mail = mails.at(-1)!
      expect(mail.to).toBe("owner@acme.test")
      expect(mail.text).toContain(sub.id)
    })
  )

  it.effect("inactive: pending deliveries wait and resume on reactivation; events meanwhile are never delivered", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const sql = yield* SqlClient.SqlClient
      const sub = yield* subscribe(h, ws.secretTest, failing)
      yield* createAgent(h, ws.secretTest)
      yield* eventually(deliveriesOf(h, ws.secretTest, sub.id), (ds) => ds[0]?.attempt_count === 1)

      yield* h.call("PATCH", `/v1/webhooks/${sub.id}`, { key: ws.secretTest, body: { is_active: false } })
      yield* createAgent(h, ws.secretTest) // produced while inactive: never stored, never delivered
      yield* TestClock.adjust(minutes(5))
      yield* dispatcherIdle
      const paused = yield* deliveriesOf(h, ws.secretTest, sub.id)
      expect(paused).toHaveLength(1)
      expect(paused[0].attempt_count).toBe(1)
      expect(paused[0].status).toBe("pending")

      answers.set(sub.url, succeeding)
      yield* h.call("PATCH", `/v1/webhooks/${sub.id}`, { key: ws.secretTest, body: { is_active: true } })
      const resumed = yield* eventually(deliveriesOf(h, ws.secretTest, sub.id), (ds) => ds[0]?.status === "succeeded")
      expect(resumed).toHaveLength(1)
      expect(resumed[0].attempt_count).toBe(2)
      const stored = yield* Effect.orDie(
        sql<{ n: string }>`select count(*) as n from webhook_deliveries where subscription_id = ${sub.id}`
      )
      expect(stored[0]!.n).toBe("1")
    })
  )

  it.effect("a delivery that waited past its 24 h horizon is dropped on reactivation, without an attempt", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const sub = yield* subscribe(h, ws.secretTest, failing)
      yield* createAgent(h, ws.secretTest)
      yield* eventually(deliveriesOf(h, ws.secretTest, sub.id), (ds) => ds[0]?.attempt_count === 1)
      yield* h.call("PATCH", `/v1/webhooks/${sub.id}`, { key: ws.secretTest, body: { is_active: false } })
      yield* TestClock.adjust(hours(25))
      answers.set(sub.url, succeeding)
      yield* h.call("PATCH", `/v1/webhooks/${sub.id}`, { key: ws.secretTest, body: { is_active: true } })
      const [dropped] = yield* eventually(deliveriesOf(h, ws.secretTest, sub.id), (ds) => ds[0]?.status === "failed")
      expect(dropped.attempt_count).toBe(1)
      expect(dropped.last_error).toContain("horizon")
      expect((yield* subscriptionOf(h, ws.secretTest, sub.id)).degraded).toBe(true)
      yield* dispatcherIdle
      expect(received.filter((r) => r.url === sub.url)).toHaveLength(1)
    })
  )

  it.effect("a slow receiver holds a few delivery slots, never the others' deliveries", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const stuck = (yield* h.call("POST", "/v1/webhooks", {
        key: ws.secretTest,
        body: { url: "https://slow.example/slow", events: ["agent.created"] }
      })).body.data
      const fast = yield* subscribe(h, ws.secretTest, succeeding)
      for (let i = 0; i < 30; i++) yield* createAgent(h, ws.secretTest)
      yield* eventually(deliveriesOf(h, ws.secretTest, fast.id), (ds) => ds.length === 30 && ds.every((d) => d.status === "succeeded"), {
        label: "fast receiver served"
      })
      // the slow one has at most 8 requests in flight (half the pool); the fast one never waited for them
      expect(received.filter((r) => r.url === "https://slow.example/slow").length).toBeLessThanOrEqual(8)
      expect((yield* deliveriesOf(h, ws.secretTest, stuck.id)).every((d) => d.attempt_count === 0)).toBe(true)
      // and it gets through, eight at a time, as its answers come
      const succeeded = (ds: Array<any>) => ds.filter((d) => d.status === "succeeded").length
      let done = 0
      for (let round = 0; round < 12 && done < 30; round++) {
        yield* TestClock.adjust("9 seconds")
        done = succeeded(yield* deliveriesOf(h, ws.secretTest, stuck.id))
      }
      yield* eventually(deliveriesOf(h, ws.secretTest, stuck.id), (ds) => succeeded(ds) === 30, { label: "slow receiver served" })
    })
  )

  it.effect("a rotated secret keeps signing beside the new one for 24 h, then stops", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const sub = yield* subscribe(h, ws.secretTest, succeeding)
      const rotated = yield* h.call("POST", `/v1/webhooks/${sub.id}/rotate_secret`, { key: ws.secretTest })
      expect(rotated.body.data.secret).toMatch(/^whsec_/)
      expect(rotated.body.data.secret).not.toBe(sub.secret)
      const signatureOf = (url: string) => received.filter((r) => r.url === url).at(-1)!.headers["service-signature"]!
      yield* createAgent(h, ws.secretTest)
      yield* eventually(deliveriesOf(h, ws.secretTest, sub.id), (ds) => ds[0]?.status === "succeeded")
      expect(signatureOf(sub.url).match(/v1=/g)).toHaveLength(2)
      yield* TestClock.adjust(hours(24) + 1000)
      yield* createAgent(h, ws.secretTest)
      yield* eventually(deliveriesOf(h, ws.secretTest, sub.id), (ds) => ds.length === 2 && ds[0]?.status === "succeeded")
      expect(signatureOf(sub.url).match(/v1=/g)).toHaveLength(1)
    })
  )
})
