/**
 * What Node refuses below the API (bytes that are not HTTP, `CONNECT`) is answered in the envelope, and only
 * after every request that came before it on the connection got its own answer, in order.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { connect } from "node:net"
import { knowledgeableAgent } from "../conversations/support.js"
import { Harness, testServer } from "../support/harness.js"

/** Writes `bytes` and collects everything the server sends until it closes the connection (bounded). */
const exchange = (url: string, bytes: string, timeoutMs = 10_000) =>
  Effect.promise(
    () =>
      new Promise<string>((resolve) => {
        const { hostname, port } = new URL(url)
        const socket = connect(Number(port), hostname)
        const chunks: Array<Buffer> = []
        const timer = setTimeout(() => {
          socket.destroy()
          resolve(`${Buffer.concat(chunks).toString("utf8")}<no close within ${timeoutMs} ms>`)
        }, timeoutMs)
        socket.on("data", (c) => chunks.push(c))
        socket.on("error", () => {})
        socket.on("close", () => {
          clearTimeout(timer)
          resolve(Buffer.concat(chunks).toString("utf8"))
        })
        socket.write(bytes)
      })
  )

/** The status lines of the answers in `text`, in order. */
const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) [A-Z]/g)].map((m) => Number(m[1]))

/** The body of the last answer in `text`, parsed. */
const lastBody = (text: string) => JSON.parse(text.slice(text.lastIndexOf("\r\n\r\n") + 4))

const post = (port: string, key: string, path: string, body: unknown) => {
  const text = JSON.stringify(body)
  return (
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
  )
}

const garbage = "GARBAGE / HTTP/1.1\r\n\r\n"

layer(testServer())("refusals below the API", (it) => {
  it.effect("a request followed by bytes that are not HTTP gets its own answer, then the 400 in the envelope, then the close", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { port } = new URL(h.url)
      const text = yield* exchange(h.url, post(port, ws.secretTest, "/v1/agents", { type: "support", name: "pipe-probe" }) + garbage)
      expect(statuses(text), text).toEqual([201, 400])
      expect(text).toContain(`"name":"pipe-probe"`)
      expect(lastBody(text).error).toMatchObject({ code: "parameter_invalid", message: "The request is not valid HTTP/1.1" })
      // it ran once, and the client was told so
      const agents = (yield* h.call("GET", "/v1/agents", { key: ws.secretTest })).body.data
      expect(agents.map((a: { name: string }) => a.name)).toEqual(["pipe-probe"])
    })
  )

  it.effect("pipelined requests before the bad bytes are answered in order", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { port } = new URL(h.url)
      const text = yield* exchange(
        h.url,
        post(port, ws.secretTest, "/v1/agents", { type: "support", name: "first" }) +
          `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n` +
          post(port, ws.secretTest, "/v1/agents", { type: "support", name: "second" }) +
          garbage
      )
      expect(statuses(text), text).toEqual([201, 200, 201, 400])
      expect(text.indexOf(`"name":"first"`)).toBeLessThan(text.indexOf(`"name":"second"`))
    })
  )

  it.effect("a streamed reply followed by bad bytes is streamed to its end before the 400", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { port } = new URL(h.url)
      const { agentId } = yield* knowledgeableAgent(h, ws.secretTest)
      const text = yield* exchange(
        h.url,
        post(port, ws.secretTest, `/v1/agents/${agentId}/messages`, { message: "How long does delivery take?", stream: true }) + garbage
      )
      expect(statuses(text), text).toEqual([200, 400])
      expect(text).toContain("text/event-stream")
      expect(text).toContain(`"type":"done"`)
      expect(text.indexOf(`"type":"done"`)).toBeLessThan(text.lastIndexOf("HTTP/1.1 400"))
    })
  )

  it.effect("CONNECT is answered in the envelope: 405 with Allow on a path of ours, 404 elsewhere; never a tunnel", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { port } = new URL(h.url)
      const tunnel = yield* exchange(h.url, `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`)
      expect(statuses(tunnel), tunnel).toEqual([404])
      expect(tunnel).toMatch(/^Request-Id: req_/m)
      expect(lastBody(tunnel)).toMatchObject({
        error: { type: "invalid_request", code: "route_not_found", doc_url: expect.stringContaining("#route_not_found") },
        meta: { request_id: expect.stringMatching(/^req_/) }
      })
      const onOurs = yield* exchange(h.url, `CONNECT /v1/agents HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)
      expect(statuses(onOurs), onOurs).toEqual([405])
      expect(onOurs).toMatch(/^Allow: POST, GET\r$/m)
      expect(lastBody(onOurs).error.code).toBe("method_not_allowed")
      // after a request on the same connection: its answer first
      const after = yield* exchange(
        h.url,
        post(port, ws.secretTest, "/v1/agents", { type: "support", name: "before-connect" }) +
          `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`
      )
      expect(statuses(after), after).toEqual([201, 404])
    })
  )
})
