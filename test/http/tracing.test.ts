import { expect, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { layerOtlp } from "../../layers/Tracing.js"
import { eventually } from "../support/eventually.js"
import { Harness, testServer } from "../support/harness.js"

interface OtlpSpan {
  readonly name: string
  readonly attributes?: ReadonlyArray<{ readonly key: string; readonly value: { readonly stringValue?: string } }>
}

/** A fake OTLP/HTTP collector on loopback: the JSON bodies POSTed to `/v1/traces`. */
class Collector extends Context.Tag("Test/Collector")<Collector, { readonly bodies: Array<string> }>() {}

const fakeCollector = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly bodies: Array<string>; readonly close: () => void }>((resume) => {
    const bodies: Array<string> = []
    const server = createServer((req, res) => {
      let body = ""
      req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
      req.on("end", () => {
        if (req.method === "POST" && req.url === "/v1/traces") bodies.push(body)
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resume(
        Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          bodies,
          close: () => server.close()
        })
      )
    )
  }),
  (collector) => Effect.sync(collector.close)
)

const withCollector = Layer.unwrapScoped(
  Effect.map(fakeCollector, (collector) =>
    testServer().pipe(
      Layer.provide(layerOtlp({ endpoint: collector.url, serviceName: "assistant-platform-test", exportDelayMillis: 20 })),
      Layer.merge(Layer.succeed(Collector, { bodies: collector.bodies }))
    )
  )
)

const spansIn = (bodies: ReadonlyArray<string>): Array<OtlpSpan> =>
  bodies.flatMap((body) => {
    const parsed = JSON.parse(body) as {
      resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<OtlpSpan> }> }>
    }
    return (parsed.resourceSpans ?? []).flatMap((r) => (r.scopeSpans ?? []).flatMap((s) => s.spans ?? []))
  })

const attribute = (span: OtlpSpan, key: string) => span.attributes?.find((a) => a.key === key)?.value.stringValue

layer(withCollector)("OpenTelemetry", (it) => {
  it.effect("a request's server span reaches the OTLP collector with its route; key headers redacted", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const collector = yield* Collector
      const ws = yield* h.seed()
      const created = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Traced" } })
      const read = yield* h.call("GET", `/v1/agents/${created.body.data.id}`, { key: ws.secretTest })
      expect(read.status).toBe(200)
      const spans = yield* eventually(
        Effect.sync(() => spansIn(collector.bodies)),
        (all) =>
          all.some((s) => s.name === "http.server GET" && attribute(s, "http.route") === "/v1/agents/:id") &&
          all.some((s) => s.name === "Agents.retrieve"),
        { label: "the GET's server span and its program's span" }
      )
      const server = spans.find((s) => s.name === "http.server GET" && attribute(s, "http.route") === "/v1/agents/:id")!
      expect(attribute(server, "http.request.method")).toBe("GET")
      expect(collector.bodies.join("\n")).not.toContain(ws.secretTest)
    })
  )
})

it("without OTEL_EXPORTER_OTLP_ENDPOINT nothing loads OpenTelemetry: Service.ts imports it dynamically, nothing else at all", () => {
  const sources = ["src/Service.ts", "src/main.ts", "src/Server.ts", "src/http/Edge.ts"].map((f) => readFileSync(new URL(`../../${f}`, import.meta.url), "utf8"))
  for (const source of sources) {
    expect(source).not.toMatch(/^import [^\n]*(opentelemetry|Tracing\.js)/m)
  }
  expect(sources[0]).toContain('import("../layers/Tracing.js")')
})
