import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as zlib from "node:zlib"
import { vi } from "vitest"
import * as Fetcher from "../../layers/Fetcher.js"
import * as Lookup from "../../layers/fetcher/Lookup.js"
import { eventually } from "../support/eventually.js"
import { loopbackServer } from "../support/loopback.js"

// One name that DNS answers with 127.0.0.1: it exercises the connect-time
// lookup (an IP literal never reaches it). Other names go to the real resolver.
vi.mock("node:dns", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:dns")>()
  const lookup = (host: string, options: unknown, callback: (...args: Array<unknown>) => void) => {
    if (host !== "rebind.fixture.example") return (actual.lookup as (...args: Array<unknown>) => unknown)(host, options, callback)
    const all = typeof options === "object" && options !== null && (options as { all?: boolean }).all === true
    return all ? callback(null, [{ address: "127.0.0.1", family: 4 }]) : callback(null, "127.0.0.1", 4)
  }
  return { ...actual, lookup, default: { ...actual, lookup } }
})


/** A real HTTP server on 127.0.0.1:<random>, closed (connections included) with the scope. */
const serve = (handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) =>
  Effect.map(loopbackServer((_, res, req) => handler(req, res)), (server) => ({ ...server, seen: server.received }))

/** A handler that destroys the socket of a connection's second request without an answer, as one closed while idle. */
const dropsSecondRequest = () => {
  const perSocket = new WeakMap<object, number>()
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1
    perSocket.set(req.socket, n)
    if (n === 2) return void req.socket.destroy()
    res.writeHead(200).end("ok")
  }
}

