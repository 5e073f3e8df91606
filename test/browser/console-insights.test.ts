/**
 * The console's Insights page of an agent in Chromium against the real server: reached from the agent's
 * tabs, its totals, charts, unanswered group (with links to its conversations) and the reply rated down with
 * its comment; a period picked; "Answer this" shows the API's refusal, then writes a Q&A item, after which the same question asked through
 * the API is answered. axe on the page, no console error.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdirSync } from "node:fs"
import { join, resolve } from "node:path"
import type { Browser, BrowserContext } from "playwright-core"
import { afterAll, beforeAll } from "vitest"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { expectAxeClean, haveChromium, launchChromium, openConsole } from "./browser.js"

const artifacts = resolve(import.meta.dirname, "../artifacts/console")

describe.skipIf(!haveChromium)("console insights in Chromium", () => {
  let browser: Browser
  const contexts: Array<BrowserContext> = []

  beforeAll(async () => {
    browser = await launchChromium()
    mkdirSync(artifacts, { recursive: true })
  })
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()))
    await browser?.close()
  })

  const open = (h: HarnessShape, hash = "") => openConsole(browser, contexts, h.url, hash)

  const axe = expectAxeClean

  layer(testServer())("insights", (it) => {
    it.effect("shows a fallback rated down, counted and grouped; Answer this makes the same question answered", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const agent = yield* h.call("POST", "/v1/agents", { key, body: { type: "support", name: "Empty desk" } })
        expect(agent.status, agent.text).toBe(201)
        const agentId = agent.body.data.id as string
        const question = "Do you ship to Canada?"
        const ask = h.call("POST", `/v1/agents/${agentId}/messages`, { key, body: { message: question, stream: false } })
        const reply = yield* ask
        expect(reply.status, reply.text).toBe(201)
        expect(reply.body.data.outcome).toBe("fallback")
        const conversationId = reply.body.data.conversation_id as string
        const rated = yield* h.call("POST", `/v1/conversations/${conversationId}/messages/${reply.body.data.id}/feedback`, {
          key,
          body: { rating: "down", comment: "No answer at all" }
        })
        expect(rated.status, rated.text).toBe(200)

        yield* Effect.promise(async () => {
          const opened = await open(h, `#/agents/${agentId}`)
          const { page } = opened
          await page.getByLabel("Secret key").fill(key)
          await page.getByRole("button", { name: "Sign in" }).click()
          await page.getByRole("heading", { name: "Settings: Empty desk" }).waitFor()
          await page.getByRole("navigation", { name: "Agent" }).getByRole("link", { name: "Insights" }).click()
          await page.getByRole("heading", { name: "Insights: Empty desk" }).waitFor()
          expect(page.url()).toContain(`#/agents/${agentId}/insights`)

          const totals = page.getByRole("group", { name: "Totals" })
          await totals.waitFor()
          const total = async (label: string) => (await totals.locator(".meter", { has: page.getByRole("heading", { name: label, exact: true }) }).locator(".big").textContent())
          expect(await total("Conversations")).toBe("1")
          expect(await total("Answered")).toBe("0")
          expect(await total("Fallback")).toBe("1")
          expect(await total("Handed off")).toBe("0")
          expect(await total("Rated up")).toBe("0")
          expect(await total("Rated down")).toBe("1")
          // the charts per day, drawn by uPlot, their figures also in tables
          await page.getByRole("img", { name: "Fallback replies per day: 1 in all, at most 1 a day" }).locator(".uplot canvas").waitFor()
          await page.getByRole("img", { name: "Conversations per day: 1 in all, at most 1 a day" }).waitFor()

          // the unanswered group, with its conversation linked; the reply rated down with its comment
          const group = page.locator("li.card", { hasText: question })
          await group.waitFor()
          expect(await group.textContent()).toContain("asked 1 time")
          expect(await group.locator(`a[href="#/conversations/${conversationId}"]`).count()).toBe(1)
          const ratedDown = page.getByRole("table").filter({ hasText: "No answer at all" })
          expect(await ratedDown.locator("tbody tr").count()).toBe(1)
          expect(await ratedDown.locator("tbody tr td").nth(2).textContent()).toBe("fallback")
          await page.waitForFunction(() => document.querySelector(".loading") === null)
          await axe(page, "insights")

          // another period: the service's last 7 days hold the same figures
          const answered = page.waitForResponse((r) => r.url().includes("/insights?from="))
          await page.getByLabel("Period").selectOption("7")
          expect((await answered).status()).toBe(200)
          await page.getByText(/From \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d \(UTC\)/).waitFor()
          const shown = (await page.getByText(/From \d{4}-\d\d-\d\d to/).textContent())!
          const [from, to] = [...shown.matchAll(/\d{4}-\d\d-\d\d/g)].map((m) => Date.parse(`${m[0]}T00:00:00Z`))
          expect((to! - from!) / 86_400_000).toBe(6)
          expect(await total("Fallback")).toBe("1")

          // Answer this: the question prefilled, an answer written and saved
          await page.getByRole("button", { name: `Answer this: ${question}` }).click()
          const form = page.getByRole("form", { name: `Answer: ${question}` })
          expect(await form.getByLabel("Question", { exact: true }).inputValue()).toBe(question)
          // the API's refusal (a blank answer, trimmed) is shown as the page's alert, the form kept
          await form.getByLabel("Answer", { exact: true }).fill("   ")
          await form.getByRole("button", { name: "Save answer" }).click()
          await form.getByRole("alert").waitFor()
          expect(await form.getByRole("alert").textContent()).toContain("answer must not be empty")
          // the 400 the test provoked is logged by the browser itself
          opened.errors.splice(0, opened.errors.length, ...opened.errors.filter((e) => !e.includes("status of 400")))
          await form.getByLabel("Answer", { exact: true }).fill("Yes: parcels reach Canada within ten business days.")
          await axe(page, "insights-answer")
          await form.getByRole("button", { name: "Save answer" }).click()
          await page.getByText("Saved as a Q&A: the agent answers it from now on.").waitFor()
          await page.screenshot({ path: join(artifacts, "insights.png"), fullPage: true })
          expect(opened.errors, "console errors on insights").toEqual([])
        })

        const qa = yield* h.call("GET", `/v1/agents/${agentId}/qa`, { key })
        expect(qa.body.data).toMatchObject([{ question, answer: "Yes: parcels reach Canada within ten business days.", origin: "manual" }])
        const again = yield* ask
        expect(again.status, again.text).toBe(201)
        expect(again.body.data.outcome).toBe("answered")
        expect(again.body.data.content).toContain("ten business days")
      })
    )
  })
})
