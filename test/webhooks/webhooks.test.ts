/**
 * Webhooks through the real server and a real receiver on 127.0.0.1, with the
 * live clock: signatures checked by Stripe's own SDK and by ours, the delivery
 * log, manual retry, revocation, validation and SSRF refusals.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import Stripe from "stripe"
import { ResourceMissing, SubscriptionInactive, UnknownEventType, UrlNotAllowed } from "../../schema/Errors.js"
import type { DeliveryStatus, WebhookId } from "../../schema/Webhooks.js"
import { type Client, verifyWebhook, WebhookVerificationError } from "../../src/sdk/index.js"
import { Fetcher } from "../../layers/Fetcher.js"
import { maxAttempts } from "../../src/webhooks/Schedule.js"
import { signatureHeader } from "../../src/webhooks/Signature.js"
import { eventually } from "../support/eventually.js"
import { expectFailure } from "../support/expect.js"
import { dispatcherIdle, Harness, testServer } from "../support/harness.js"
import { loopbackServer } from "../support/loopback.js"

/** A receiver whose answer depends on the path: `/ok`, `/fail`, `/moved`, `/hang`. */
const startReceiver = Effect.map(
  loopbackServer(({ path }, res) => {
    if (path === "/hang") return // never answers: the dispatcher's 10 s deadline must end it
    if (path === "/fail") return void res.writeHead(503).end("busy")
    if (path === "/moved") return void res.writeHead(301, { location: "/ok" }).end()
    res.writeHead(200).end("thanks")
  }),
  (server) => ({ ...server, url: server.origin })
)

const stripe = new Stripe("sk_test_not_used_for_verification")

const subscribe = (api: Client, url: string, events: Array<string> = ["agent.created"]) =>
  Effect.map(api.webhooks.create({ payload: { url, events } }), (r) => r.data)

const createAgent = (api: Client, name = "Hooked") =>
  Effect.map(api.agents.create({ payload: { type: "support", name } }), (r) => r.data)

const deliveriesOf = (api: Client, id: WebhookId, status?: DeliveryStatus) =>
  Effect.map(
    api.webhooks.deliveries({ path: { id }, urlParams: status === undefined ? {} : { status } }),
    (r) => r.data
  )

/** A fresh workspace whose sandbox subscription points at `path` of a new receiver, and one agent created. */
const firstDeliveryTo = (path: string) =>
  Effect.gen(function* () {
    const h = yield* Harness
    const receiver = yield* startReceiver
    const ws = yield* h.seed()
    const api = yield* h.client(ws.secretTest)
    const sub = yield* subscribe(api, `${receiver.url}${path}`)
    yield* createAgent(api)
    const deliveries = deliveriesOf(api, sub.id)
    return { h, api, receiver, ws, sub, deliveries }
  })