/** A port nobody listens on: bound once, then released. */
const closedPort = Effect.async<number>((resume) => {
  const server = http.createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

const get = (url: string, overrides: Partial<Fetcher.GetRequest> = {}) =>
  Effect.flatMap(Fetcher.Fetcher, (f) =>
    f.get({ url, timeoutMillis: 10_000, maxBytes: 1024 * 1024, allowPrivate: true, ...overrides })
  ).pipe(Effect.provide(Fetcher.layerNode))

const post = (url: string, overrides: Partial<Fetcher.PostRequest> = {}) =>
  Effect.flatMap(Fetcher.Fetcher, (f) =>
    f.post({
      url,
      body: JSON.stringify({ id: "evt_1", type: "ping" }),
      headers: { "content-type": "application/json", "service-event-id": "evt_1" },
      timeoutMillis: 5_000,
      allowPrivate: true,
      ...overrides
    })
  ).pipe(Effect.provide(Fetcher.layerNode))

const expectResponse = (result: Fetcher.PostResult): Fetcher.PostResponse => {
  expect(result._tag, JSON.stringify(result)).toBe("Response")
  return result as Fetcher.PostResponse
}
const expectFailure = (result: Fetcher.PostResult, reason: Fetcher.FailureReason): Fetcher.PostFailure => {
  expect(result._tag, JSON.stringify(result)).toBe("Failure")
  expect((result as Fetcher.PostFailure).reason, JSON.stringify(result)).toBe(reason)
  return result as Fetcher.PostFailure
}

describe("Fetcher.layerNode", () => {
  it.scopedLive("POSTs the body and headers, and returns a 200 with its body", () =>
    Effect.gen(function* () {
      const server = yield* serve((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("ok"))
      const result = expectResponse(yield* post(`${server.origin}/hooks/a?x=1`))
      expect(result.status).toBe(200)
      expect(result.bodyExcerpt).toBe("ok")
      expect(result.durationMillis).toBeGreaterThanOrEqual(0)
      expect(result.durationMillis).toBeLessThan(5_000)
      expect(server.seen).toHaveLength(1)
      const [seen] = server.seen
      expect(seen!.method).toBe("POST")
      expect(seen!.path).toBe("/hooks/a?x=1")
      expect(seen!.body).toBe('{"id":"evt_1","type":"ping"}')
      expect(seen!.headers["content-type"]).toBe("application/json")
      expect(seen!.headers["service-event-id"]).toBe("evt_1")
      expect(seen!.headers["content-length"]).toBe(String(Buffer.byteLength(seen!.body)))
    })
  )

  it.scopedLive("keeps at most 1 KiB of the body", () =>
    Effect.gen(function* () {
      const server = yield* serve((req, res) => {
        if (req.url === "/big") return res.writeHead(200).end("x".repeat(5_000))
        // 1023 ASCII bytes then a two-byte character straddling the 1 KiB mark
        if (req.url === "/split") return res.writeHead(200).end("a".repeat(1023) + "é" + "b".repeat(100))
        if (req.url === "/exact") return res.writeHead(200).end("é".repeat(512))
        // 2 KiB written, then the body never ends: the excerpt must not wait for it
        res.writeHead(200)
        res.write("y".repeat(2_048))
      })
      const big = expectResponse(yield* post(`${server.origin}/big`))
      expect(big.bodyExcerpt).toBe("x".repeat(1024))
      const split = expectResponse(yield* post(`${server.origin}/split`))
      expect(split.bodyExcerpt).toBe("a".repeat(1023))
      const exact = expectResponse(yield* post(`${server.origin}/exact`))
      expect(exact.bodyExcerpt).toBe("é".repeat(512))
      const endless = expectResponse(yield* post(`${server.origin}/endless`, { timeoutMillis: 3_000 }))
      expect(endless.status).toBe(200)
      expect(endless.bodyExcerpt).toBe("y".repeat(1024))
      expect(endless.durationMillis).toBeLessThan(3_000)
    })
  )

  it.scopedLive("POSTs to one receiver reuse a kept-alive connection", () =>
    Effect.gen(function* () {
      const server = yield* serve((_req, res) => res.writeHead(200).end("ok"))
      for (let i = 0; i < 3; i++) expect(expectResponse(yield* post(server.origin)).status).toBe(200)
      expect(server.seen).toHaveLength(3)
      expect(server.connections.count).toBe(1)
      // a body cut at 1 KiB is not read to its end: that connection is closed, not reused
      const big = yield* serve((_req, res) => res.writeHead(200).end("x".repeat(5_000)))
      for (let i = 0; i < 2; i++) expect(expectResponse(yield* post(big.origin)).bodyExcerpt).toHaveLength(1024)
      expect(big.connections.count).toBe(2)
    })
  )

  it.scopedLive("a kept-alive connection the receiver dropped is replaced by a new one for the same POST", () =>
    Effect.gen(function* () {
      const server = yield* serve(dropsSecondRequest())
      expect(expectResponse(yield* post(server.origin)).status).toBe(200)
      expect(expectResponse(yield* post(server.origin)).status).toBe(200)
      expect(server.connections.count).toBe(2)
      // a new connection that fails is a failure, not retried
      const refusing = yield* serve((req) => req.socket.destroy())
      expectFailure(yield* post(refusing.origin), "other")
      expect(refusing.seen).toHaveLength(1)
    })
  )

  it.scopedLive("GETs of one site reuse a kept-alive connection; one whose body is refused is closed", () =>
    Effect.gen(function* () {
      const page = "<p>Refunds within thirty days.</p>"
      const server = yield* serve((req, res) =>
        req.url === "/big" ? res.writeHead(200).end("x".repeat(5_000)) : res.writeHead(200, { "content-type": "text/html" }).end(page)
      )
      for (let i = 0; i < 3; i++) expect(yield* get(`${server.origin}/p/${i}`)).toMatchObject({ _tag: "Response", status: 200 })
      expect(server.connections.count).toBe(1)
      // past the limit: the rest of the body is never read, so its connection cannot serve another page
      expect(yield* get(`${server.origin}/big`, { maxBytes: 1024 })).toMatchObject({ _tag: "Failure", reason: "too_large" })
      expect(yield* get(`${server.origin}/p/3`)).toMatchObject({ _tag: "Response", status: 200 })
      expect(server.connections.count).toBe(2)
    })
  )

  it.scopedLive("a kept-alive connection the site dropped is replaced by a new one for the same GET", () =>
    Effect.gen(function* () {
      const server = yield* serve(dropsSecondRequest())
      expect(yield* get(server.origin)).toMatchObject({ _tag: "Response", status: 200 })
      expect(yield* get(server.origin)).toMatchObject({ _tag: "Response", status: 200 })
      expect(server.connections.count).toBe(2)
    })
  )

  it.scopedLive("a 500 is a Response with that status", () =>
    Effect.gen(function* () {
      const server = yield* serve((_req, res) => res.writeHead(500).end("boom"))
      const result = expectResponse(yield* post(server.origin))
      expect(result.status).toBe(500)
      expect(result.bodyExcerpt).toBe("boom")
    })
  )

  it.scopedLive("a 301 is returned as is: redirects are not followed", () =>
    Effect.gen(function* () {
      const server = yield* serve((req, res) => {
        if (req.url === "/moved") return res.writeHead(301, { location: "/elsewhere" }).end("moved")
        res.writeHead(200).end("followed")
      })
      const result = expectResponse(yield* post(`${server.origin}/moved`))
      expect(result.status).toBe(301)
      expect(result.bodyExcerpt).toBe("moved")
      expect(server.seen.map((s) => s.path)).toEqual(["/moved"])
    })
  )

  it.scopedLive("a receiver that accepts and never answers times out", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => {
        // never respond
      })
      const result = expectFailure(yield* post(server.origin, { timeoutMillis: 300 }), "timeout")
      expect(result.message).toMatch(/300 ms/)
      expect(result.durationMillis).toBeGreaterThanOrEqual(290)
      expect(result.durationMillis).toBeLessThan(3_000)
      expect(server.seen).toHaveLength(1)
    })
  )

  it.scopedLive("a receiver that sends the status line and stalls the body times out too", () =>
    Effect.gen(function* () {
      const server = yield* serve((_req, res) => {
        res.writeHead(200)
        res.write("partial")
      })
      const result = expectFailure(yield* post(server.origin, { timeoutMillis: 300 }), "timeout")
      expect(result.message).toMatch(/status 200 received/)
    })
  )

  // `it.scoped`, not `it.scopedLive`: the TestClock is in force here
  it.scoped("the timeout runs on a real timer even under a TestClock nobody advances", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => {})
      const result = expectFailure(yield* post(server.origin, { timeoutMillis: 300 }), "timeout")
      // Clock-measured: the TestClock did not move
      expect(result.durationMillis).toBe(0)
    })
  )

  it.live("a closed port is a connect failure", () =>
    Effect.gen(function* () {
      const port = yield* closedPort
      const result = expectFailure(yield* post(`http://127.0.0.1:${port}/`), "connect")
      expect(result.message).toMatch(/ECONNREFUSED/)
    })
  )

  it.live("an unresolvable name is a dns failure", () =>
    Effect.gen(function* () {
      const result = expectFailure(yield* post("http://nope.invalid/hook"), "dns")
      expect(result.message).toMatch(/ENOTFOUND|EAI_AGAIN/)
    })
  )

  it.live("a name DNS never answers for is a dns failure of that fetch, after the lookup's deadline", () =>
    Effect.gen(function* () {
      const asked: Array<string> = []
      const silent: Lookup.Resolver = (host) => void asked.push(host)
      // the lookup's deadline is a real timer, like the fetch's (see `fetcher/Lookup.ts`): a short one here
      const fetcher = Fetcher.layerNodeWith(Lookup.withTimeout(silent, 20))
      const sent = yield* Effect.flatMap(Fetcher.Fetcher, (f) =>
        Effect.all([
          f.post({ url: "http://silent-dns.example/hook", body: "{}", headers: {}, timeoutMillis: 60_000, allowPrivate: false }),
          f.get({ url: "https://silent-dns.example/page", timeoutMillis: 60_000, maxBytes: 1024, allowPrivate: false })
        ])
      ).pipe(Effect.provide(fetcher))
      for (const result of sent) {
        expect(result, JSON.stringify(result)).toMatchObject({ _tag: "Failure", reason: "dns" })
        expect((result as Fetcher.PostFailure).message).toBe("ETIMEOUT: DNS lookup of silent-dns.example timed out after 20 ms")
      }
      expect(asked).toEqual(["silent-dns.example", "silent-dns.example"])
      expect(Lookup.DNS_LOOKUP_TIMEOUT_MILLIS).toBe(5_000)
    })
  )

  it.live("a lookup answered in time passes through the deadline unchanged; a late answer is dropped", () =>
    Effect.gen(function* () {
      const answers: Array<unknown> = []
      let late: (() => void) | undefined
      const slow: Lookup.Resolver = (_host, _options, callback) => {
        late = () => callback(null, [{ address: "93.184.216.34", family: 4 }])
      }
      const quick: Lookup.Resolver = (_host, _options, callback) => callback(null, [{ address: "93.184.216.34", family: 4 }])
      yield* Effect.async<void>((resume) =>
        Lookup.withTimeout(quick, 1_000)("quick.example", { all: true }, (error, addresses) => {
          answers.push([error, addresses])
          resume(Effect.void)
        })
      )
      yield* Effect.async<void>((resume) =>
        Lookup.withTimeout(slow, 5)("slow.example", { all: true }, (error, addresses) => {
          answers.push([error?.code, addresses])
          resume(Effect.void)
        })
      )
      late?.()
      expect(answers).toEqual([
        [null, [{ address: "93.184.216.34", family: 4 }]],
        ["ETIMEOUT", []]
      ])
    })
  )

  it.live("at most maxInFlight lookups run at once: a silent resolver holds those, the rest time out waiting", () =>
    Effect.gen(function* () {
      const started: Array<string> = []
      const held: Array<() => void> = []
      const controlled: Lookup.Resolver = (host, _options, callback) => {
        started.push(host)
        held.push(() => callback(null, [{ address: "93.184.216.34", family: 4 }]))
      }
      const lookup = (resolve: Lookup.Resolver, host: string) =>
        Effect.async<string>((resume) =>
          resolve(host, { all: true }, (error) => resume(Effect.succeed(error === null ? `${host}: ok` : `${host}: ${error.code}`)))
        )
      // never answered: one runs, two wait and time out without ever reaching the resolver
      const silent = Lookup.withTimeout(controlled, 20, 1)
      const gaveUp = yield* Effect.all([lookup(silent, "a.example"), lookup(silent, "b.example"), lookup(silent, "c.example")], {
        concurrency: "unbounded"
      })
      expect(gaveUp).toEqual(["a.example: ETIMEOUT", "b.example: ETIMEOUT", "c.example: ETIMEOUT"])
      expect(started).toEqual(["a.example"])
      // the held lookup returns at last: its slot is free, and the next lookup runs
      held.shift()!()
      const next = yield* Effect.fork(lookup(silent, "d.example"))
      yield* Effect.yieldNow()
      expect(started).toEqual(["a.example", "d.example"])
      held.shift()!()
      expect(yield* Fiber.join(next)).toBe("d.example: ok")
    })
  )

  it.scopedLive("TLS spoken to a plain HTTP server is a tls failure", () =>
    Effect.gen(function* () {
      const server = yield* serve((_req, res) => res.writeHead(200).end("ok"))
      expectFailure(yield* post(`https://127.0.0.1:${server.port}/`), "tls")
    })
  )

  it.scopedLive("allowPrivate false: private_address, and no connection reaches the server", () =>
    Effect.gen(function* () {
      const server = yield* serve((_req, res) => res.writeHead(200).end("ok"))
      const literal = expectFailure(yield* post(server.origin, { allowPrivate: false }), "private_address")
      expect(literal.message).toMatch(/127\.0\.0\.1/)
      expectFailure(yield* post(`http://localhost:${server.port}/`, { allowPrivate: false }), "private_address")
      expectFailure(yield* post(`http://[::ffff:127.0.0.1]:${server.port}/`, { allowPrivate: false }), "private_address")
      // a name whose DNS answer is private is refused at connect time (the rebinding case)
      const resolved = expectFailure(
        yield* post(`http://rebind.fixture.example:${server.port}/`, { allowPrivate: false }),
        "private_address"
      )
      expect(resolved.message).toMatch(/rebind\.fixture\.example/)
      expect(server.connections.count).toBe(0)
      expect(server.seen).toHaveLength(0)

      // the same name connects when private addresses are allowed
      const allowed = expectResponse(yield* post(`http://rebind.fixture.example:${server.port}/`, { allowPrivate: true }))
      expect(allowed.status).toBe(200)
      expect(server.seen).toHaveLength(1)
    })
  )

  it.live("invalid URLs and other schemes are failures, not defects", () =>
    Effect.gen(function* () {
      expectFailure(yield* post("not a url"), "other")
      expectFailure(yield* post("ftp://127.0.0.1/"), "other")
    })
  )

  it.scopedLive("GET: gzip, deflate and br bodies are decoded; the limit counts what they inflate to; a broken or unknown encoding fails", () =>
    Effect.gen(function* () {
      const page = Buffer.from(`<html><body>${"<p>Refunds within thirty days.</p>".repeat(50)}</body></html>`)
      // 200 MB of spaces as a few hundred kilobytes of gzip
      const bomb = zlib.gzipSync(Buffer.alloc(200 * 1024 * 1024, 32), { level: 9 })
      const encoded: Record<string, readonly [string, Buffer]> = {
        "/gzip": ["gzip", zlib.gzipSync(page)],
        "/deflate": ["deflate", zlib.deflateSync(page)],
        "/br": ["br", zlib.brotliCompressSync(page)],
        "/bomb": ["gzip", bomb],
        "/broken": ["gzip", zlib.gzipSync(page).subarray(0, 40)],
        "/unknown": ["zstd", page]
      }
      const server = yield* serve((req, res) => {
        const [encoding, body] = encoded[req.url ?? ""] ?? ["identity", page]
        res.writeHead(200, { "content-type": "text/html", "content-encoding": encoding }).end(body)
      })
      const at = (path: string) => get(`${server.origin}${path}`)
      for (const path of ["/gzip", "/deflate", "/br", "/plain"]) {
        const result = yield* at(path)
        expect(result._tag === "Response" && Buffer.from(result.body).equals(page), `${path}: ${JSON.stringify(result).slice(0, 200)}`).toBe(true)
      }
      expect(server.seen[0]?.headers["accept-encoding"]).toBe("gzip, deflate, br")
      expect(yield* at("/bomb")).toMatchObject({ _tag: "Failure", reason: "too_large", message: "the response is larger than 1048576 bytes" })
      expect(yield* at("/broken")).toMatchObject({ _tag: "Failure", reason: "other", message: "the response's gzip encoding is broken" })
      expect(yield* at("/unknown")).toMatchObject({ _tag: "Failure", reason: "encoding", message: "the response is encoded as zstd, which is not read" })
    })
  )

  it.scopedLive("GET: a response's validators for a conditional GET, its 304; a redirect off the origin when told to keep to it", () =>
    Effect.gen(function* () {
      const server = yield* serve((req, res) => {
        if (req.url === "/away") return void res.writeHead(302, { location: `http://localhost:${port()}/page` }).end()
        if (req.url === "/moved") return void res.writeHead(301, { location: "/page" }).end()
        if (req.headers["if-none-match"] === '"v1"') return void res.writeHead(304).end()
        res.writeHead(200, { "content-type": "text/html", etag: '"v1"', "last-modified": "Wed, 25 Nov 2026 10:00:00 GMT" }).end("<p>hi</p>")
      })
      const port = () => new URL(server.origin).port
      const at = (path: string, extra: Partial<Fetcher.GetRequest> = {}) => get(`${server.origin}${path}`, extra)
      expect(yield* at("/page")).toMatchObject({ _tag: "Response", status: 200, etag: '"v1"', lastModified: "Wed, 25 Nov 2026 10:00:00 GMT" })
      expect(yield* at("/page", { headers: { "if-none-match": '"v1"' } })).toMatchObject({ _tag: "Response", status: 304 })
      expect(yield* at("/moved", { keepOrigin: true })).toMatchObject({ _tag: "Response", status: 200, url: `${server.origin}/page` })
      expect(yield* at("/away", { keepOrigin: true })).toEqual({
        _tag: "Failure",
        reason: "off_origin",
        message: `a redirect left the site for http://localhost:${port()}`
      })
      // without it, the redirect is followed as any other
      expect(yield* at("/away")).toMatchObject({ _tag: "Response", status: 200 })
    })
  )

  it.scopedLive("interruption tears the request down", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => {})
      const result = yield* post(server.origin, { timeoutMillis: 10_000 }).pipe(Effect.timeout("200 millis"), Effect.option)
      expect(result._tag).toBe("None")
      // the server sees the client's socket go away
      const connections = Effect.async<number>((resume) => {
        server.server.getConnections((_e, n) => resume(Effect.succeed(n)))
      })
      yield* eventually(connections, (n) => n === 0, { label: "client socket closed" })
    })
  )
})

