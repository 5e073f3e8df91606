/**
 * The `<service-form>` component: bundle size (raw and gzip) and time to
 * first paint in Chromium, against a bare baseline page with a plain `<form>`
 * of the same fields. Both pages come from one loopback node:http server that
 * also serves the bundle and a fixed config (so this measures the component,
 * not the service's database). Each page is opened `runs` times in a fresh
 * browser context (a first view: nothing cached); the component is also
 * measured on a second view (config from session storage).
 */
import * as Effect from "effect/Effect"
import { existsSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { gzipSync } from "node:zlib"
import { chromium } from "playwright-core"
import { bundleElement, elementPath } from "../../src/forms/ElementBundle.js"
import { fmt, median, ratio, type Section } from "./lib.js"

const runs = Number(process.env["BENCH_RUNS"] ?? 15)
const chromiumPath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

const formId = "frm_benchmark0001"
const text = (en: string) => ({ en, es: en })
const field = (id: string, type: string, label: string, required: boolean) => ({
  id, type, label: text(label), help: null, placeholder: null, required,
  min_length: null, max_length: null, pattern: null, options: null, default_value: null
})
const config = {
  data: {
    id: formId, object: "form_config", livemode: false, title: text("Contact us"),
    fields: [field("name", "text", "Name", true), field("email", "email", "E-mail", true), field("subject", "text", "Subject", false), field("body", "textarea", "Message", true)],
    submit_label: text("Send"), success_message: text("Thanks!"), branding: { "--service-accent": "#0055ff" }, width: "480px", appearance: "card"
  },
  meta: { request_id: "req_bench" }
}

const measure = `<script>
const done = () => requestAnimationFrame(() => setTimeout(() => { window.paintedAt = performance.now() }))
</script>`

const baselinePage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>baseline</title>${measure}
<style>form{display:flex;flex-direction:column;gap:1rem;width:480px;padding:1.5rem;border:1px solid #d1d5db;border-radius:8px;font-family:system-ui}</style></head>
<body><form><h2>Contact us</h2>
<label for="name">Name</label><input id="name" name="name" required>
<label for="email">E-mail</label><input id="email" name="email" type="email" required>
<label for="subject">Subject</label><input id="subject" name="subject">
<label for="body">Message</label><textarea id="body" name="body" required></textarea>
<button type="submit">Send</button></form>
<script>done()</script></body></html>`

const componentPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>component</title>${measure}
<script>document.addEventListener("service-form:ready", done)</script>
<script type="module" src="${elementPath}"></script></head>
<body><service-form api-key="pk_test_bench" form-id="${formId}"></service-form></body></html>`

export const formElement = async (): Promise<Section> => {
  const bundle = await Effect.runPromise(bundleElement)
  const raw = bundle.byteLength
  const gzip = gzipSync(bundle, { level: 9 }).byteLength
  console.log(`bundle: ${raw} B raw, ${gzip} B gzip`)
  if (!existsSync(chromiumPath)) {
    return { title: "Form component", lines: [`bundle ${raw} B raw, ${gzip} B gzip`, "", `first paint not measured: no Chromium at ${chromiumPath}`] }
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://bench").pathname
    const headers = { "access-control-allow-origin": "*", "access-control-allow-headers": "Service-Api-Key, If-None-Match" }
    if (req.method === "OPTIONS") return void res.writeHead(204, headers).end()
    if (path === "/baseline") return void res.writeHead(200, { "content-type": "text/html" }).end(baselinePage)
    if (path === "/component") return void res.writeHead(200, { "content-type": "text/html" }).end(componentPage)
    if (path === elementPath) return void res.writeHead(200, { ...headers, "content-type": "text/javascript" }).end(bundle)
    if (path === `/v1/forms/${formId}/config`) return void res.writeHead(200, { ...headers, "content-type": "application/json", etag: '"bench"' }).end(JSON.stringify(config))
    res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
  })
  try {
    /** Milliseconds from navigation start to first contentful paint and to the form painted, per view. */
    const view = async (path: string, views: number) => {
      const context = await browser.newContext()
      const page = await context.newPage()
      const results: Array<{ fcp: number; painted: number }> = []
      for (let i = 0; i < views; i++) {
        await page.goto(`${origin}${path}`)
        await page.waitForFunction(() => (window as any).paintedAt !== undefined, undefined, { timeout: 10_000 })
        results.push(
          await page.evaluate(() => ({
            fcp: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? Number.NaN,
            painted: (window as any).paintedAt as number
          }))
        )
      }
      await context.close()
      return results
    }
    // one warm-up of each: Chromium's own first-launch costs are not the page's
    await view("/baseline", 1)
    await view("/component", 1)
    const baseline: Array<{ fcp: number; painted: number }> = []
    const first: Array<{ fcp: number; painted: number }> = []
    const second: Array<{ fcp: number; painted: number }> = []
    for (let i = 0; i < runs; i++) {
      baseline.push(...(await view("/baseline", 1)))
      const [a, b] = await view("/component", 2)
      first.push(a!)
      second.push(b!)
    }
    const m = (xs: ReadonlyArray<{ fcp: number; painted: number }>, k: "fcp" | "painted") => median(xs.map((x) => x[k]))
    const row = (label: string, xs: ReadonlyArray<{ fcp: number; painted: number }>) =>
      `| ${label} | ${fmt(m(xs, "fcp"), 1)} | ${fmt(m(xs, "painted"), 1)} | ${ratio(m(xs, "painted"), m(baseline, "painted"))} |`
    return {
      title: "Form component",
      lines: [
        `Bundle \`service-form-element.esm.js\`: ${raw} B raw, ${gzip} B gzip (level 9). Chromium headless, loopback page server, median of ${runs} fresh contexts.`,
        "",
        "| page | first contentful paint (ms) | form painted (ms) | form painted vs baseline |",
        "|---|---|---|---|",
        row("baseline: plain `<form>`, same fields", baseline),
        row("`<service-form>`, first view", first),
        row("`<service-form>`, second view (session cache)", second)
      ]
    }
  } finally {
    await browser.close()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
