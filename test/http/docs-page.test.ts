/**
 * `/docs` takes nothing from another host: Scalar's own fonts (from the vendor's font host) are off in favour of
 * the system's, and a Content-Security-Policy allows no other origin and no script but the page's own.
 * (test/browser/docs.test.ts loads it in Chromium and watches every request.)
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { Harness, testServer } from "../support/harness.js"

layer(testServer())("the docs page", (it) => {
  it.effect("is served under a CSP that allows no other origin, with the system's fonts instead of Scalar's", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const docs = yield* h.call("GET", "/docs")
      expect(docs.status).toBe(200)
      const csp = docs.headers.get("content-security-policy") ?? ""
      const directives = new Map(csp.split(/;\s*/).map((d) => [d.split(" ")[0]!, d.split(" ").slice(1)]))
      expect(directives.get("default-src")).toEqual(["'none'"])
      expect(directives.get("connect-src")).toEqual(["'self'"])
      expect(directives.get("font-src")).toEqual(["'self'"])
      expect(directives.get("frame-ancestors")).toEqual(["'none'"])
      // no host, scheme or wildcard anywhere: only this origin, inline styles and the page's own scripts
      for (const [name, sources] of directives) {
        for (const source of sources) {
          expect(source, name).toMatch(/^'(none|self|unsafe-inline|wasm-unsafe-eval|sha256-[A-Za-z0-9+/=]+)'$|^data:$/)
        }
      }
      // scripts: the page's own by hash, and WebAssembly (Scalar compiles a module); never eval of text or any inline script
      expect(directives.get("script-src")!.every((s) => s.startsWith("'sha256-") || s === "'wasm-unsafe-eval'")).toBe(true)
      // every script that runs inline is one the policy names, so the page works under it
      const inline = [...docs.text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!)
      expect(inline.length).toBeGreaterThan(0)
      for (const script of inline) {
        expect(directives.get("script-src")).toContain(`'sha256-${createHash("sha256").update(script).digest("base64")}'`)
      }
      // no markup loads anything from elsewhere, and Scalar is told not to load its fonts
      expect(docs.text).not.toMatch(/<(link|script|img|iframe)\b[^>]*\b(src|href)="(https?:)?\/\//i)
      const configuration = /dataset\.configuration = JSON\.stringify\(([\s\S]*?)\)\s*<\/script>/.exec(docs.text)?.[1] ?? "{}"
      const config = JSON.parse(configuration)
      expect(config.withDefaultFonts).toBe(false)
      expect(config.customCss).toContain("--scalar-font: system-ui")
      expect(config.customCss).toContain("--scalar-font-code: ui-monospace")
      expect(docs.headers.get("x-content-type-options")).toBe("nosniff")
      // the same page twice: the hashes are made once
      expect((yield* h.call("GET", "/docs")).headers.get("content-security-policy")).toBe(csp)
    })
  )
})
