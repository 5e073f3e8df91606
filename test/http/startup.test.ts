import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { createServer as netServer } from "node:net"
import * as TestClock from "effect/TestClock"
import { MemoryMailbox } from "../../layers/Mailer.js"
import { Emails } from "../../src/email/Emails.js"
import { makeNodeServer } from "../../src/http/NodeServer.js"
import { Harness, testServer } from "../support/harness.js"

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = netServer()
    s.on("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const address = s.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      s.close(() => resolve(port))
    })
  })

type Probe = { readonly status: number; readonly body: any } | { readonly refused: true } | { readonly hung: string }

const probe = async (url: string): Promise<Probe> => {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(3000) })
    const text = await response.text()
    return { status: response.status, body: text === "" ? null : JSON.parse(text) }
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause
    if (cause?.code === "ECONNREFUSED") return { refused: true }
    return { hung: String((error as Error).name ?? error) }
  }
}

it.live("before the API's handler is attached, a request gets 503 in the envelope at once", () =>
  Effect.gen(function* () {
    const server = makeNodeServer({ docsUrl: "http://127.0.0.1/docs/errors" })()
    yield* Effect.acquireRelease(
      Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))),
      () => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
    )
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    const reply = yield* Effect.promise(() => probe(`http://127.0.0.1:${port}/v1/agents`))
    expect(reply).toMatchObject({
      status: 503,
      body: { error: { code: "service_unavailable", type: "api_error" }, meta: { request_id: expect.stringMatching(/^req_/) } }
    })
    // once a handler is attached it alone answers
    server.on("request", (_req, res) => res.end("ready"))
    const ready = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/`).then((r) => r.text()))
    expect(ready).toBe("ready")
  }).pipe(Effect.scoped)
)

it.live("probing every few milliseconds through startup: every probe is refused or answered, none is held", () =>
  Effect.gen(function* () {
    const port = yield* Effect.promise(freePort)
    const results: Array<Probe> = []
    let stop = false
    const prober = (async () => {
      const started = Date.now()
      // bounded in count and time; stops once the service answers /healthz
      for (let i = 0; i < 3000 && Date.now() - started < 60_000 && !stop; i++) {
        const batch = await Promise.all([
          probe(`http://127.0.0.1:${port}/healthz`),
          probe(`http://127.0.0.1:${port}/v1/agents`)
        ])
        results.push(...batch)
        if (batch.some((r) => "status" in r && r.status === 200)) break
        await new Promise((r) => setTimeout(r, 3))
      }
    })()
    const server = yield* Effect.fork(Layer.launch(testServer({ port })))
    yield* Effect.promise(() => prober)
    stop = true
    yield* Fiber.interrupt(server)
    expect(results.filter((r) => "hung" in r)).toEqual([])
    for (const r of results) {
      if ("status" in r && r.status !== 200) {
        expect([401, 503]).toContain(r.status)
        expect(r.body.meta.request_id).toMatch(/^req_/)
      }
    }
    expect(results.some((r) => "status" in r && r.status === 200)).toBe(true)
  })
)

/** One turn of the event loop (not a timer): lets a fiber's I/O progress. */
const turn = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

it.effect("the background workers start `workersStartAfterMillis` after the port opens: /readyz is answered before", () =>
  Effect.gen(function* () {
    const harness = yield* Harness
    const emails = yield* Emails
    const sent = Effect.flatten(Effect.map(MemoryMailbox, (mailbox) => mailbox.sent))
    yield* emails.enqueue({ to: "early@acme.test", subject: "Early", text: "queued before the workers start" })
    expect((yield* harness.call("GET", "/readyz")).status).toBe(200)
    // no e-mail sender yet, however many turns the event loop takes
    for (let i = 0; i < 50; i++) yield* turn
    expect(yield* sent).toEqual([])
    // once the delay has passed the workers run, and the e-mail queued meanwhile goes out
    yield* TestClock.adjust(500)
    let delivered = yield* sent
    for (let i = 0; i < 2000 && delivered.length === 0; i++) {
      yield* turn
      delivered = yield* sent
    }
    expect(delivered.map((message) => message.to)).toEqual(["early@acme.test"])
  }).pipe(Effect.provide(testServer({ workersStartAfterMillis: 500 })))
)
