/**
 * The end of the shutdown grace (src/http/Drain.ts) over real sockets, with the
 * grace on the TestClock: an event stream still open gets a last `error` event
 * (without an `id:`, so `Last-Event-ID` resumes where the reader was) before its
 * connection closes; a plain request still open is cut; a stream that ended
 * during the grace ends the wait at once.
 *
 * And the order of a stop of the whole server (`shutdownOrder` of src/Server.ts),
 * as observed: listeners closed, then the workers stopped (a held ingestion job
 * handed back), then the requests in flight finished, then the services and the
 * database closed.
 */
import { expect, it } from "@effect/vitest"
import * as HttpServer from "@effect/platform/HttpServer"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { createServer, get, request, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as Ai from "../../layers/Ai.js"
import * as Fetcher from "../../layers/Fetcher.js"
import * as FileStorage from "../../layers/FileStorage.js"
import { layerLive as idsLive } from "../../layers/IdGenerator.js"
import * as Mailer from "../../layers/Mailer.js"
import * as Ocr from "../../layers/Ocr.js"
import * as RateLimitStore from "../../layers/RateLimitStore.js"
import { ApiKeys } from "../../src/auth/ApiKeys.js"
import { makeDrain, shutdownFrame } from "../../src/http/Drain.js"
import { INGEST_QUEUE } from "../../src/knowledge/Knowledge.js"
import { makeServer } from "../../src/Server.js"
import { Workspaces } from "../../src/workspaces/Workspaces.js"
import { testDatabaseLayer } from "../support/database.js"
import { eventually } from "../support/eventually.js"
import { testConfig } from "../support/harness.js"

const firstFrame = `id: 1\ndata: ${JSON.stringify({ type: "token", content: "Hel" })}\n\n`

/**
 * `/events` opens an event stream and sends one frame; `/plain` never answers. `arrived(path)` resolves with the
 * server's response once the server has emitted the request (the drain's listener, first in line, has it then).
 */
const holdingServer = Effect.acquireRelease(
  Effect.async<{
    readonly server: Server
    readonly origin: string
    readonly arrived: (path: string) => Promise<ServerResponse>
  }>((resume) => {
    const arrivals = new Map<string, { readonly promise: Promise<ServerResponse>; readonly resolve: (res: ServerResponse) => void }>()
    const arrival = (path: string) => {
      let entry = arrivals.get(path)
      if (entry === undefined) {
        let resolve: (res: ServerResponse) => void = () => {}
        const promise = new Promise<ServerResponse>((r) => (resolve = r))
        entry = { promise, resolve }
        arrivals.set(path, entry)
      }
      return entry
    }
    const server = createServer((req, res) => {
      arrival(req.url ?? "").resolve(res)
      if (req.url === "/events") {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        res.write(firstFrame)
      }
    })
    server.listen(0, "127.0.0.1", () =>
      resume(
        Effect.succeed({
          server,
          origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          arrived: (path: string) => arrival(path).promise
        })
      )
    )
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

/** Whether the server has neither ended a response nor closed its connection. */
const untouched = (res: ServerResponse) => !res.writableEnded && res.socket !== null && !res.socket.destroyed

/** A GET whose body is collected until the connection ends: the text, and how it ended; `started` at its first bytes. */
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
  })
  return { started, ended }
}

it.scoped("at the end of the grace an open event stream gets a last error event, then both requests are cut", () =>
  Effect.gen(function* () {
    const { server, origin, arrived } = yield* holdingServer
    const drain = makeDrain({ servers: () => [server], graceMillis: 5_000 })
    const scope = yield* Scope.make()
    yield* Layer.buildWithScope(drain.awaitInFlight, scope)

    const events = read(`${origin}/events`)
    const plain = read(`${origin}/plain`)
    // the plain request sends nothing back: it is in flight once the server has it
    const [, eventsResponse, plainResponse] = yield* Effect.promise(() =>
      Promise.all([events.started, arrived("/events"), arrived("/plain")])
    )
    const written = eventsResponse.socket!.bytesWritten

    const stoppedAt = yield* Clock.currentTimeMillis
    const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
    yield* TestClock.adjust("4 seconds")
    // still within the grace: the stop still waits on its deadline, nothing written, nothing cut (the server's side)
    expect(Option.isNone(yield* Fiber.poll(closing))).toBe(true)
    expect(Chunk.toReadonlyArray(yield* TestClock.sleeps())).toContain(stoppedAt + 5_000)
    expect([untouched(eventsResponse), untouched(plainResponse)]).toEqual([true, true])
    expect(eventsResponse.socket!.bytesWritten).toBe(written)
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
    let arrived: ((res: ServerResponse) => void) | undefined
    const reached = new Promise<ServerResponse>((resolve) => (arrived = resolve))
    const server = createServer((_req, res) => arrived?.(res))
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
      () => Effect.sync(() => server.close())
    )
    const drain = makeDrain({ servers: () => [server], graceMillis: 60_000 })
    const scope = yield* Scope.make()
    yield* Layer.buildWithScope(drain.awaitInFlight, scope)
    const answer = read(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
    const response = yield* Effect.promise(() => reached)
    const stoppedAt = yield* Clock.currentTimeMillis
    const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
    // the request ends once the stop waits on its grace
    yield* eventually(
      Effect.map(TestClock.sleeps(), (deadlines) => Chunk.toReadonlyArray(deadlines).includes(stoppedAt + 60_000)),
      (waiting) => waiting,
      { label: "the stop waits for the request" }
    )
    response.end("done")
    yield* Fiber.join(closing)
    expect(yield* Effect.promise(() => answer.ended)).toEqual({ text: "done", how: "end" })
  })
)

/**
 * A POST whose body is sent in two halves: in flight until `finish()`; its status and `Connection` header.
 * It asks for `100 Continue`, which Node's server sends as it hands the request to its handlers: `received`.
 */
const slowPost = (url: string, key: string, body: unknown) => {
  const bytes = Buffer.from(JSON.stringify(body))
  const target = new URL(url)
  const req = request({
    host: target.hostname,
    port: target.port,
    path: target.pathname,
    method: "POST",
    agent: false,
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      "content-length": bytes.length,
      expect: "100-continue"
    }
  })
  const received = new Promise<void>((resolve) => req.once("continue", () => resolve()))
  const answered = new Promise<{ readonly status: number; readonly connection: string | undefined }>((resolve, reject) => {
    req.on("response", (res) => {
      res.resume()
      res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }))
    })
    req.on("error", reject)
  })
  req.write(bytes.subarray(0, 10))
  return { received, answered, finish: () => req.end(bytes.subarray(10)) }
}

