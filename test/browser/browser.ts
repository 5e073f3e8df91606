/**
 * Browser tests' support: Debian's Chromium driven by playwright-core, and a
 * loopback page server (a third-party site embedding the component). When
 * `/usr/bin/chromium` is absent the suites skip with a warning naming why.
 */
import { existsSync, readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core"
import { expect } from "vitest"
import { chatElementPath } from "../../src/widget/ElementBundle.js"

export const chromiumPath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"
export const haveChromium = existsSync(chromiumPath)
if (!haveChromium) {
  console.warn(`SKIPPED browser tests: no Chromium at ${chromiumPath} (install Debian's chromium, as .ci/run does)`)
}

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
    timeout: 30_000
  })

/** A console page in a fresh context, with the console errors and uncaught exceptions seen on it so far. */
export interface OpenedConsole {
  readonly page: Page
  readonly errors: Array<string>
}

/** Opens `{service}/console{hash}` in a new context of `browser`, kept in `contexts` for closing. */
export const openConsole = async (
  browser: Browser,
  contexts: Array<BrowserContext>,
  service: string,
  hash = ""
): Promise<OpenedConsole> => {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, locale: "en-GB" })
  contexts.push(context)
  const page = await context.newPage()
  page.setDefaultTimeout(15_000)
  const errors: Array<string> = []
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text())
  })
  page.on("pageerror", (error) => errors.push(String(error)))
  await page.goto(`${service}/console${hash}`)
  return { page, errors }
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

/**
 * axe-core's serious and critical violations on the page at rest: a panel still rising in fails its colour contrast
 * part-way, so the page is asked for reduced motion (the widgets then do not animate) and any finite animation left,
 * in the document or a shadow root, is waited for (an endless one, a typing indicator, is not).
 */
export const seriousAxeViolations = async (page: Page): Promise<ReadonlyArray<{ readonly id: string; readonly impact: string }>> => {
  await page.emulateMedia({ reducedMotion: "reduce" })
  const violations = await page.evaluate(`(async () => {
    const roots = [document, ...[...document.querySelectorAll("*")].flatMap((e) => (e.shadowRoot ? [e.shadowRoot] : []))]
    const finite = roots.flatMap((r) => r.getAnimations()).filter((a) => a.effect && a.effect.getComputedTiming().endTime !== Infinity)
    await Promise.all(finite.map((a) => a.finished.catch(() => undefined)))
    if (!window.axe) { ${axeSource} }
    const result = await window.axe.run(document, { resultTypes: ["violations"] })
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) }))
  })()`)
  return (violations as Array<{ id: string; impact: string }>).filter((v) => v.impact === "serious" || v.impact === "critical")
}

/** axe-core on the page as it is: no serious or critical violation. */
export const expectAxeClean = async (page: Page, name: string) => {
  expect(await seriousAxeViolations(page), `axe on ${name}`).toEqual([])
}

export interface PageServer {
  readonly origin: string
  /** Serves `html` at `path` from now on. */
  readonly put: (path: string, html: string) => string
  readonly close: () => Promise<void>
}

/** A node:http server on loopback serving the pages a test puts there (404 for others). */
export const startPageServer = async (): Promise<PageServer> => {
  const pages = new Map<string, string>()
  const server: Server = createServer((req, res) => {
    const html = pages.get(new URL(req.url ?? "/", "http://page").pathname)
    res.writeHead(html === undefined ? 404 : 200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
    res.end(html ?? "not found")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    put: (path, html) => {
      pages.set(path, html)
      return `${origin}${path}`
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

const attr = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;")

/**
 * A page embedding the component: one `<script type="module">`, one
 * `<service-form>` tag with `attributes`, optional page CSS, and a recorder of
 * the component's events in `window.events`.
 */
export const embedPage = (options: {
  readonly scriptUrl: string
  readonly attributes: Record<string, string>
  readonly lang?: string
  readonly css?: string
}) => `<!doctype html>
<html${options.lang === undefined ? "" : ` lang="${attr(options.lang)}"`}><head><meta charset="utf-8"><title>Shop</title>
<style>body{font-family:sans-serif;margin:24px;background:#f5f5f5}${options.css ?? ""}</style>
<script>
window.events = [];
for (const type of ["service-form:loading", "service-form:ready", "service-form:success", "service-form:error"]) {
  document.addEventListener(type, (e) => window.events.push({ type, detail: e.detail, bubbled: e.target !== document }));
}
</script>
<script type="module" src="${attr(options.scriptUrl)}"></script>
</head><body>
<service-form ${Object.entries(options.attributes).map(([k, v]) => `${k}="${attr(v)}"`).join(" ")}></service-form>
</body></html>`

/** A shop's page embedding `<service-chat>`: its CSP allows scripts and calls to the service only, and no inline style or script at all. */
export const chatPage = (service: string, attributes: Record<string, string>, lang = "en") => `<!doctype html>
<html lang="${attr(lang)}"><head><meta charset="utf-8"><title>Shop</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${attr(service)}; connect-src ${attr(service)}; style-src 'none'; img-src 'none'">
<script type="module" src="${attr(service)}${chatElementPath}"></script>
</head><body><main><h1>Shop</h1><p>Welcome to the shop.</p></main>
<service-chat ${Object.entries(attributes).map(([k, v]) => `${k}="${attr(v)}"`).join(" ")}></service-chat>
</body></html>`

/**
 * Every text a visitor can read or hear in a component's shadow root: its text nodes, and its `aria-label`,
 * `placeholder`, `title` and `alt` values, each trimmed, none empty.
 */
export const shadowTexts = (page: Page, selector: string): Promise<Array<string>> =>
  page.locator(selector).evaluate((host) => {
    const out: Array<string> = []
    const root = host.shadowRoot!
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT)
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      if (node.parentElement?.closest("style") != null) continue
      out.push(node.textContent ?? "")
    }
    for (const element of Array.from(root.querySelectorAll("*"))) {
      for (const name of ["aria-label", "placeholder", "title", "alt"]) {
        const value = element.getAttribute(name)
        if (value !== null) out.push(value)
      }
    }
    return out.map((text) => text.trim()).filter((text) => text !== "")
  })

/** The catalogue's texts under `prefix` whose English is not also their Spanish, as patterns (a placeholder matches any text). */
export const englishOnlyTexts = (catalogues: { readonly en: Record<string, string>; readonly es: Record<string, string> }, prefix: string) =>
  Object.entries(catalogues.en)
    .filter(([key, value]) => key.startsWith(prefix) && catalogues.es[key] !== value)
    .map(([key, value]) => ({
      key,
      pattern: new RegExp(`^${value.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{\w+\}/g, ".+")}$`)
    }))

/** The texts of `seen` that are one of those English texts. */
export const englishAmong = (seen: ReadonlyArray<string>, english: ReturnType<typeof englishOnlyTexts>) =>
  seen.flatMap((text) => english.filter((e) => e.pattern.test(text)).map((e) => `${e.key}: ${text}`))