describe("Fetcher.layerTest", () => {
  it.effect("answers with the handler's result, plain or as an Effect", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const layer = Fetcher.layerTest((request) => {
        seen.push(request.url)
        return request.url.endsWith("/down")
          ? Effect.as(TestClock.adjust("1 second"), Fetcher.failure("connect", "refused"))
          : Fetcher.response(204)
      })
      const [ok, down] = yield* Effect.flatMap(Fetcher.Fetcher, (f) =>
        Effect.all([
          f.post({ url: "https://a.example/up", body: "{}", headers: {}, timeoutMillis: 1_000, allowPrivate: false }),
          f.post({ url: "https://a.example/down", body: "{}", headers: {}, timeoutMillis: 1_000, allowPrivate: false })
        ])
      ).pipe(Effect.provide(layer))
      expect(ok).toEqual({ _tag: "Response", status: 204, bodyExcerpt: "", durationMillis: 0 })
      expect(down).toEqual({ _tag: "Failure", reason: "connect", message: "refused", durationMillis: 0 })
      expect(seen).toEqual(["https://a.example/up", "https://a.example/down"])
    })
  )

  it.effect("is a Layer of Fetcher", () =>
    Effect.sync(() => {
      expect(Layer.isLayer(Fetcher.layerTest(() => Fetcher.response(200)))).toBe(true)
    })
  )
})
