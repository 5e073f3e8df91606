/**
 * `/docs` in Chromium: the reference renders under its CSP (a violation is a console error), with the system's
 * fonts, and the browser asks no host but the service for anything.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll } from "vitest"
import { Harness, testServer } from "../support/harness.js"
import { haveChromium, launchChromium } from "./browser.js"

describe.skipIf(!haveChromium)("the docs page in Chromium", () => {
  let browser: Browser
  beforeAll(async () => {
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
  })

  layer(testServer())("docs", (it) => {
    it.effect("renders with the system's fonts and requests nothing from another host", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const seen = yield* Effect.promise(async () => {
          const context = await browser.newContext({ viewport: { width: 1200, height: 900 } })
          const page = await context.newPage()
          page.setDefaultTimeout(30_000)
          const requests: Array<string> = []
          const errors: Array<string> = []
          page.on("request", (request) => requests.push(request.url()))
          page.on("console", (message) => {
            if (message.type() === "error") errors.push(message.text())
          })
          page.on("pageerror", (error) => errors.push(String(error)))
          await page.goto(`${h.url}/docs`)
          // the reference is drawn: the conventions from the document's description are on the page
          await page.getByText("Input policy").first().waitFor()
          await page.waitForLoadState("networkidle")
          const fonts = await page.evaluate(() => {
            const code = document.querySelector("code")
            return {
              body: getComputedStyle(document.querySelector(".scalar-app") ?? document.body).fontFamily,
              code: code === null ? undefined : getComputedStyle(code).fontFamily
            }
          })
          await context.close()
          return { requests, errors, fonts }
        })
        const elsewhere = seen.requests.filter((url) => !url.startsWith(`${h.url}/`) && !url.startsWith("data:"))
        expect(elsewhere).toEqual([])
        expect(seen.errors).toEqual([])
        expect(seen.fonts.body).toContain("system-ui")
        expect(seen.fonts.body).not.toMatch(/Inter/)
        if (seen.fonts.code !== undefined) expect(seen.fonts.code).toContain("ui-monospace")
      }), 120_000)
  })
})