layer(testServer(), { excludeTestServices: true })("webhooks (real receiver)", (it) => {

  it.scoped("every subscribed event arrives signed; Stripe's SDK and verifyWebhook both accept it", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const receiver = yield* startReceiver
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const created = yield* subscribe(api, `${receiver.url}/ok`, ["agent.created", "agent.deleted"])
      expect(created).toMatchObject({ object: "webhook_subscription", is_active: true, degraded: false })
      const secret = created.secret
      expect(secret).toMatch(/^whsec_[A-Za-z0-9]{32}$/)
      // the secret is shown once (raw: the client's decoding would drop the field anyway)
      const read = yield* h.call("GET", `/v1/webhooks/${created.id}`, { key: ws.secretTest })
      expect(read.status).toBe(200)
      expect(read.body.data.secret).toBeUndefined()

      const agent = yield* createAgent(api)
      yield* api.agents.update({ path: { id: agent.id }, payload: { name: "Not subscribed" } })
      yield* api.agents.delete({ path: { id: agent.id } })
      yield* eventually(Effect.sync(() => receiver.received.length), (n) => n >= 2)

      const types = receiver.received.map((r) => r.headers["service-event-type"])
      expect(types).toEqual(["agent.created", "agent.deleted"])
      for (const delivery of receiver.received) {
        const header = delivery.headers["service-signature"] as string
        expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
        const viaStripe = stripe.webhooks.constructEvent(delivery.body, header, secret)
        const viaSdk = verifyWebhook(delivery.body, header, secret) as any
        expect(viaStripe.id).toBe(delivery.headers["service-event-id"])
        expect(viaSdk.id).toBe(delivery.headers["service-event-id"])
        expect(viaSdk).toMatchObject({ object: "event", api_version: "v1", livemode: false, workspace_id: ws.workspace.id })
        expect(delivery.headers["service-delivery-id"]).toMatch(/^whd_/)
        expect(delivery.headers["content-type"]).toBe("application/json")
        expect(delivery.headers["user-agent"]).toMatch(/^AssistantPlatform-Webhooks\//)
      }
      expect(JSON.parse(receiver.received[0]!.body).data.agent.id).toBe(agent.id)

      // one altered byte, another secret, or a stale timestamp: refused by both verifiers
      const { body, headers } = receiver.received[0]!
      const header = headers["service-signature"] as string
      const altered = body.replace(/"Hooked"/, '"Hooker"')
      expect(altered).not.toBe(body)
      expect(() => stripe.webhooks.constructEvent(altered, header, secret)).toThrow()
      expect(() => verifyWebhook(altered, header, secret)).toThrow(WebhookVerificationError)
      expect(() => verifyWebhook(body, header, "whsec_someoneelse")).toThrow(WebhookVerificationError)
      const stale = Math.floor(Date.now() / 1000) - 301
      const staleHeader = signatureHeader([secret], stale, body)
      expect(() => stripe.webhooks.constructEvent(body, staleHeader, secret)).toThrow()
      expect(() => verifyWebhook(body, staleHeader, secret)).toThrow(WebhookVerificationError)
      expect(() => verifyWebhook(body, undefined, secret)).toThrow(WebhookVerificationError)
    })
  )

  it.scoped("the delivery log shows every attempt; a manual retry delivers again, now", () =>
    Effect.gen(function* () {
      const { h, api, receiver, ws, sub, deliveries } = yield* firstDeliveryTo("/fail")
      const [failed] = yield* eventually(deliveries, (ds) => ds[0]?.attempt_count === 1)
      expect(failed).toMatchObject({ status: "pending", response_status: 503, last_error: "HTTP 503" })
      // a null on either side is NaN, which fails the check
      expect(Date.parse(failed!.next_attempt_at ?? "") - Date.parse(failed!.last_attempted_at ?? "")).toBe(30_000)

      // filter by status
      expect(yield* deliveriesOf(api, sub.id, "succeeded")).toEqual([])
      expect((yield* deliveriesOf(api, sub.id, "pending")).map((d) => d.id)).toEqual([failed!.id])
      // raw: the client cannot send an unknown status
      const badStatus = yield* h.call("GET", `/v1/webhooks/${sub.id}/deliveries?status=lost`, { key: ws.secretTest })
      expect(badStatus.body.error).toMatchObject({ code: "parameter_invalid", param: "status" })

      // point the subscription at a working path and retry by hand (the client checks the declared 202)
      yield* api.webhooks.update({ path: { id: sub.id }, payload: { url: `${receiver.url}/ok` } })
      yield* api.webhooks.retry({ path: { id: sub.id, delivery_id: failed!.id } })
      yield* eventually(deliveriesOf(api, sub.id), (ds) => ds[0]?.status === "succeeded")
      const detail = (yield* api.webhooks.delivery({ path: { id: sub.id, delivery_id: failed!.id } })).data
      expect(detail.attempt_count).toBe(2)
      expect(detail.attempts).toHaveLength(2)
      expect(detail.attempts[0]).toMatchObject({ response_status: 503, response_body_excerpt: "busy", error: "HTTP 503" })
      expect(detail.attempts[1]).toMatchObject({ response_status: 200, response_body_excerpt: "thanks", error: null })
      expect(detail.attempts[1]!.duration_ms).toBeGreaterThanOrEqual(0)
      const ids = receiver.received.map((r) => r.headers["service-event-id"])
      expect(new Set(ids).size).toBe(1) // the same event both times
    })
  )

  it.scoped("webhook.test goes to that subscription only", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const receiver = yield* startReceiver
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const one = yield* subscribe(api, `${receiver.url}/ok`)
      yield* subscribe(api, `${receiver.url}/ok`, ["webhook.test"])
      // the client checks the declared 202
      const test = yield* api.webhooks.test({ path: { id: one.id } })
      expect(test.data.delivery_id).toMatch(/^whd_/)
      yield* eventually(Effect.sync(() => receiver.received.length), (n) => n === 1)
      expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ type: "webhook.test", data: { message: expect.any(String) } })
    })
  )

  it.scoped("webhook.test on an inactive subscription is refused (409 subscription_inactive); nothing is scheduled", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const receiver = yield* startReceiver
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const sub = yield* subscribe(api, `${receiver.url}/ok`)
      yield* api.webhooks.update({ path: { id: sub.id }, payload: { is_active: false } })

      const refused = yield* h.call("POST", `/v1/webhooks/${sub.id}/test`, { key: ws.secretTest })
      expect(refused.status).toBe(409)
      expect(refused.body.error).toMatchObject({ type: "invalid_request", code: "subscription_inactive", param: "id" })
      expect(refused.body.error.doc_url).toContain("#subscription_inactive")
      yield* expectFailure(api.webhooks.test({ path: { id: sub.id } }), SubscriptionInactive)
      expect(yield* deliveriesOf(api, sub.id)).toEqual([])

      // reactivated, it schedules one again
      yield* api.webhooks.update({ path: { id: sub.id }, payload: { is_active: true } })
      const test = yield* api.webhooks.test({ path: { id: sub.id } })
      yield* eventually(Effect.sync(() => receiver.received.length), (n) => n === 1)
      expect(receiver.received[0]!.headers["service-delivery-id"]).toBe(test.data.delivery_id)
      expect((yield* deliveriesOf(api, sub.id)).map((d) => d.id)).toEqual([test.data.delivery_id])
    })
  )

  it.scoped("a 301 is a failure (redirects are not followed)", () =>
    Effect.gen(function* () {
      const { receiver, deliveries } = yield* firstDeliveryTo("/moved")
      const [d] = yield* eventually(deliveries, (ds) => ds[0]?.attempt_count === 1)
      expect(d).toMatchObject({ status: "pending", response_status: 301 })
      expect(d!.last_error).toContain("redirect")
      expect(receiver.received.filter((r) => r.path === "/ok")).toEqual([])
    })
  )

  it.scoped("DELETE revokes: pending deliveries are cancelled and nothing more is sent", () =>
    Effect.gen(function* () {
      const { h, api, receiver, ws, sub, deliveries } = yield* firstDeliveryTo("/fail")
      yield* eventually(deliveries, (ds) => ds[0]?.attempt_count === 1)
      // raw: the exact body, which the client's decoding (dropping unknown fields) would not check
      const deleted = yield* h.call("DELETE", `/v1/webhooks/${sub.id}`, { key: ws.secretTest })
      expect(deleted.status).toBe(200)
      expect(deleted.body.data).toEqual({ id: sub.id, object: "webhook_subscription", deleted: true })
      yield* expectFailure(api.webhooks.retrieve({ path: { id: sub.id } }), ResourceMissing)
      expect((yield* api.webhooks.list({ urlParams: {} })).data).toEqual([])
      yield* createAgent(api)
      yield* dispatcherIdle
      expect(receiver.received).toHaveLength(1)
    })
  )

  it.effect("validation: known event types only, a non-empty list, a URL", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const cases: Array<[unknown, string, string]> = [
        [{ url: "https://example.com/h", events: ["agent.created", "agent.exploded"] }, "unknown_event_type", "events[1]"],
        [{ url: "https://example.com/h", events: [] }, "parameter_invalid", "events"],
        [{ url: "https://example.com/h" }, "parameter_missing", "events"],
        [{ url: "ftp://example.com/h", events: ["agent.created"] }, "parameter_invalid", "url"],
        [{ url: "not a url", events: ["agent.created"] }, "parameter_invalid", "url"]
      ]
      for (const [body, code, param] of cases) {
        const r = yield* h.call("POST", "/v1/webhooks", { key: ws.secretTest, body })
        expect(r.status, JSON.stringify(body)).toBe(400)
        expect(r.body.error, JSON.stringify(body)).toMatchObject({ code, param })
      }
      const api = yield* h.client(ws.secretTest)
      const sub = yield* subscribe(api, "https://example.com/h")
      const patched = yield* expectFailure(
        api.webhooks.update({ path: { id: sub.id }, payload: { events: ["nope"] } }),
        UnknownEventType
      )
      expect(patched.param).toBe("events[0]")
      // live receivers must be HTTPS
      const live = yield* expectFailure(
        subscribe(yield* h.client(ws.secretLive), "http://example.com/h"),
        UrlNotAllowed
      )
      expect(live.param).toBe("url")
    })
  )
})

