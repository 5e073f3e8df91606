import SwaggerParser from "@apidevtools/swagger-parser"
import { expect, layer } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import * as Effect from "effect/Effect"
import { Harness, testServer } from "../support/harness.js"

const operations = (spec: any) =>
  Object.entries<any>(spec.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, op]) => ({ path, method, op }))
  )

layer(testServer())("OpenAPI document", (it) => {
  it.effect("passes both strict validators and renders Schema.Unknown without a repeated $id", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const r = yield* h.call("GET", "/v1/openapi.json")
      expect(r.status).toBe(200)
      const result = yield* Effect.promise(() => new Validator().validate(structuredClone(r.body)))
      expect(result.errors ?? []).toEqual([])
      expect(result.valid).toBe(true)
      yield* Effect.promise(() => SwaggerParser.validate(structuredClone(r.body)))
      const ids = [...r.text.matchAll(/"\$id":"([^"]*)"/g)].map((m) => m[1])
      expect(new Set(ids).size).toBe(ids.length)
    })
  )

  it.effect("tells the whole truth: scopes, Idempotency-Key, response headers, integer limit, filter enums", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const spec = (yield* h.call("GET", "/v1/openapi.json")).body
      const api = operations(spec).filter((o) => o.path.startsWith("/v1/"))
      expect(api.length).toBeGreaterThan(20)
      for (const { path, method, op } of api) {
        const label = `${method} ${path}`
        expect(Array.isArray(op["x-scopes"]), label).toBe(true)
        // the form config takes a forms public key (`Service-Api-Key`), which has no scopes
        const formsKey = (op.parameters ?? []).some((p: any) => p.in === "header" && p.name === "service-api-key")
        // the MCP endpoint takes any secret key: each of its tools needs its REST twin's scope (test/mcp)
        if (path === "/v1/mcp") expect(op["x-scopes"], label).toEqual([])
        else if (path !== "/v1/openapi.json" && !formsKey) expect(op["x-scopes"], label).toHaveLength(1)
        if (method === "post") {
          expect(op.parameters.map((p: any) => `${p.in}:${p.name}`), label).toContain("header:Idempotency-Key")
        }
        for (const [status, response] of Object.entries<any>(op.responses)) {
          const names = Object.keys(response.headers ?? {})
          expect(names, `${label} ${status}`).toEqual(
            expect.arrayContaining(["Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"])
          )
          if (status === "429") expect(names, label).toContain("Retry-After")
          if (method === "post") expect(names, label).toContain("Idempotent-Replayed")
        }
        for (const p of op.parameters ?? []) {
          if (p.name === "limit") expect(p.schema, label).toMatchObject({ type: "integer", minimum: 1, maximum: 100 })
        }
      }
      expect(spec.paths["/v1/tickets"].post["x-widget-scopes"]).toEqual(["widget:tickets"])
      // the MCP endpoint is one operation pointing at the protocol it speaks
      expect(spec.paths["/v1/mcp"].post.externalDocs.url).toMatch(/^https:\/\/modelcontextprotocol\.io\//)
      expect(Object.keys(spec.paths["/v1/mcp"])).toEqual(["post"])
      // an OpenAI-compatible completion is JSON or, streamed, events; the reply it names is in its headers
      const completion = spec.paths["/v1/chat/completions"].post.responses["200"]
      expect(Object.keys(completion.content).sort()).toEqual(["application/json", "text/event-stream"])
      expect(completion.content["application/json"].schema.$ref).toBe("#/components/schemas/ChatCompletion")
      expect(Object.keys(completion.headers)).toEqual(expect.arrayContaining(["Conversation-Id", "Message-Id", "Request-Id"]))
      expect(spec.paths["/v1/models/{model}"].get.responses["404"]).toBeDefined()
      const filters = Object.fromEntries(spec.paths["/v1/tickets"].get.parameters.map((p: any) => [p.name, p.schema]))
      expect(filters.status.anyOf[0].enum).toEqual(["open", "pending_user", "resolved"])
      expect(filters.priority.anyOf[1].items.enum).toEqual(["low", "normal", "high", "urgent"])
      expect(filters.origin.enum).toEqual(["api", "widget_button", "ai_escalation", "form"])
      expect(filters.include.enum).toEqual(["total_count"])
    })
  )

  it.effect("carries the reference: the conventions, every group described, every operation summarised, on /docs too", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const spec = (yield* h.call("GET", "/v1/openapi.json")).body
      for (const heading of ["Input policy", "Authentication", "Errors", "Pagination", "Idempotency", "Rate limits", "Events"]) {
        expect(spec.info.description).toContain(`### ${heading}`)
      }
      for (const tag of spec.tags) expect(tag.description?.length ?? 0, tag.name).toBeGreaterThan(300)
      for (const { path, method, op } of operations(spec)) expect(op.summary, `${method} ${path}`).toBeTruthy()
      expect(spec.tags.find((t: any) => t.name === "Tickets").description).toContain("**Status rules.**")
      expect(spec.tags.find((t: any) => t.name === "Conversations and replies").description).toContain("### The event stream")
      // the docs page embeds the document as JSON (with `<` escaped) for Scalar, which renders the Markdown
      const docs = yield* h.call("GET", "/docs")
      expect(docs.status).toBe(200)
      const embedded = (s: string) => JSON.stringify(s).slice(1, -1).replaceAll("<", "\\u003c")
      expect(docs.text).toContain(embedded(spec.info.description))
      for (const tag of spec.tags) expect(docs.text, tag.name).toContain(embedded(tag.description))
    })
  )
})
