/**
 * Property: whatever a client sends to any operation of the OpenAPI document,
 * the service answers (no dropped connection), never with a 5xx, and every
 * error is in the envelope with `meta.request_id`; a body the input policy
 * refuses (NUL, a lone UTF-16 surrogate) is `400 parameter_invalid`, never
 * stored nor a 5xx. Afterwards `/readyz` is 200
 * and another workspace's data is unchanged. `FUZZ_RUNS` sets the number of
 * requests (`npm run fuzz` for the long run).
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { Harness, testServer } from "../support/harness.js"
import { type FuzzRequest, operationsOf, requestFor } from "./openapi-arbitraries.js"

const runs = Number(process.env["FUZZ_RUNS"] ?? 2000)
// a failure prints its seed; FUZZ_SEED replays that run
const seed = process.env["FUZZ_SEED"] === undefined ? {} : { seed: Number(process.env["FUZZ_SEED"]) }
const perRequestTimeoutMs = 10_000

interface Outcome {
  readonly status: number
  readonly body: any
}

const send = async (url: string, request: FuzzRequest): Promise<Outcome> => {
  const response = await fetch(`${url}${request.path}`, {
    method: request.method,
    headers: request.headers,
    signal: AbortSignal.timeout(perRequestTimeoutMs),
    ...(request.body === undefined ? {} : { body: request.body })
  })
  const text = await response.text()
  let body: any = text
  try {
    body = text === "" ? null : JSON.parse(text)
  } catch {
    // not JSON: the body stays the text
  }
  return { status: response.status, body }
}

layer(testServer({ rateLimit: { rps: 1_000_000, burst: 1_000_000 } }))("fuzz from the OpenAPI document", (it) => {
  it.effect(
    `${runs} hostile requests: no 5xx, no dropped connection, every error in the envelope`,
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const spec = (yield* h.call("GET", "/v1/openapi.json")).body
        // every surface of the document, each called with the key it takes (the others are covered by the matrices)
        const operations = operationsOf(spec).filter((o) => o.path.startsWith("/v1/") || o.path.startsWith("/widget/v1/"))

        // data of another workspace, which no fuzzed request may change
        const other = yield* h.seed()
        const agent = (yield* h.call("POST", "/v1/agents", { key: other.secretTest, body: { type: "support", name: "Keep" } })).body.data
        yield* h.call("POST", "/v1/tickets", { key: other.secretTest, body: { agent_id: agent.id, subject: "Keep", metadata: { a: 1 } } })
        yield* h.call("POST", "/v1/webhooks", { key: other.secretTest, body: { url: "http://127.0.0.1:9/keep", events: ["agent.created"] } })
        const snapshot = () =>
          Effect.all(["/v1/agents", "/v1/tickets", "/v1/webhooks"].map((p) => h.call("GET", p, { key: other.secretTest }))).pipe(
            Effect.map((replies) => replies.map((r) => r.body.data))
          )
        const before = yield* snapshot()

        // the fuzzed workspace, with real ids so some requests reach the programs
        const ws = yield* h.seed({ plan: "pro" })
        const mine = (yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Fuzz" } })).body.data
        const ticket = (yield* h.call("POST", "/v1/tickets", { key: ws.secretTest, body: { agent_id: mine.id, subject: "Fuzz" } })).body.data
        const hook = (yield* h.call("POST", "/v1/webhooks", { key: ws.secretTest, body: { url: "http://127.0.0.1:9/fuzz", events: ["ticket.created"] } })).body.data
        const ids = [mine.id, ticket.public_id, hook.id, agent.id, "agt_unknown000000000000000"]

        const perOperation = new Map<string, number>()
        const statuses = new Map<number, number>()
        const failures: Array<string> = []
        let refusedBodies = 0
        const arbitrary = fc
          .constantFrom(...operations)
          .chain((op) => requestFor(spec, op, { key: op.path.startsWith("/widget/") ? ws.widgetTest : ws.secretTest, ids }))
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(arbitrary, async (request) => {
              perOperation.set(request.operationId, (perOperation.get(request.operationId) ?? 0) + 1)
              let outcome: Outcome
              try {
                outcome = await send(h.url, request)
              } catch (error) {
                failures.push(`${request.method} ${request.path.slice(0, 120)} [${request.broken}]: ${String(error)}`)
                return false
              }
              statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1)
              if (request.expected !== undefined) refusedBodies++
              const ok =
                outcome.status < 500 &&
                (outcome.status < 400 ||
                  (typeof outcome.body?.error?.code === "string" && /^req_/.test(outcome.body?.meta?.request_id ?? ""))) &&
                (request.expected === undefined ||
                  (outcome.status === request.expected.status && outcome.body?.error?.code === request.expected.code))
              if (!ok) {
                failures.push(`${request.method} ${request.path.slice(0, 120)} [${request.broken}]: ${outcome.status} ${JSON.stringify(outcome.body).slice(0, 300)}`)
              }
              return ok
            }),
            { numRuns: runs, endOnFailure: true, ...seed }
          ).catch((error) => {
            failures.push(String(error).slice(0, 2000))
          })
        )
        const total = [...statuses.values()].reduce((a, b) => a + b, 0)
        const fivexx = [...statuses.entries()].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0)
        console.log(
          `fuzz: ${total} requests over ${perOperation.size}/${operations.length} operations; ${refusedBodies} with a refused string; 5xx: ${fivexx}; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`
        )
        expect(failures).toEqual([])
        expect(fivexx).toBe(0)
        if (runs >= 500) expect(perOperation.size).toBe(operations.length)
        if (runs >= 500) expect(refusedBodies).toBeGreaterThan(0)

        expect((yield* h.call("GET", "/readyz")).status).toBe(200)
        expect(yield* snapshot()).toEqual(before)
      }),
    Math.max(60_000, runs * 60)
  )
})