layer(testServer({ allowPrivateUrls: false }), { excludeTestServices: true })("webhooks: SSRF", (it) => {
  it.effect("loopback, private, link-local and IPv6 equivalents are refused", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      for (const url of [
        "https://127.0.0.1/hook",
        "https://localhost/hook",
        "https://10.1.2.3/hook",
        "https://192.168.0.10/hook",
        "https://172.16.5.4/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://[fe80::1]/hook",
        "https://[fd00::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://0x7f.1/hook"
      ]) {
        const refused = yield* expectFailure(subscribe(api, url), UrlNotAllowed)
        expect(refused.param, url).toBe("url")
      }
    })
  )
})

// the response deadline by the Clock: a receiver that never answers costs no real 10 s
layer(testServer())("webhooks (response deadline, TestClock)", (it) => {
  it.scoped("a receiver that hangs past the 10 s deadline is a failure", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const receiver = yield* startReceiver
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const sub = yield* subscribe(api, `${receiver.url}/hang`)
      yield* createAgent(api)
      yield* eventually(Effect.sync(() => receiver.received.length), (n) => n === 1)
      const pending = yield* deliveriesOf(api, sub.id)
      expect(pending[0]).toMatchObject({ status: "pending", attempt_count: 0 })
      yield* TestClock.adjust("10 seconds")
      const [d] = yield* eventually(deliveriesOf(api, sub.id), (ds) => ds[0]?.attempt_count === 1)
      expect(d!.status).toBe("pending")
      expect(d!.last_error).toContain("timeout")
      const detail = (yield* api.webhooks.delivery({ path: { id: sub.id, delivery_id: d!.id } })).data
      expect(detail.attempts[0]!.duration_ms).toBe(10_000)
    })
  )
})

