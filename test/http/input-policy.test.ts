import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Harness } from "../support/harness.js"
import { testServer } from "../support/harness.js"
import { request as httpRequest } from "node:http"
import { chunkedRequest, rawExchange } from "../support/raw.js"
import { createAgent, createTicket } from "../tickets/support.js"

const refused = (r: { status: number; body: any }, status: number, code: string, param?: string) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status)
  expect(r.body.error.code).toBe(code)
  if (param !== undefined) expect(r.body.error.param).toBe(param)
  expect(r.body.meta.request_id).toMatch(/^req_/)
}

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`

layer(testServer())("input policy at the edge", (it) => {
  it.effect("NUL in a body string, a field name or a query value: 400 parameter_invalid naming the param", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      refused(yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "a\u0000b" } }), 400, "parameter_invalid", "name")
      const agent = yield* createAgent(h, ws.secretTest)
      refused(yield* createTicket(h, ws.secretTest, { agent_id: agent, metadata: { note: ["x", "\u0000"] } }), 400, "parameter_invalid", "metadata.note[1]")
      refused(yield* createTicket(h, ws.secretTest, { agent_id: agent, metadata: { "a\u0000": 1 } }), 400, "parameter_invalid")
      refused(yield* h.call("GET", "/v1/tickets?tag=%00", { key: ws.secretTest }), 400, "parameter_invalid", "tag")
      refused(yield* h.call("GET", "/v1/agents/agt_%00", { key: ws.secretTest }), 400, "parameter_invalid", "path")
      // nothing was written
      expect((yield* h.call("GET", "/v1/tickets", { key: ws.secretTest })).body.data).toEqual([])
    })
  )

  it.effect("a lone UTF-16 surrogate anywhere in a body (values, field names, nested): 400 parameter_invalid naming the param", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const lone = "surrogate"
      // JSON.stringify writes a lone surrogate as its escape, which JSON.parse turns back into one
      expect(JSON.stringify("a\ud800b")).toBe(`"a\\ud800b"`)
      const cases: ReadonlyArray<readonly [string, string, unknown, string]> = [
        ["POST", `/v1/agents/${agent}/qa`, { question: "a\ud800b", answer: "fine" }, "question"],
        ["POST", `/v1/agents/${agent}/qa`, { question: "fine?", answer: "end \udbff" }, "answer"],
        ["POST", `/v1/agents/${agent}/glossary/terms`, { term: "parcel", synonyms: ["box", "\udc00 low"] }, "synonyms[1]"],
        ["POST", "/v1/tickets", { agent_id: agent, subject: "s", tags: ["ok", "x\ud83d"] }, "tags[1]"],
        ["POST", "/v1/tickets", { agent_id: agent, subject: "s", metadata: { order: { note: ["x", "\udfff\ud800"] } } }, "metadata.order.note[1]"],
        ["POST", "/v1/tickets", { agent_id: agent, subject: "s", metadata: { "k\ud800": 1 } }, "metadata.k\\ud800"],
        ["POST", "/v1/leads", { agent_id: agent, email: "v@example.com", metadata: { page: "\ud800" } }, "metadata.page"],
        ["POST", "/v1/agents", { type: "support", name: "Bot \udead" }, "name"],
        ["POST", `/v1/agents/${agent}/messages`, { message: "hi \ud800", stream: false }, "message"]
      ]
      for (const [method, path, body, param] of cases) {
        const r = yield* h.call(method, path, { key: ws.secretTest, body })
        refused(r, 400, "parameter_invalid", param)
        expect(r.body.error.message, param).toContain(lone)
      }
      // the widget surface: a conversation's metadata
      const opened = yield* h.call("POST", `/widget/v1/agents/${agent}/conversations`, {
        key: ws.widgetTest,
        body: { metadata: { page: "https://shop.example.com/\ud800" } }
      })
      refused(opened, 400, "parameter_invalid", "metadata.page")
      // the same escape sent as raw text, and a key with one at the top level
      refused(
        yield* h.call("POST", "/v1/tickets", { key: ws.secretTest, body: `{"agent_id":"${agent}","subject":"a\\uD800b"}` }),
        400,
        "parameter_invalid",
        "subject"
      )
      refused(
        yield* h.call("POST", "/v1/tickets", { key: ws.secretTest, body: `{"agent_id":"${agent}","subject":"s","\\udc00":1}` }),
        400,
        "parameter_invalid",
        "\\udc00"
      )
      // nothing was written
      expect((yield* h.call("GET", "/v1/tickets", { key: ws.secretTest })).body.data).toEqual([])
      expect((yield* h.call("GET", `/v1/agents/${agent}/qa`, { key: ws.secretTest })).body.data).toEqual([])
      expect((yield* h.call("GET", "/v1/leads", { key: ws.secretTest })).body.data).toEqual([])

      // pairs are text: escaped or raw, an emoji is stored as sent
      const paired = yield* createTicket(h, ws.secretTest, {
        agent_id: agent,
        tags: ["\ud83e\udd84"],
        metadata: { "k\ud83d\udd25": "🦄 and \ud83d\udd25" }
      })
      expect(paired.status, paired.text).toBe(201)
      expect(paired.body.data.tags).toEqual(["🦄"])
      expect(paired.body.data.metadata).toEqual({ "k🔥": "🦄 and 🔥" })
      // raw bytes that are not UTF-8 are not a surrogate: they decode as U+FFFD, stored as such
      const raw = yield* Effect.promise(async () => {
        const response = await fetch(`${h.url}/v1/agents/${agent}/qa`, {
          method: "POST",
          headers: { authorization: `Bearer ${ws.secretTest}`, "content-type": "application/json" },
          body: Buffer.concat([Buffer.from('{"question":"a'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('b?","answer":"x"}')])
        })
        return { status: response.status, body: (await response.json()) as any }
      })
      expect(raw.status, JSON.stringify(raw.body)).toBe(201)
      expect(raw.body.data.question).toMatch(/^a\ufffd+b\?$/)
    })
  )

  it.effect("JSON nested past 32 levels is refused before decoding, even thousands deep; 32 still decodes", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      for (const depth of [33, 5000, 100_000]) {
        const body = `{"agent_id":"${agent}","subject":"s","metadata":{"x":${nested(depth)}}}`
        const r = yield* h.call("POST", "/v1/tickets", { key: ws.secretTest, body })
        refused(r, 400, "parameter_invalid")
        expect(r.body.error.message).toContain("32 levels")
      }
      const ok = yield* h.call("POST", "/v1/tickets", {
        key: ws.secretTest,
        body: `{"agent_id":"${agent}","subject":"s","metadata":{"x":${nested(30)}}}`
      })
      expect(ok.status).toBe(201)
      // deep values in a PATCH are refused the same way (the old/new comparison never sees them)
      const patched = yield* h.call("PATCH", `/v1/tickets/${ok.body.data.id}`, {
        key: ws.secretTest,
        body: `{"metadata":{"x":${nested(5000)}}}`
      })
      refused(patched, 400, "parameter_invalid")
    })
  )

  it.effect("numbers that do not survive a round trip are refused with their path", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      for (const n of ["1e999", "-1e999", "12345678901234567890"]) {
        const r = yield* h.call("POST", "/v1/tickets", {
          key: ws.secretTest,
          body: `{"agent_id":"${agent}","subject":"s","metadata":{"n":${n}}}`
        })
        refused(r, 400, "parameter_invalid", "metadata.n")
      }
      const ok = yield* createTicket(h, ws.secretTest, { agent_id: agent, metadata: { n: 1.5e300, m: 9007199254740991 } })
      expect(ok.status).toBe(201)
      expect(ok.body.data.metadata).toEqual({ n: 1.5e300, m: 9007199254740991 })
    })
  )

  it.effect("decode messages say what was expected and echo at most an excerpt", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const type = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "robot", name: "x" } })
      refused(type, 400, "parameter_invalid", "type")
      expect(type.body.error.message).toContain("expected one of 'support', 'training'")
      const array = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: [1, 2] })
      refused(array, 400, "parameter_invalid")
      expect(array.body.error.message).toContain("expected an object")
      const agent = yield* createAgent(h, ws.secretTest)
      const metadata = yield* createTicket(h, ws.secretTest, { agent_id: agent, metadata: "x".repeat(100_000) })
      refused(metadata, 400, "parameter_invalid", "metadata")
      expect(metadata.body.error.message).toContain("expected an object")
      expect(metadata.body.error.message).not.toContain("readonly")
      expect(metadata.text.length).toBeLessThan(1000)
    })
  )

  it.effect("limit twice is invalid_limit; a bad cursor is invalid_cursor", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      refused(yield* h.call("GET", "/v1/agents?limit=1&limit=2", { key: ws.secretTest }), 400, "invalid_limit", "limit")
      refused(yield* h.call("GET", "/v1/agents?starting_after=a&starting_after=b", { key: ws.secretTest }), 400, "invalid_cursor", "starting_after")
    })
  )

  it.effect("bodies over 2 MB: 413 in the envelope with or without Content-Length, chunked too", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const big = JSON.stringify({ type: "support", name: "x".repeat(3 * 1024 * 1024) })
      refused(yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: big }), 413, "payload_too_large")
      const chunk = "x".repeat(64 * 1024)
      const chunked = yield* Effect.promise(() =>
        chunkedRequest(`${h.url}/v1/agents`, {
          method: "POST",
          headers: { authorization: `Bearer ${ws.secretTest}`, "content-type": "application/json" },
          chunks: (function* () {
            yield `{"type":"support","name":"`
            for (let i = 0; i < 48; i++) yield chunk
            yield `"}`
          })()
        })
      )
      expect(chunked).not.toHaveProperty("dropped")
      if ("status" in chunked) refused(chunked, 413, "payload_too_large")
      // a chunked body under the limit is read whole
      const small = yield* Effect.promise(() =>
        chunkedRequest(`${h.url}/v1/agents`, {
          method: "POST",
          headers: { authorization: `Bearer ${ws.secretTest}`, "content-type": "application/json" },
          chunks: [`{"type":"support",`, `"name":"Chunked"}`]
        })
      )
      expect(small).toMatchObject({ status: 201, body: { data: { name: "Chunked" } } })
    })
  )

  it.effect("malformed or very long ids: 400 or 404, never 405", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      for (const method of ["GET", "PATCH", "DELETE"]) {
        refused(yield* h.call(method, "/v1/agents/%E0%A4%A", { key: ws.secretTest, ...(method === "PATCH" ? { body: {} } : {}) }), 400, "parameter_invalid", "path")
        const long = yield* h.call(method, `/v1/agents/agt_${"a".repeat(300)}`, { key: ws.secretTest, ...(method === "PATCH" ? { body: {} } : {}) })
        refused(long, 404, "resource_missing")
      }
      refused(yield* h.call("POST", `/v1/tickets/tkt_${"a".repeat(300)}/resolve`, { key: ws.secretTest }), 404, "resource_missing")
      // a method the path does not serve still answers 405
      refused(yield* h.call("PUT", "/v1/agents/agt_1", { key: ws.secretTest, body: {} }), 405, "method_not_allowed")
    })
  )

  it.effect("+json media types are JSON; other types 415", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const created = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Old" } })
      const patched = yield* h.call("PATCH", `/v1/agents/${created.body.data.id}`, {
        key: ws.secretTest,
        body: { name: "New" },
        headers: { "content-type": "application/merge-patch+json" }
      })
      expect(patched.status).toBe(200)
      expect(patched.body.data.name).toBe("New")
      const charset = yield* h.call("POST", "/v1/agents", {
        key: ws.secretTest,
        body: { type: "support", name: "Charset" },
        headers: { "content-type": "application/json; charset=utf-8" }
      })
      expect(charset.status).toBe(201)
      // an empty body under another type is decoded as JSON (the stream is already read): an answer, not a hang
      for (const type of ["multipart/form-data; boundary=x", "text/plain", "application/octet-stream"]) {
        const empty = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: "", headers: { "content-type": type } })
        refused(empty, 400, "parameter_missing")
      }
      for (const type of ["text/plain", "application/jsonx", "application/x-www-form-urlencoded", "application/json-seq"]) {
        refused(
          yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "x" }, headers: { "content-type": type } }),
          415,
          "unsupported_media_type",
          "Content-Type"
        )
      }
    })
  )

  it.effect("Authorization needs the Bearer scheme; x-api-key still works", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      for (const value of [ws.secretTest, `Basic ${ws.secretTest}`, `Bearer`, `Token ${ws.secretTest}`]) {
        refused(yield* h.call("GET", "/v1/agents", { headers: { authorization: value } }), 401, "invalid_api_key")
      }
      expect((yield* h.call("GET", "/v1/agents", { headers: { authorization: `bearer ${ws.secretTest}` } })).status).toBe(200)
      expect((yield* h.call("GET", "/v1/agents", { headers: { "x-api-key": ws.secretTest } })).status).toBe(200)
    })
  )

  it.effect("an Expect other than 100-continue is 417 expectation_failed in the envelope with a Request-Id; nothing is done", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { port } = new URL(h.url)
      const body = JSON.stringify({ type: "support", name: "Expected" })
      for (const expectation of ["200-ok", "foo=bar", "x".repeat(500)]) {
        const reply = yield* Effect.promise(() =>
          rawExchange(
            h.url,
            `POST /v1/agents HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${ws.secretTest}\r\n` +
              `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: ${expectation}\r\n` +
              `Connection: close\r\n\r\n${body}`
          )
        )
        if (!("status" in reply)) throw new Error(`no answer: ${reply.dropped}`)
        expect(reply.status).toBe(417)
        expect(reply.headers["content-type"]).toBe("application/json")
        expect(reply.headers["request-id"]).toMatch(/^req_/)
        expect(reply.body.error).toMatchObject({
          type: "invalid_request",
          code: "expectation_failed",
          doc_url: expect.stringContaining("#expectation_failed")
        })
        expect(reply.body.error.message).toContain("100-continue")
        expect(reply.body.error.message.length).toBeLessThan(200)
        expect(reply.body.meta.request_id).toBe(reply.headers["request-id"])
      }
      // a GET too, and the connection stays usable: the next request on it is answered
      const twice = yield* Effect.promise(() =>
        rawExchange(
          h.url,
          `GET /v1/agents HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nExpect: 200-ok\r\n\r\n` +
            `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`
        )
      )
      expect(twice).toMatchObject({ status: 417, body: expect.stringContaining("HTTP/1.1 200") })
      // nothing was created
      expect((yield* h.call("GET", "/v1/agents", { key: ws.secretTest })).body.data).toEqual([])

      // 100-continue is met by Node: the body is sent after the interim answer and the request runs
      const created = yield* Effect.promise(
        () =>
          new Promise<{ status: number; body: any }>((resolve, reject) => {
            const req = httpRequest(`${h.url}/v1/agents`, {
              method: "POST",
              headers: {
                authorization: `Bearer ${ws.secretTest}`,
                "content-type": "application/json",
                "content-length": Buffer.byteLength(body),
                expect: "100-continue"
              }
            })
            req.on("continue", () => req.end(body))
            req.on("response", (res) => {
              const chunks: Array<Buffer> = []
              res.on("data", (c) => chunks.push(c))
              res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }))
            })
            req.on("error", reject)
            req.flushHeaders()
          })
      )
      expect(created.status).toBe(201)
      expect(created.body.data.name).toBe("Expected")
    })
  )

  it.effect("Node's own refusals answer in the envelope: 431 for huge headers, 400 for bad header bytes", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const { port } = new URL(h.url)
      const huge = yield* Effect.promise(() =>
        rawExchange(h.url, `GET /v1/agents HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`)
      )
      expect(huge).toMatchObject({ status: 431, body: { error: { code: "header_too_large" } } })
      const bad = yield* Effect.promise(() =>
        rawExchange(h.url, `GET /v1/agents HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Bad: a\u0001b\r\n\r\n`)
      )
      expect(bad).toMatchObject({ status: 400, body: { error: { code: "parameter_invalid" } } })
      if ("body" in bad) expect(bad.body.meta.request_id).toMatch(/^req_/)
    })
  )

  it.effect("bodiless POSTs take no body or {}; anything else is refused", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const ticket = (yield* createTicket(h, ws.secretTest, { agent_id: agent })).body.data.public_id
      refused(yield* h.call("POST", `/v1/tickets/${ticket}/resolve`, { key: ws.secretTest, body: "{not json" }), 400, "parameter_invalid")
      refused(yield* h.call("POST", `/v1/tickets/${ticket}/resolve`, { key: ws.secretTest, body: { x: 1 } }), 400, "parameter_invalid", "body")
      refused(yield* h.call("POST", `/v1/tickets/${ticket}/resolve`, { key: ws.secretTest, body: [] }), 400, "parameter_invalid", "body")
      expect((yield* h.call("POST", `/v1/tickets/${ticket}/resolve`, { key: ws.secretTest, body: {} })).status).toBe(200)
      expect((yield* h.call("POST", `/v1/tickets/${ticket}/reopen`, { key: ws.secretTest })).status).toBe(200)
    })
  )
})
