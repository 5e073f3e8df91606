import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import jwt from "jsonwebtoken"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { CurrentRequestId } from "../../schema/Envelope.js"
import * as Logging from "../../src/Logging.js"
import { dispatcherIdle, Harness, testServer } from "../support/harness.js"

/** Log lines the service wrote while these tests ran. */
const captured: Array<string> = []
const capture = Logging.layerJson({ level: "info", write: (line) => captured.push(line) })

interface Sample {
  readonly name: string
  readonly labels: Record<string, string>
  readonly value: number
}

/**
 * A strict reader of the Prometheus text format 0.0.4: every line is a `# HELP`,
 * a `# TYPE` (before its family's samples, once) or a sample
 * `name{label="value",...} number`; anything else fails the test.
 */
const parseExposition = (text: string) => {
  expect(text.endsWith("\n")).toBe(true)
  const types = new Map<string, string>()
  const samples: Array<Sample> = []
  const name = "[a-zA-Z_:][a-zA-Z0-9_:]*"
  const sample = new RegExp(`^(${name})(?:\\{(.*)\\})? (-?[0-9.e+-]+|\\+Inf|-Inf|NaN)$`)
  const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/
  for (const line of text.slice(0, -1).split("\n")) {
    const help = new RegExp(`^# HELP (${name}) .*$`).exec(line)
    if (help) continue
    const type = new RegExp(`^# TYPE (${name}) (counter|gauge|histogram|summary|untyped)$`).exec(line)
    if (type) {
      expect(types.has(type[1]!), `TYPE once for ${type[1]}`).toBe(false)
      types.set(type[1]!, type[2]!)
      continue
    }
    const m = sample.exec(line)
    expect(m, `a sample line: ${line}`).not.toBeNull()
    const [, metric, labelText = "", value] = m!
    const family = metric!.replace(/_(bucket|sum|count)$/, "")
    expect(types.has(metric!) || types.get(family) === "histogram", `TYPE before ${metric}`).toBe(true)
    const labels: Record<string, string> = {}
    let rest = labelText
    while (rest !== "") {
      const l = label.exec(rest)
      expect(l, `labels of ${line}`).not.toBeNull()
      labels[l![1]!] = l![2]!
      rest = rest.slice(l![0].length)
    }
    samples.push({ name: metric!, labels, value: Number(value === "+Inf" ? Infinity : value) })
  }
  const find = (metric: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === metric && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  const value = (metric: string, labels: Record<string, string> = {}) =>
    find(metric, labels).reduce((sum, s) => sum + s.value, 0)
  return { types, samples, find, value }
}

layer(testServer().pipe(Layer.provide(capture)))("logs and metrics", (it) => {
  it.effect("one JSON line per request with its id, route template, status and duration", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const created = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Logged" } })
      expect(created.status).toBe(201)
      const agentId: string = created.body.data.id
      const read = yield* h.call("GET", `/v1/agents/${agentId}`, { key: ws.secretTest })
      expect(read.status).toBe(200)
      const missing = yield* h.call("GET", "/v1/agents/agt_doesnotexist", { key: ws.secretTest })
      expect(missing.status).toBe(404)

      const lines = captured.map((line) => JSON.parse(line) as Record<string, unknown>)
      for (const line of lines) {
        expect(typeof line.time).toBe("string")
        expect(Number.isNaN(Date.parse(line.time as string))).toBe(false)
        expect(["trace", "debug", "info", "warn", "warning", "error", "fatal"]).toContain(line.level)
        expect(typeof line.msg).toBe("string")
      }
      const lineOf = (requestId: string | null) => lines.find((l) => l.msg === "request" && l.request_id === requestId)
      expect(lineOf(read.headers.get("request-id"))).toMatchObject({
        level: "info",
        method: "GET",
        route: "/v1/agents/{id}",
        status: 200
      })
      expect(typeof lineOf(read.headers.get("request-id"))!.duration_ms).toBe("number")
      expect(lineOf(missing.headers.get("request-id"))).toMatchObject({ route: "/v1/agents/{id}", status: 404 })
      expect(lineOf(created.headers.get("request-id"))).toMatchObject({ method: "POST", route: "/v1/agents", status: 201 })
      // the raw path (with the agent's id) is not what is logged
      expect(captured.join("\n")).not.toContain(`/v1/agents/${agentId}`)
    })
  )

  it.effect("keys, tokens, e-mail addresses and Authorization headers never reach the log", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const email = "ada.lovelace@example.org"
      const identityToken = jwt.sign({ sub: "user-42", email }, "not-the-identity-secret", { expiresIn: 600 })
      const wrongKey = "sk_test_ThisKeyDoesNotExist0123456789abcdef"
      const agent = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Redaction" } })
      const agentId: string = agent.body.data.id

      expect((yield* h.call("GET", "/v1/agents", { key: ws.secretTest })).status).toBe(200)
      expect((yield* h.call("GET", "/v1/agents", { key: wrongKey })).status).toBe(401)
      expect((yield* h.call("GET", "/v1/agents", { headers: { "x-api-key": ws.secretLive } })).status).toBe(200)
      const lead = yield* h.call("POST", "/v1/leads", { key: ws.secretTest, body: { agent_id: agentId, email, name: "Ada" } })
      expect(lead.status).toBe(201)
      // a malformed body that quotes the e-mail back in its error
      yield* h.call("POST", "/v1/leads", { key: ws.secretTest, body: { agent_id: agentId, email: `${email}@@` } })
      const submitted = yield* h.call("POST", "/api/forms/frm_doesnotexist/submit", {
        headers: { "service-api-key": ws.formsTest },
        body: { fields: { email }, identity_token: identityToken }
      })
      expect(submitted.status).toBeGreaterThanOrEqual(400)
      expect((yield* h.call("GET", "/healthz", { headers: { authorization: `Bearer ${ws.secretTest}` } })).status).toBe(200)

      const log = captured.join("\n")
      expect(log).toContain('"msg":"request"')
      for (const secret of [ws.secretTest, ws.secretLive, ws.formsTest, wrongKey, identityToken, email]) {
        expect(log).not.toContain(secret)
      }
      // nor any part long enough to be used: the secret half of a key, the signature of the token
      for (const secret of [ws.secretTest, ws.secretLive, ws.formsTest, wrongKey]) {
        expect(log).not.toContain(secret.slice(-16))
      }
      expect(log).not.toContain(identityToken.split(".")[2]!)
      expect(log.toLowerCase()).not.toContain("authorization")
    })
  )

  it.effect("redact masks what reaches a message anyway", () =>
    Effect.sync(() => {
      const line = Logging.redact(
        'failed for sk_live_abcDEF123 and widget_pk_test_XyZ987 pk_test_q1 whsec_s3cr3t idsec_t0k3n ' +
          "Authorization: Bearer opaque-token-value eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl bob+tag@mail.example.co.uk"
      )
      expect(line).toBe(
        "failed for sk_live_[redacted] and widget_pk_test_[redacted] pk_test_[redacted] whsec_[redacted] idsec_[redacted] " +
          "Authorization: Bearer [redacted] [redacted-jwt] [redacted-email]"
      )
    })
  )

  it.effect("a line logged while a request is served carries its request_id, also from a forked fiber", () =>
    Effect.gen(function* () {
      const lines: Array<Record<string, unknown>> = []
      const logger = Logging.layerJson({ level: "info", write: (line) => lines.push(JSON.parse(line)) })
      yield* Effect.gen(function* () {
        yield* Effect.logInfo("outside")
        yield* FiberRef.set(CurrentRequestId, "req_0123456789abcdefABCDEFGH")
        yield* Effect.logWarning("inside")
        yield* Effect.fork(Effect.logInfo("forked")).pipe(Effect.flatMap(Fiber.join))
      }).pipe(Effect.provide(logger))
      expect(lines.map((l) => [l["msg"], l["request_id"]])).toEqual([
        ["outside", undefined],
        ["inside", "req_0123456789abcdefABCDEFGH"],
        ["forked", "req_0123456789abcdefABCDEFGH"]
      ])
    })
  )

  it.scoped("webhook_deliveries_total counts attempts by outcome; nothing due once the dispatcher is idle", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const receiver = yield* Effect.acquireRelease(
        Effect.async<{ readonly url: string; readonly close: () => void }>((resume) => {
          const server = createServer((req, res) => {
            req.resume()
            req.on("end", () => res.writeHead(req.url === "/ok" ? 200 : 503).end())
          })
          server.listen(0, "127.0.0.1", () =>
            resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() }))
          )
        }),
        (r) => Effect.sync(r.close)
      )
      const scrape = Effect.map(h.call("GET", "/metrics"), (r) => parseExposition(r.text))
      const before = yield* scrape
      for (const path of ["/ok", "/fail"]) {
        const sub = yield* h.call("POST", "/v1/webhooks", { key: ws.secretTest, body: { url: `${receiver.url}${path}`, events: ["agent.created"] } })
        expect(sub.status).toBe(201)
      }
      expect((yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Hooked" } })).status).toBe(201)
      yield* dispatcherIdle
      const after = yield* scrape
      const delta = (outcome: string) =>
        after.value("webhook_deliveries_total", { outcome }) - before.value("webhook_deliveries_total", { outcome })
      expect(delta("succeeded")).toBe(1)
      expect(delta("retrying")).toBe(1)
      expect(after.types.get("webhook_deliveries_total")).toBe("counter")
      // the failed one waits for its retry, not due yet: the dispatcher left nothing due behind
      expect(after.value("webhook_deliveries_due")).toBe(0)
    })
  )

  it.effect("GET /metrics: requests by route template, method and status, latency histogram, queue gauges", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Counted" } })
      const agentId: string = agent.body.data.id
      const route = { route: "/v1/agents/{id}", method: "GET" }

      const before = parseExposition((yield* h.call("GET", "/metrics")).text)
      for (let i = 0; i < 3; i++) expect((yield* h.call("GET", `/v1/agents/${agentId}`, { key: ws.secretTest })).status).toBe(200)
      expect((yield* h.call("GET", "/v1/agents/agt_doesnotexist", { key: ws.secretTest })).status).toBe(404)
      expect((yield* h.call("GET", "/v1/nothing/here", { key: ws.secretTest })).status).toBe(404)
      const reply = yield* h.call("GET", "/metrics")
      expect(reply.status).toBe(200)
      expect(reply.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/)
      const after = parseExposition(reply.text)

      expect(after.types.get("http_requests_total")).toBe("counter")
      expect(after.types.get("http_request_duration_seconds")).toBe("histogram")
      const delta = (metric: string, labels: Record<string, string>) => after.value(metric, labels) - before.value(metric, labels)
      expect(delta("http_requests_total", { ...route, status: "200" })).toBe(3)
      expect(delta("http_requests_total", { ...route, status: "404" })).toBe(1)
      expect(delta("http_requests_total", { route: "unmatched", method: "GET", status: "404" })).toBe(1)
      expect(delta("http_request_duration_seconds_count", { ...route, status: "200" })).toBe(3)
      // no raw path (an id) ever becomes a label value
      expect(after.samples.some((s) => Object.values(s.labels).some((v) => v.includes("agt_")))).toBe(false)

      // buckets are cumulative, end at +Inf, and +Inf equals _count
      const buckets = after.find("http_request_duration_seconds_bucket", { ...route, status: "200" })
      expect(buckets.at(-1)!.labels.le).toBe("+Inf")
      for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value)
      expect(buckets.at(-1)!.value).toBe(after.value("http_request_duration_seconds_count", { ...route, status: "200" }))

      for (const gauge of ["webhook_deliveries_due", "ingestion_jobs", "emails_pending", "sse_open_streams"]) {
        expect(after.types.get(gauge), gauge).toBe("gauge")
      }
      expect(after.find("ingestion_jobs").map((s) => s.labels.state).sort()).toEqual(["failed", "indexed", "pending", "processing"])
      expect(after.value("sse_open_streams")).toBe(0)
      // the scrape itself is operational: no key, no rate limit headers
      expect(reply.headers.get("x-ratelimit-limit")).toBeNull()
    })
  )
})

