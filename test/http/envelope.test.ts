import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ErrorCatalog } from "../../schema/Errors.js"
import * as Endpoints from "../../src/http/Endpoints.js"
import { Harness, type Reply, testServer } from "../support/harness.js"

const expectErrorEnvelope = (reply: Reply, status: number, code: string) => {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.headers.get("content-type")).toContain("application/json")
  expect(Object.keys(reply.body).sort()).toEqual(["error", "meta"])
  const { error, meta } = reply.body
  expect(error.code).toBe(code)
  expect(typeof error.message).toBe("string")
  expect(error.message.length).toBeGreaterThan(0)
  expect(error.doc_url).toMatch(new RegExp(`/docs/errors#${code}$`))
  expect(["invalid_request", "authentication_error", "permission_error", "idempotency_error", "rate_limit_error", "api_error"]).toContain(error.type)
  expect(meta.request_id).toMatch(/^req_[A-Za-z0-9]{24}$/)
  expect(reply.headers.get("request-id")).toBe(meta.request_id)
}

layer(testServer())("envelope", (it) => {
  it.effect("success bodies are { data, meta.request_id } and the id is also the Request-Id header", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const created = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "training", name: "T" } })
      expect(Object.keys(created.body).sort()).toEqual(["data", "meta"])
      expect(created.body.meta.request_id).toBe(created.headers.get("request-id"))
      const listed = yield* h.call("GET", "/v1/agents", { key: ws.secretTest })
      expect(listed.body.meta).toMatchObject({ pagination: { has_more: false, next_cursor: null } })
      expect(listed.body.meta.request_id).not.toBe(created.body.meta.request_id)
      for (const header of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
        expect(listed.headers.get(header), header).toMatch(/^[0-9]+$/)
      }
    })
  )

  describe("every failure path answers in the envelope", () => {
    it.effect("auth, routing, method, JSON, media type, decoding", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        expectErrorEnvelope(yield* h.call("GET", "/v1/agents"), 401, "missing_authorization")
        expectErrorEnvelope(yield* h.call("GET", "/v1/agents", { key: "sk_live_doesnotexist0000000000" }), 401, "invalid_api_key")
        expectErrorEnvelope(yield* h.call("GET", "/v1/agents", { key: ws.widgetTest }), 403, "key_scope_mismatch")
        expectErrorEnvelope(yield* h.call("GET", "/v1/nope", { key }), 404, "route_not_found")
        expectErrorEnvelope(yield* h.call("GET", "/", {}), 404, "route_not_found")
        const wrongMethod = yield* h.call("PUT", "/v1/agents", { key, body: {} })
        expectErrorEnvelope(wrongMethod, 405, "method_not_allowed")
        expect(wrongMethod.headers.get("allow")).toBe("POST, GET")
        expectErrorEnvelope(yield* h.call("POST", "/v1/agents", { key, body: "{\"type\": " }), 400, "parameter_invalid")
        expectErrorEnvelope(
          yield* h.call("POST", "/v1/agents", { key, body: "type=support", headers: { "content-type": "application/x-www-form-urlencoded" } }),
          415,
          "unsupported_media_type"
        )
        const decode = yield* h.call("POST", "/v1/agents", { key, body: { type: "support", name: ["x"] } })
        expectErrorEnvelope(decode, 400, "parameter_invalid")
        expect(decode.body.error.param).toBe("name")
        const badId = yield* h.call("GET", "/v1/agents/not-an-id", { key })
        expectErrorEnvelope(badId, 400, "parameter_invalid")
        expect(badId.body.error.param).toBe("id")
        expectErrorEnvelope(yield* h.call("GET", "/v1/agents/agt_0000000000000000", { key }), 404, "resource_missing")
        expectErrorEnvelope(
          yield* h.call("POST", "/v1/agents", { key, body: JSON.stringify({ type: "support", name: "x".repeat(3 * 1024 * 1024) }) }),
          413,
          "payload_too_large"
        )
      })
    )

    it.effect("a defect is 500 internal_error with no internals in the body", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const sql = yield* SqlClient.SqlClient
        yield* Effect.orDie(sql`alter table agents rename to agents_away`)
        const reply = yield* h.call("GET", "/v1/agents", { key: ws.secretTest })
        yield* Effect.orDie(sql`alter table agents_away rename to agents`)
        expectErrorEnvelope(reply, 500, "internal_error")
        expect(reply.body.error.type).toBe("api_error")
        expect(reply.text).not.toMatch(/agents|relation|SqlError|stack|at /i)
      })
    )
  })

  it.effect("health and readiness; readiness fails when migrations are missing", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      expect((yield* h.call("GET", "/healthz")).body).toEqual({ status: "ok" })
      const ready = yield* h.call("GET", "/readyz")
      expect(ready.status).toBe(200)
      expect(ready.body).toMatchObject({ status: "ready", migrations: "applied" })
      const sql = yield* SqlClient.SqlClient
      const saved = yield* Effect.orDie(sql<{ migration_id: number; name: string; created_at: Date }>`select * from schema_migrations`)
      yield* Effect.orDie(sql`delete from schema_migrations`)
      const notReady = yield* h.call("GET", "/readyz")
      for (const row of saved) yield* Effect.orDie(sql`insert into schema_migrations ${sql.insert(row)}`)
      expectErrorEnvelope(notReady, 503, "service_unavailable")
    })
  )

  it.effect("the OpenAPI document lists every route, and its error bodies are the real envelope", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const doc = (yield* h.call("GET", "/v1/openapi.json")).body
      expect(doc.openapi).toBe("3.1.0")
      for (const route of Endpoints.all()) {
        const path = route.path.replace(/:([A-Za-z_]+)/g, "{$1}")
        expect(doc.paths[path]?.[route.method.toLowerCase()], `${route.method} ${path}`).toBeDefined()
      }
      const retrieve = doc.paths["/v1/agents/{id}"].get
      const notFound = retrieve.responses["404"].content["application/json"].schema
      const refs = JSON.stringify(notFound)
      expect(refs).toContain("Error_resource_missing")
      const body = doc.components.schemas["Error_resource_missing"]
      expect(Object.keys(body.properties).sort()).toEqual(["error", "meta"])
      expect(body.properties.error.properties.code.enum).toEqual(["resource_missing"])
      expect(JSON.stringify(doc)).not.toContain("HttpApiDecodeError")
      expect(doc.components.securitySchemes).toMatchObject({
        bearer: { type: "http", scheme: "bearer" },
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" }
      })
    })
  )

  it.effect("the docs pages render, and /docs/errors lists every code", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const docs = yield* h.call("GET", "/docs")
      expect(docs.status).toBe(200)
      expect(docs.headers.get("content-type")).toContain("text/html")
      const errors = yield* h.call("GET", "/docs/errors")
      for (const cls of ErrorCatalog) expect(errors.text).toContain(`id="${cls.code}"`)
      // the descriptions' Markdown code spans are rendered, not shown as backticks
      expect(errors.text).toContain("<code>limit</code> must be an integer")
      expect(errors.text).not.toContain("`")
    })
  )
})
