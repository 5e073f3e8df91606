/**
 * The end of the shutdown grace (src/http/Drain.ts) over real sockets, with the
 * grace on the TestClock: an event stream still open gets a last `error` event
 * (without an `id:`, so `Last-Event-ID` resumes where the reader was) before its
 * connection closes; a plain request still open is cut; a stream that ended
 * during the grace ends the wait at once.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { createServer, get, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { makeDrain, shutdownFrame } from "../../src/http/Drain.js"

const firstFrame = `id: 1\ndata: ${JSON.stringify({ type: "token", content: "Hel" })}\n\n`

/** `/events` opens an event stream and sends one frame; `/plain` never answers. */
const holdingServer = Effect.acquireRelease(
  Effect.async<{ readonly server: Server; readonly origin: string }>((resume) => {
    const server = createServer((req, res) => {
      if (req.url === "/events") {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        res.write(firstFrame)
      }
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }))
    )
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

/** A GET whose body is collected until the connection ends: the text, and how it ended. */
const read = (url: string) => {
  const received: Array<string> = []
  let first: (() => void) | undefined
  const started = new Promise<void>((resolve) => (first = resolve))
  const ended = new Promise<{ readonly text: string; readonly how: "end" | "error" }>((resolve) => {
    const req = get(url, (res) => {
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => {
        received.push(chunk)
        first?.()
      })
      res.on("end", () => resolve({ text: received.join(""), how: "end" }))
      res.on("error", () => resolve({ text: received.join(""), how: "error" }))
      res.on("aborted", () => resolve({ text: received.join(""), how: "error" }))
    })
    req.on("error", () => resolve({ text: received.join(""), how: "error" }))
    // the plain request sends nothing back: it counts as started once sent
    req.on("finish", () => setTimeout(() => first?.(), 50))
  })
  return { started, ended }
}

it.scoped("at the end of the grace an open event stream gets a last error event, then both requests are cut", () =>
  Effect.gen(function* () {
    const { server, origin } = yield* holdingServer
    const drain = makeDrain({ servers: () => [server], graceMillis: 5_000 })
    const scope = yield* Scope.make()
    yield* Layer.buildWithScope(drain.awaitInFlight, scope)

    const events = read(`${origin}/events`)
    const plain = read(`${origin}/plain`)
    yield* Effect.promise(() => Promise.all([events.started, plain.started]))

    const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
    yield* TestClock.adjust("4 seconds")
    // still within the grace: nothing written, nothing cut
    expect(yield* Effect.promise(() => Promise.race([events.ended, new Promise((r) => setTimeout(() => r("open"), 100))]))).toBe(
      "open"
    )
    yield* TestClock.adjust("1 second")
    yield* Fiber.join(closing)

    const stream = yield* Effect.promise(() => events.ended)
    expect(stream.text).toBe(firstFrame + shutdownFrame)
    expect(JSON.parse(shutdownFrame.replace(/^data: /, ""))).toMatchObject({ type: "error", code: "service_unavailable" })
    expect(shutdownFrame).not.toMatch(/^id:/m)
    const cut = yield* Effect.promise(() => plain.ended)
    expect(cut).toEqual({ text: "", how: "error" })
  })
)

it.scoped("a request that ends during the grace ends the wait, without the clock moving", () =>
  Effect.gen(function* () {
    let arrived: (() => void) | undefined
    const reached = new Promise<void>((resolve) => (arrived = resolve))
    const server = createServer((_req, res) => {
      arrived?.()
      setTimeout(() => res.end("done"), 300)
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
      () => Effect.sync(() => server.close())
    )
    const drain = makeDrain({ servers: () => [server], graceMillis: 60_000 })
    const scope = yield* Scope.make()
    yield* Layer.buildWithScope(drain.awaitInFlight, scope)
    const answer = read(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
    yield* Effect.promise(() => reached)
    yield* Scope.close(scope, Exit.void)
    expect(yield* Effect.promise(() => answer.ended)).toEqual({ text: "done", how: "end" })
  })
)
