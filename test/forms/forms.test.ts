/**
 * Form management with secret keys, and the public config a forms key reads:
 * validation of definitions, a config that never shows private settings,
 * ETag/304, caching and CORS (keys of the `/v1` endpoints:
 * test/http/security-matrix.test.ts).
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { contactForm, createAgent, origin, withForm } from "./support.js"

const config = (h: HarnessShape, formId: string, headers: Record<string, string>) =>
  h.call("GET", `/v1/forms/${formId}/config`, { headers })

layer(testServer({ secretKey: Redacted.make("forms-test-secret-key") }))("forms", (it) => {

  it.effect("creates a form with defaults, reads, lists, changes and deletes it", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const minimal = yield* h.call("POST", "/v1/forms", {
        key: ws.secretTest,
        body: {
          title: { es: "Soporte" },
          fields: [{ id: "email", type: "email", label: { es: "Correo" } }],
          target: { type: "ticket", agent_id: agentId }
        }
      })
      expect(minimal.status).toBe(201)
      const form = minimal.body.data
      expect(form.id).toMatch(/^frm_/)
      expect(form).toMatchObject({
        object: "form",
        title: { es: "Soporte" },
        submit_label: null,
        success_message: null,
        branding: {},
        width: "fluid",
        appearance: "card",
        target: { type: "ticket", agent_id: agentId },
        settings: { allowed_origins: [], identity_mode: "none", rate_limit: { max: 10, window_seconds: 600 }, honeypot_field: null }
      })
      expect(form.fields[0]).toEqual({
        id: "email",
        type: "email",
        label: { es: "Correo" },
        help: null,
        placeholder: null,
        required: false,
        min_length: null,
        max_length: null,
        pattern: null,
        options: null,
        default_value: null
      })
      const second = yield* withForm(h, ws)

      const read = yield* h.call("GET", `/v1/forms/${form.id}`, { key: ws.secretTest })
      expect(read.body.data).toEqual(form)
      const page = yield* h.call("GET", "/v1/forms?limit=1", { key: ws.secretTest })
      expect(page.body.data.map((f: any) => f.id)).toEqual([second.formId])
      expect(page.body.meta.pagination.has_more).toBe(true)
      const next = yield* h.call("GET", `/v1/forms?limit=1&starting_after=${page.body.meta.pagination.next_cursor}`, {
        key: ws.secretTest
      })
      expect(next.body.data.map((f: any) => f.id)).toEqual([form.id])
      expect(next.body.meta.pagination).toEqual({ has_more: false, next_cursor: null })

      const changed = yield* h.call("PATCH", `/v1/forms/${form.id}`, {
        key: ws.secretTest,
        body: {
          title: { en: "Support" },
          appearance: "bare",
          width: 600,
          settings: { identity_mode: "required", allowed_origins: ["HTTPS://Shop.Example.com/"] }
        }
      })
      expect(changed.status).toBe(200)
      expect(changed.body.data).toMatchObject({
        title: { en: "Support" },
        appearance: "bare",
        width: 600,
        settings: { identity_mode: "required", allowed_origins: ["https://shop.example.com"], rate_limit: { max: 10 } }
      })
      expect(changed.body.data.fields).toEqual(form.fields)

      const deleted = yield* h.call("DELETE", `/v1/forms/${form.id}`, { key: ws.secretTest })
      expect(deleted.body.data).toEqual({ id: form.id, object: "form", deleted: true })
      expect((yield* h.call("GET", `/v1/forms/${form.id}`, { key: ws.secretTest })).status).toBe(404)
      expect((yield* h.call("DELETE", `/v1/forms/${form.id}`, { key: ws.secretTest })).status).toBe(404)
      const gone = yield* config(h, form.id, { "service-api-key": ws.formsTest })
      expect(gone.status).toBe(404)
      expect(gone.body.error.code).toBe("resource_missing")
    })
  )

  it.effect("refuses bad definitions, naming the offending parameter", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const base = contactForm(agentId)
      const withField = (field: Record<string, unknown>) => ({ ...base, fields: [...base.fields, field] })
      const cases: ReadonlyArray<readonly [unknown, number, string, string]> = [
        [withField({ id: "name", type: "text", label: { en: "Again" } }), 400, "parameter_invalid", "fields[8].id"],
        [withField({ id: "colour", type: "select", label: { en: "Colour" } }), 400, "parameter_invalid", "fields[8].options"],
        [
          withField({ id: "x", type: "text", label: { en: "X" }, options: [{ value: "a", label: { en: "A" } }] }),
          400,
          "parameter_invalid",
          "fields[8].options"
        ],
        [withField({ id: "x", type: "checkbox", label: { en: "X" }, pattern: "a" }), 400, "parameter_invalid", "fields[8].pattern"],
        [withField({ id: "x", type: "text", label: { en: "X" }, pattern: "(?=a)a" }), 400, "parameter_invalid", "fields[8].pattern"],
        [withField({ id: "x", type: "text", label: { en: "X" }, pattern: "(a)\\1" }), 400, "parameter_invalid", "fields[8].pattern"],
        [withField({ id: "x", type: "text", label: { en: "X" }, pattern: "(unclosed" }), 400, "parameter_invalid", "fields[8].pattern"],
        [withField({ id: "x", type: "text", label: { en: "X" }, pattern: "a".repeat(201) }), 400, "parameter_invalid", "fields[8].pattern"],
        [withField({ id: "x", type: "text", label: { en: "X" }, min_length: 5, max_length: 2 }), 400, "parameter_invalid", "fields[8].min_length"],
        [withField({ id: "x", type: "text", label: {} }), 400, "parameter_invalid", "fields[8].label"],
        [withField({ id: "Bad Id", type: "text", label: { en: "X" } }), 400, "parameter_invalid", "fields[8].id"],
        [withField({ id: "x", type: "radio", label: { en: "X" } }), 400, "parameter_invalid", "fields[8].type"],
        [withField({ id: "website", type: "text", label: { en: "Site" } }), 400, "parameter_invalid", "fields[8].id"],
        [{ ...base, branding: { "--service-colour": "red" } }, 400, "parameter_invalid", "branding.--service-colour"],
        [{ ...base, branding: { "--service-accent": "red; background: url(x)" } }, 400, "parameter_invalid", "branding.--service-accent"],
        [{ ...base, branding: { "--service-bg": "url(https://evil.test/x.png)" } }, 400, "parameter_invalid", "branding.--service-bg"],
        [{ ...base, width: "wide" }, 400, "parameter_invalid", "width"],
        [{ ...base, appearance: "shiny" }, 400, "parameter_invalid", "appearance"],
        [{ ...base, settings: { allowed_origins: ["https://shop.example.com/path"] } }, 400, "parameter_invalid", "settings.allowed_origins[0]"],
        [{ ...base, settings: { identity_mode: "sometimes" } }, 400, "parameter_invalid", "settings.identity_mode"],
        [{ ...base, settings: { rate_limit: { max: 0, window_seconds: 60 } } }, 400, "parameter_invalid", "settings.rate_limit.max"],
        [{ ...base, target: { type: "ticket" } }, 400, "parameter_missing", "target.agent_id"],
        [{ ...base, target: { type: "ticket", agent_id: "agt_doesnotexist00000000" } }, 404, "resource_missing", "target.agent_id"],
        [{ ...base, fields: [] }, 400, "parameter_invalid", "fields"],
        [{ ...base, colour: "red" }, 400, "parameter_invalid", "colour"]
      ]
      for (const [body, status, code, param] of cases) {
        const reply = yield* h.call("POST", "/v1/forms", { key: ws.secretTest, body })
        expect(reply.status, JSON.stringify(body).slice(-200)).toBe(status)
        expect(reply.body.error.code, reply.text).toBe(code)
        expect(reply.body.error.param, reply.text).toBe(param)
      }
      const { formId } = yield* withForm(h, ws)
      const clash = yield* h.call("PATCH", `/v1/forms/${formId}`, {
        key: ws.secretTest,
        body: { settings: { honeypot_field: "email" } }
      })
      expect(clash.status).toBe(400)
      expect(clash.body.error.param).toBe("settings.honeypot_field")
      // a valid Unicode-sets pattern is accepted
      const ok = yield* h.call("POST", "/v1/forms", {
        key: ws.secretTest,
        body: withField({ id: "code", type: "text", label: { en: "Code" }, pattern: "[\\p{L}--[a-z]]{2}-\\d{3}" })
      })
      expect(ok.status, ok.text).toBe(201)
    })
  )

  describe("public config", () => {
    it.effect("shows the public part only, to a forms key of the form's environment", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed({ plan: "pro" })
        const { formId, form } = yield* withForm(h, ws, { identity_mode: "required" })
        yield* h.call("POST", "/v1/identity_secret/rotate", { key: ws.secretTest })
        const reply = yield* config(h, formId, { "service-api-key": ws.formsTest })
        expect(reply.status).toBe(200)
        const data = reply.body.data
        expect(Object.keys(data).sort()).toEqual(
          ["id", "object", "livemode", "title", "fields", "submit_label", "success_message", "branding", "width", "appearance"].sort()
        )
        expect(data).toMatchObject({ id: formId, object: "form_config", livemode: false, fields: form.fields, width: "480px" })
        for (const secretish of ["settings", "target", "shop.example.com", "website", "identity", "rate_limit", "idsec_", form.target.agent_id]) {
          expect(reply.text.includes(secretish), secretish).toBe(false)
        }
        expect(reply.body.meta.request_id).toMatch(/^req_/)
        expect(reply.headers.get("cache-control")).toBe("public, max-age=60, must-revalidate")
        expect(reply.headers.get("vary")).toContain("Service-Api-Key")

        const missing = yield* config(h, formId, {})
        expect([missing.status, missing.body.error.code, missing.body.error.param]).toEqual([401, "missing_authorization", "Service-Api-Key"])
        const unknown = yield* config(h, formId, { "service-api-key": "pk_test_unknownunknownunknown00" })
        expect([unknown.status, unknown.body.error.code]).toEqual([401, "invalid_api_key"])
        const secret = yield* config(h, formId, { "service-api-key": ws.secretTest })
        expect([secret.status, secret.body.error.code]).toEqual([403, "key_scope_mismatch"])
        const widget = yield* config(h, formId, { "service-api-key": ws.widgetTest })
        expect([widget.status, widget.body.error.code]).toEqual([403, "key_scope_mismatch"])
        // a secret key in Authorization does not stand in for the forms key
        const bearer = yield* h.call("GET", `/v1/forms/${formId}/config`, { key: ws.secretTest })
        expect(bearer.status).toBe(401)
        const revoked = yield* ws.key({ kind: "forms" })
        yield* ws.revoke(revoked.id)
        expect((yield* config(h, formId, { "service-api-key": revoked.secret })).status).toBe(401)
        const live = yield* ws.key({ kind: "forms", environment: "live" })
        const crossed = yield* config(h, formId, { "service-api-key": live.secret })
        expect([crossed.status, crossed.body.error.code, crossed.body.error.param]).toEqual([404, "resource_missing", "form_id"])
        const other = yield* h.seed()
        expect((yield* config(h, formId, { "service-api-key": other.formsTest })).status).toBe(404)
        const malformed = yield* config(h, "nope", { "service-api-key": ws.formsTest })
        expect(malformed.status).toBe(400)
      })
    )

    it.effect("revalidates with the ETag: 304 while the public part is unchanged", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { formId } = yield* withForm(h, ws)
        const key = { "service-api-key": ws.formsTest }
        const first = yield* config(h, formId, key)
        const etag = first.headers.get("etag")!
        expect(etag).toMatch(/^"[A-Za-z0-9_-]{20,}"$/)
        expect((yield* config(h, formId, key)).headers.get("etag")).toBe(etag)

        const cached = yield* config(h, formId, { ...key, "if-none-match": etag })
        expect(cached.status).toBe(304)
        expect(cached.text).toBe("")
        expect(cached.headers.get("etag")).toBe(etag)
        expect(cached.headers.get("cache-control")).toContain("max-age=60")
        expect((yield* config(h, formId, { ...key, "if-none-match": `W/${etag}, "other"` })).status).toBe(304)
        expect((yield* config(h, formId, { ...key, "if-none-match": '"other"' })).status).toBe(200)

        // private settings are not part of the config: same ETag
        yield* h.call("PATCH", `/v1/forms/${formId}`, { key: ws.secretTest, body: { settings: { rate_limit: { max: 3, window_seconds: 60 } } } })
        expect((yield* config(h, formId, { ...key, "if-none-match": etag })).status).toBe(304)
        // a public change is
        yield* h.call("PATCH", `/v1/forms/${formId}`, { key: ws.secretTest, body: { title: { en: "New title" } } })
        const changed = yield* config(h, formId, { ...key, "if-none-match": etag })
        expect(changed.status).toBe(200)
        expect(changed.headers.get("etag")).not.toBe(etag)
        expect(changed.body.data.title).toEqual({ en: "New title" })
      })
    )

    it.effect("answers CORS for the allowed origins only, preflights included", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { formId } = yield* withForm(h, ws)
        const key = { "service-api-key": ws.formsTest }
        const allowed = yield* config(h, formId, { ...key, origin })
        expect(allowed.headers.get("access-control-allow-origin")).toBe(origin)
        expect(allowed.headers.get("access-control-expose-headers")).toContain("ETag")
        expect(allowed.headers.get("vary")).toContain("Origin")
        const other = yield* config(h, formId, { ...key, origin: "https://evil.example.net" })
        expect(other.status).toBe(200)
        expect(other.headers.get("access-control-allow-origin")).toBeNull()
        // errors carry CORS too, so the page can read why
        const noKey = yield* config(h, formId, { origin })
        expect(noKey.status).toBe(401)
        expect(noKey.headers.get("access-control-allow-origin")).toBe(origin)

        for (const path of [`/v1/forms/${formId}/config`, `/api/forms/${formId}/submit`]) {
          const pre = yield* h.call("OPTIONS", path, {
            headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "service-api-key" }
          })
          expect(pre.status, path).toBe(204)
          expect(pre.headers.get("access-control-allow-origin")).toBe(origin)
          expect(pre.headers.get("access-control-allow-headers")).toContain("Service-Api-Key")
          expect(pre.headers.get("access-control-allow-methods")).toContain(path.endsWith("config") ? "GET" : "POST")
          const refused = yield* h.call("OPTIONS", path, { headers: { origin: "https://evil.example.net" } })
          expect(refused.status).toBe(204)
          expect(refused.headers.get("access-control-allow-origin")).toBeNull()
        }
        const unknownForm = yield* h.call("OPTIONS", "/v1/forms/frm_doesnotexist0000/config", { headers: { origin } })
        expect(unknownForm.headers.get("access-control-allow-origin")).toBeNull()

        // no allowed origins: any page may use the form
        yield* h.call("PATCH", `/v1/forms/${formId}`, { key: ws.secretTest, body: { settings: { allowed_origins: [] } } })
        const any = yield* config(h, formId, { ...key, origin: "https://anywhere.example.org" })
        expect(any.headers.get("access-control-allow-origin")).toBe("https://anywhere.example.org")
      })
    )
  })

  it.effect("rotating the identity secret returns a new one each time, shown once", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed({ plan: "pro" })
      const first = yield* h.call("POST", "/v1/identity_secret/rotate", { key: ws.secretTest })
      expect(first.status).toBe(200)
      expect(first.body.data).toMatchObject({ object: "identity_secret", environment: "test" })
      expect(first.body.data.secret).toMatch(/^idsec_[A-Za-z0-9]{48}$/)
      const second = yield* h.call("POST", "/v1/identity_secret/rotate", { key: ws.secretTest })
      expect(second.body.data.secret).not.toBe(first.body.data.secret)
      const live = yield* h.call("POST", "/v1/identity_secret/rotate", { key: ws.secretLive })
      expect(live.body.data.environment).toBe("live")
    })
  )
})
