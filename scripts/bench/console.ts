/**
 * The admin console: the script's size (raw and gzip, as the build writes it)
 * and the time until a person can use its first pages in Chromium over loopback,
 * against a bare page served by node:http with the same sign-in form. Each view
 * is a fresh browser context (nothing cached). Usable: the sign-in page's key
 * input is on screen; with a key already in the tab, the overview shows its
 * usage figures (read from the API).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { chromium, type Browser } from "playwright-core"
import { bootstrapSecret, fmt, median, noRateLimit, ratio, repoRoot, type Section, serviceEnv, spawnService, tempDir, withServer } from "./lib.js"

const runs = Number(process.env["BENCH_RUNS"] ?? 15)
const chromiumPath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"
const target = 1_000

const baselinePage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>baseline</title></head>
<body><main><h1>Sign in</h1><form><label for="key">Secret key</label><input id="key" name="secret-key" type="password">
<button type="submit">Sign in</button></form></main></body></html>`

/** Milliseconds from navigation start until `selector` is on screen, in a fresh context (and `key` in its tab). */
const usableAfter = async (browser: Browser, url: string, selector: string, key?: string): Promise<number> => {
  const context = await browser.newContext()
  try {
    if (key !== undefined) {
      await context.addInitScript((k) => sessionStorage.setItem("console.key.test", k), key)
    }
    const page = await context.newPage()
    await page.goto(url)
    await page.locator(selector).first().waitFor({ state: "visible", timeout: 10_000 })
    return await page.evaluate(() => performance.now())
  } finally {
    await context.close()
  }
}

export const consolePages = async (): Promise<Section> => {
  // the entry and every page's chunk: what a visit to every page downloads
  const folder = join(repoRoot, "dist/console")
  const scripts = readdirSync(folder).filter((name) => name.endsWith(".js")).map((name) => readFileSync(join(folder, name)))
  const raw = scripts.reduce((sum, script) => sum + script.byteLength, 0)
  const gzip = scripts.reduce((sum, script) => sum + gzipSync(script, { level: 9 }).byteLength, 0)
  console.log(`console scripts (the entry and ${scripts.length - 1} chunks): ${raw} B raw, ${gzip} B gzip`)
  if (!existsSync(chromiumPath)) {
    return { title: "Admin console", lines: [`script ${raw} B raw, ${gzip} B gzip`, "", `not timed: no Chromium at ${chromiumPath}`] }
  }
  const baselineServer = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(baselinePage))
  await new Promise<void>((resolve) => baselineServer.listen(0, "127.0.0.1", resolve))
  const baselineUrl = `http://127.0.0.1:${(baselineServer.address() as AddressInfo).port}/`
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
  })
  const dir = await tempDir("console")
  try {
    const timed = await withServer(
      (port) => spawnService(serviceEnv({ PORT: String(port), DATA_DIR: join(dir, "data"), ...noRateLimit })),
      async (base, child) => {
        const key = bootstrapSecret(child)
        const signIn = () => usableAfter(browser, `${base}/console`, "input[name=secret-key]")
        const overview = () => usableAfter(browser, `${base}/console#/overview`, "text=Tickets this month", key)
        const baseline = () => usableAfter(browser, baselineUrl, "input[name=secret-key]")
        // one warm-up of each: Chromium's own first-launch costs are not the page's
        await signIn()
        await overview()
        await baseline()
        const times = { signIn: [] as Array<number>, overview: [] as Array<number>, baseline: [] as Array<number> }
        for (let i = 0; i < runs; i++) {
          times.baseline.push(await baseline())
          times.signIn.push(await signIn())
          times.overview.push(await overview())
        }
        return { signIn: median(times.signIn), overview: median(times.overview), baseline: median(times.baseline) }
      }
    )
    const met = (ms: number) => (ms <= target ? "yes" : "no")
    return {
      title: "Admin console",
      lines: [
        `Scripts \`dist/console/*.js\` (the entry and the chunks its pages load): ${raw} B raw, ${gzip} B gzip in all (level 9; ` +
          `the entry's budget 150 KB gzip). Chromium headless, ` +
          `the bundle on PGlite over loopback, median of ${runs} fresh contexts; target: usable within ${target} ms.`,
        "",
        "| page | usable after (ms) | vs bare page | within target |",
        "|---|---:|---:|:---:|",
        `| bare node:http page, the same sign-in form | ${fmt(timed.baseline, 1)} | | |`,
        `| console: sign in (key input on screen) | ${fmt(timed.signIn, 1)} | ${ratio(timed.signIn, timed.baseline)} | ${met(timed.signIn)} |`,
        `| console: overview with a key in the tab (usage read from the API) | ${fmt(timed.overview, 1)} | ${ratio(timed.overview, timed.baseline)} | ${met(timed.overview)} |`
      ]
    }
  } finally {
    await browser.close()
    await new Promise<void>((resolve) => baselineServer.close(() => resolve()))
  }
}
