/**
 * The `<service-chat>` component: its script's size (raw and gzip, against
 * its 30 KB budget), and the time from a click on the launcher to the panel
 * ready (the dialog shown, the focus in its text box: the component's
 * `service-chat:open`), timed inside the page, over `BENCH_WIDGET_CLICKS`
 * page loads (each a reload, so the config is fetched again) in Chromium, a
 * page of another loopback origin embedding the script from the service, on
 * PGlite and on PostgreSQL.
 */
import * as Effect from "effect/Effect"
import { existsSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { chromium, type Browser } from "playwright-core"
import { bundleChatElement, chatElementPath, gzippedSize, maxChatScriptGzipBytes } from "../../src/widget/ElementBundle.js"
import { bootstrapSecret, fmt, noRateLimit, percentile, type Section, serviceEnv, spawnService, tempDir, throwawayDatabase, withServer } from "./lib.js"

const clicks = Number(process.env["BENCH_WIDGET_CLICKS"] ?? 40)
const chromiumPath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

const call = async (base: string, key: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000)
  })
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${(await res.text()).slice(0, 300)}`)
  return ((await res.json()) as { data: any }).data
}

const page = (base: string, key: string, agentId: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>shop</title>
<script type="module" src="${base}${chatElementPath}"></script></head>
<body><h1>Shop</h1><service-chat api-key="${key}" agent-id="${agentId}"></service-chat></body></html>`

interface Timing {
  readonly p50: number
  readonly p95: number
}

/** Click to `service-chat:open`, in the page's own clock, over `clicks` loads. */
const timeClicks = async (browser: Browser, base: string, secret: string): Promise<Timing> => {
  let html = ""
  const site = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html", "cache-control": "no-store" }).end(html))
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve))
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
  try {
    const agent = await call(base, secret, "POST", "/v1/agents", {
      type: "support",
      name: "Bench desk",
      allowed_origins: [origin],
      welcome_message: "Hello!"
    })
    const widgetKey = await call(base, secret, "POST", "/v1/keys", { name: "bench widget", kind: "widget" })
    html = page(base, widgetKey.secret, agent.id)
    const context = await browser.newContext({ viewport: { width: 1000, height: 800 } })
    await context.addInitScript(() => {
      const w = window as any
      document.addEventListener("service-chat:ready", () => (w.ready = true))
      document.addEventListener("click", () => (w.clickedAt ??= performance.now()), { capture: true })
      document.addEventListener("service-chat:open", () => (w.openedAt = performance.now()))
    })
    const tab = await context.newPage()
    const times: Array<number> = []
    for (let i = 0; i <= clicks; i++) {
      await tab.goto(`${origin}/`)
      await tab.waitForFunction(() => (window as any).ready === true, undefined, { timeout: 30_000 })
      await tab.getByRole("button", { name: "Open chat with Bench desk" }).click()
      await tab.waitForFunction(() => (window as any).openedAt !== undefined, undefined, { timeout: 30_000 })
      const ms = await tab.evaluate(() => (window as any).openedAt - (window as any).clickedAt)
      // the first load is a warm-up (Chromium's own first costs)
      if (i > 0) times.push(ms)
    }
    await context.close()
    return { p50: percentile(times, 50), p95: percentile(times, 95) }
  } finally {
    await new Promise<void>((resolve) => site.close(() => resolve()))
  }
}

export const widget = async (): Promise<Section> => {
  const bundle = await Effect.runPromise(bundleChatElement)
  const raw = bundle.byteLength
  const gzip = gzippedSize(bundle)
  console.log(`chat script: ${raw} B raw, ${gzip} B gzip (budget ${maxChatScriptGzipBytes} B)`)
  const lines = [`script ${raw} B raw, ${gzip} B gzip (budget ${maxChatScriptGzipBytes} B)`]
  if (!existsSync(chromiumPath)) return { title: "Chat widget", lines: [...lines, "", `not timed: no Chromium at ${chromiumPath}`] }
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
  })
  try {
    const dir = await tempDir("widget")
    const pglite = await withServer(
      (port) => spawnService(serviceEnv({ PORT: String(port), DATA_DIR: join(dir, "data"), ...noRateLimit })),
      (base, child) => timeClicks(browser, base, bootstrapSecret(child))
    )
    console.log(`pglite: click to panel ready p50 ${fmt(pglite.p50, 1)} ms, p95 ${fmt(pglite.p95, 1)} ms`)
    const databaseUrl = await throwawayDatabase({ prefix: "bench_widget" })
    const postgres = await withServer(
      (port) => spawnService(serviceEnv({ PORT: String(port), DATABASE_URL: databaseUrl, DATA_DIR: join(dir, "pg-data"), ...noRateLimit })),
      (base, child) => timeClicks(browser, base, bootstrapSecret(child))
    )
    console.log(`postgres: click to panel ready p50 ${fmt(postgres.p50, 1)} ms, p95 ${fmt(postgres.p95, 1)} ms`)
    return {
      title: "Chat widget",
      lines: [
        ...lines,
        "",
        `| click on the launcher to the panel ready (${clicks} loads, Chromium) | p50 | p95 |`,
        "| --- | --- | --- |",
        `| PGlite | ${fmt(pglite.p50, 1)} ms | ${fmt(pglite.p95, 1)} ms |`,
        `| PostgreSQL | ${fmt(postgres.p50, 1)} ms | ${fmt(postgres.p95, 1)} ms |`
      ]
    }
  } finally {
    await browser.close()
  }
}
