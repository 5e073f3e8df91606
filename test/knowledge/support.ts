/** Helpers of the knowledge suites: a local site on 127.0.0.1, agents, and waiting for sources to settle. */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Ai, makeLocal } from "../../layers/Ai.js"
import { eventually } from "../support/eventually.js"
import type { HarnessShape } from "../support/harness.js"

// the smallest valid PNG: 1x1, one grey pixel
export const tinyPng = Uint8Array.from(
  Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABc3UBGAAAAABJRU5ErkJggg==",
    "base64"
  )
)

export interface Hit {
  readonly path: string
  /** `performance.now()` when the request arrived and when its answer was sent. */
  readonly at: number
}

export interface Site {
  readonly origin: string
  readonly hits: Array<Hit>
}

export type Route = (req: IncomingMessage, res: ServerResponse) => void

/** A real HTTP server on 127.0.0.1:<random>; `route` answers, every request is recorded. Closed with the scope. */
export const serveSite = (route: Route, host = "127.0.0.1") =>
  Effect.acquireRelease(
    Effect.async<Site & { readonly close: () => void }>((resume) => {
      const hits: Array<Hit> = []
      const server = createServer((req, res) => {
        hits.push({ path: req.url ?? "", at: performance.now() })
        route(req, res)
      })
      server.listen(0, host, () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ origin: `http://${host}:${port}`, hits, close: () => server.close() }))
      })
      server.on("connection", (socket) => server.once("close", () => socket.destroy()))
    }),
    (site) =>
      Effect.sync(() => {
        site.close()
      })
  )

/** An HTML page about `topic` with a few sections. */
export const page = (title: string, sections: ReadonlyArray<readonly [string, string]>) =>
  `<!doctype html><html><head><title>${title}</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>${title}</h1>
${sections.map(([heading, text]) => `<h2>${heading}</h2>\n<p>${text}</p>`).join("\n")}
</article><footer>Copyright Example Shop</footer></body></html>`

export const html = (res: ServerResponse, body: string, status = 200) => {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" })
  res.end(body)
}

export const createAgent = (h: HarnessShape, key: string, name = "Help desk") =>
  Effect.map(h.call("POST", "/v1/agents", { key, body: { type: "support", name } }), (r) => {
    expect(r.status).toBe(201)
    return r.body.data.id as string
  })

export const source = (h: HarnessShape, key: string, agentId: string, id: string) =>
  Effect.map(h.call("GET", `/v1/agents/${agentId}/knowledge/${id}`, { key }), (r) => r.body.data)

const settled = (s: { status: string }) => s.status === "indexed" || s.status === "failed"

/** Polls until every source named is indexed or failed (bounded: `tries` × ~10 ms plus the calls). */
export const waitSettled = (h: HarnessShape, key: string, agentId: string, ids: ReadonlyArray<string>, tries = 3000) =>
  eventually(
    Effect.forEach(ids, (id) => source(h, key, agentId, id)),
    (sources) => sources.every(settled),
    { tries, label: "sources settled" }
  )

/** The events of a workspace of one type, oldest first, with parsed bodies. */
export const eventsOfType = (workspaceId: string, type: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ body: string }>`
      select body from events where workspace_id = ${workspaceId} and type = ${type} order by seq`
    return rows.map((r) => JSON.parse(r.body) as any)
  }).pipe(Effect.orDie)

/** The local AI provider, but its Q&A step dies (a bug, not an `AiError`) for a document whose title starts "Crash". */
export const dyingAi = Layer.sync(Ai, () => {
  const local = makeLocal()
  return {
    ...local,
    generateQa: (doc, categories) =>
      doc.title.startsWith("Crash")
        ? Effect.die(new TypeError("Cannot read properties of undefined (reading 'qa')"))
        : local.generateQa(doc, categories)
  }
})