it.scoped("a stop closes the listeners, then stops the workers (their jobs handed back), then waits for requests in flight, then closes the services and the database", () => {
  const events: Array<string> = []
  const seen = (event: string) => eventually(Effect.sync(() => events.includes(event)), (found) => found, { label: event })
  // the two stages of http/Drain.ts say when they are done
  const logged = Logger.make(({ message }) => {
    const text = (Array.isArray(message) ? message : [message]).join(" ")
    if (text.startsWith("shutting down: listeners closed")) events.push("listeners closed")
    if (text.startsWith("shutting down: requests in flight ended")) events.push("requests finished")
  })
  return Effect.gen(function* () {
    // every page is held until the worker fetching it is interrupted
    const fetcher = Fetcher.layerTest(
      () => Fetcher.response(200),
      () =>
        Effect.zipRight(
          Effect.sync(() => events.push("page requested")),
          Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => events.push("workers stopped"))))
        )
    )
    // closes just before the database, after everything built on it: the held job's lease must be released by then
    let ingestJobs: ReadonlyArray<unknown> = []
    const database = Layer.scopedDiscard(
      Effect.addFinalizer(() =>
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql`select status, locked_until from jobs where queue = ${INGEST_QUEUE}`.pipe(
            Effect.orDie,
            Effect.map((rows) => {
              ingestJobs = rows
              events.push("services closed")
            })
          )
        )
      )
    ).pipe(Layer.provideMerge(testDatabaseLayer))
    const server = makeServer({
      config: testConfig(),
      database,
      rateLimitStore: RateLimitStore.layerMemory,
      ids: idsLive,
      mailer: Mailer.layerMemory,
      fetcher,
      ai: Ai.layerLocal,
      ocr: Ocr.layerFixed("text"),
      fileStorage: FileStorage.layerMemory
    })

    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(server, scope)
    const address = Context.get(context, HttpServer.HttpServer).address
    const origin = address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : ""
    const workspace = yield* Context.get(context, Workspaces).create({ name: "Acme", owner_email: "owner@acme.test", plan: "free" })
    const { secret } = yield* Context.get(context, ApiKeys).create({ workspaceId: workspace.id, environment: "test", kind: "secret" })
    const post = (path: string, body: unknown) =>
      Effect.promise(() =>
        fetch(`${origin}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
          body: JSON.stringify(body)
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { data: { id: string } } }))
      )
    const agent = yield* post("/v1/agents", { type: "support", name: "Support" })
    expect(agent.status).toBe(201)
    const source = yield* post(`/v1/agents/${agent.body.data.id}/knowledge`, { type: "url", url: "https://example.com/held" })
    expect(source.status).toBe(201)
    yield* seen("page requested")
    const inFlight = slowPost(`${origin}/v1/agents`, secret, { type: "support", name: "Created during the stop" })
    // the request reaches the handler, which waits for the rest of its body
    yield* Effect.promise(() => inFlight.received)

    const stopping = yield* Effect.fork(Scope.close(scope, Exit.void))
    yield* seen("listeners closed")
    inFlight.finish()
    expect(yield* Effect.promise(() => inFlight.answered)).toEqual({ status: 201, connection: "close" })
    yield* Fiber.join(stopping)

    expect(events).toEqual(["page requested", "listeners closed", "workers stopped", "requests finished", "services closed"])
    // handed back: pending again, no lease, for another instance to take at once
    expect(ingestJobs).toEqual([{ status: "pending", locked_until: null }])
  }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logged)))
})
