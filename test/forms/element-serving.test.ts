/**
 * How the component's script and the demo page are served (no browser needed):
 * the script's content type, caching with ETag/304 and open CORS, without any
 * key; the build function writing the same bytes; the demo page refusing
 * anything but a sandbox forms key of the form's workspace, and escaping what
 * it places in HTML.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { elementPath, writeElementBundle } from "../../src/forms/ElementBundle.js"
import { Harness, testServer } from "../support/harness.js"
import { withForm } from "./support.js"

layer(testServer())("form component serving", (it) => {
  it.effect("serves the script as public, cacheable JavaScript: ETag, 304, CORS for any origin, no key", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const first = yield* h.call("GET", elementPath, { headers: { origin: "https://anywhere.example" } })
      expect(first.status).toBe(200)
      expect(first.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
      expect(first.headers.get("cache-control")).toBe("public, max-age=300, must-revalidate")
      expect(first.headers.get("access-control-allow-origin")).toBe("*")
      expect(first.headers.get("x-ratelimit-limit")).toBeNull()
      const etag = first.headers.get("etag")!
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
      expect(first.text).toContain('customElements.define("service-form"')
      expect(first.text).not.toMatch(/^\s*import /m) // one self-contained module

      const again = yield* h.call("GET", elementPath, { headers: { "if-none-match": etag } })
      expect(again.status).toBe(304)
      expect(again.text).toBe("")
      expect(again.headers.get("etag")).toBe(etag)
      const weak = yield* h.call("GET", elementPath, { headers: { "if-none-match": `W/${etag}` } })
      expect(weak.status).toBe(304)
      const stale = yield* h.call("GET", elementPath, { headers: { "if-none-match": '"other"' } })
      expect(stale.status).toBe(200)

      // the build script's output is what the service serves
      const dir = mkdtempSync(join(tmpdir(), "element-"))
      const written = yield* writeElementBundle(join(dir, "service-form-element.esm.js"))
      expect(readFileSync(written.path, "utf8")).toBe(first.text)
      rmSync(dir, { recursive: true })

      const other = yield* h.call("GET", "/storage/v1/object/public/widget/v1/other.js")
      expect(other.status).toBe(404)
      expect(other.body.error.code).toBe("route_not_found")
    })
  )

  it.effect("the demo page: only a sandbox forms key of the form's workspace, everything escaped; refusals as a page for a browser, else in the envelope", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const other = yield* h.seed()
      const { formId } = yield* withForm(h, ws)
      const browser = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" }
      const demo = (query: string, headers: Record<string, string> = browser) => h.call("GET", `/demo/forms/${formId}${query}`, { headers })

      const ok = yield* demo(`?key=${ws.formsTest}`)
      expect(ok.status).toBe(200)
      expect(ok.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(ok.headers.get("content-security-policy")).toContain("default-src 'self'")
      expect(ok.text).toContain(`<script type="module" src="${elementPath}"></script>`)
      expect(ok.text).toContain(`<service-form api-key="${ws.formsTest}" form-id="${formId}"></service-form>`)
      // the form allows only https://shop.example.com: the page says submitting from here would be refused
      expect(ok.text).toContain("allowed_origins does not list")

      const noKey = yield* demo("")
      expect(noKey.status).toBe(401)
      expect(noKey.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(noKey.headers.get("vary")).toBe("Accept")
      expect(noKey.text).toContain("?key=pk_test_")
      const live = yield* ws.key({ kind: "forms", environment: "live" })
      const refusedKeys = [live.secret, ws.secretTest, ws.widgetTest, other.formsTest, "pk_test_unknown", "<script>"]
      for (const key of refusedKeys) {
        const refused = yield* demo(`?key=${encodeURIComponent(key)}`)
        expect(refused.status, key).toBe(404)
        expect(refused.text).not.toContain("<service-form")
        expect(refused.text).not.toContain("<script>")
      }

      // anyone but a browser (no Accept, */*, JSON) gets the error envelope with the same status
      for (const headers of [{}, { accept: "*/*" }, { accept: "application/json" }] as ReadonlyArray<Record<string, string>>) {
        const bare = yield* demo("", headers)
        expect(bare.status).toBe(401)
        expect(bare.headers.get("content-type")).toBe("application/json")
        expect(bare.body).toMatchObject({
          error: { type: "authentication_error", code: "missing_authorization", param: "key", message: expect.stringContaining("?key=pk_test_") },
          meta: { request_id: expect.stringMatching(/^req_/) }
        })
        for (const key of refusedKeys) {
          const refused = yield* demo(`?key=${encodeURIComponent(key)}`, headers)
          expect(refused.status, key).toBe(404)
          expect(refused.body.error, key).toMatchObject({ type: "invalid_request", code: "resource_missing" })
        }
        const badId = yield* h.call("GET", `/demo/forms/frm_%22%3E%3Cscript%3E?key=${ws.formsTest}`, { headers })
        expect(badId.status).toBe(404)
        expect(badId.body.error.code).toBe("resource_missing")
      }
      const badId = yield* h.call("GET", `/demo/forms/${encodeURIComponent('frm_"><script>')}?key=${ws.formsTest}`, { headers: browser })
      expect(badId.status).toBe(404)
      expect(badId.text).not.toContain("<script>")
    })
  )
})