layer(testServer({ metricsToken: Redacted.make("metrics-token-0123456789") }))("metrics behind METRICS_TOKEN", (it) => {
  it.effect("no token or a wrong one is 401 in the envelope; the token reads the metrics", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const none = yield* h.call("GET", "/metrics")
      expect(none.status).toBe(401)
      expect(none.body.error).toMatchObject({ code: "missing_authorization" })
      const wrong = yield* h.call("GET", "/metrics", { headers: { authorization: "Bearer metrics-token-wrong" } })
      expect(wrong.status).toBe(401)
      expect(wrong.body.error).toMatchObject({ code: "invalid_api_key" })
      const right = yield* h.call("GET", "/metrics", { headers: { authorization: "Bearer metrics-token-0123456789" } })
      expect(right.status).toBe(200)
      expect(right.text).toContain("# TYPE http_requests_total counter")
    })
  )
})

describe("LOG_LEVEL", () => {
  layer(testServer().pipe(Layer.provide(Logging.layerJson({ level: "warning", write: (line) => quiet.push(line) }))))(
    "at warning",
    (it) => {
      it.effect("request lines (info) are not written", () =>
        Effect.gen(function* () {
          const h = yield* Harness
          expect((yield* h.call("GET", "/healthz")).status).toBe(200)
          expect(quiet.filter((line) => line.includes('"msg":"request"'))).toEqual([])
        })
      )
    }
  )
})
const quiet: Array<string> = []