/** Every webhook POST dies inside the service (a defect of ours, not the receiver's answer). */
const dyingFetcher = Layer.succeed(Fetcher, {
  post: () => Effect.die(new Error("the socket library threw")),
  get: () => Effect.die(new Error("not used"))
})

layer(testServer({}, { fetcher: dyingFetcher }))("webhooks (sending dies, TestClock)", (it) => {
  it.scoped("a delivery whose every attempt dies ends failed with a readable error, not pending for ever", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const api = yield* h.client(ws.secretTest)
      const sub = yield* subscribe(api, "https://receiver.example/hooks")
      yield* createAgent(api)
      // each dying attempt is retried after the delivery's lease; the queue gives the job up at its bound
      for (let attempt = 0; attempt < 2 * maxAttempts; attempt++) {
        yield* dispatcherIdle
        yield* TestClock.adjust("30 seconds")
      }
      const [d] = yield* eventually(deliveriesOf(api, sub.id), (ds) => ds[0]?.status !== "pending")
      expect(d).toMatchObject({ status: "failed", next_attempt_at: null })
      expect(d!.last_error).toMatch(/^not delivered: an internal error occurred/)
      expect(d!.last_error).not.toContain("socket library")
      // the receiver never answered: the subscription is not counted as failing
      const subscription = (yield* api.webhooks.retrieve({ path: { id: sub.id } })).data
      expect(subscription).toMatchObject({ is_active: true, degraded: false })
    })
  )
})
