/**
 * The console's Evaluations tab of an agent in Chromium against the real server: an evaluation made through
 * the API for an agent with one text source (two of its three cases held, one not) is listed with its latest
 * run; its page shows the run complete with 2/3, "Run again" queues a second run that the page follows until it
 * completes too, both listed with what started them; "Run when knowledge changes" is saved as it is ticked; a
 * run's page shows each case; the new-evaluation form refuses a malformed line.
 * axe on the pages, no console error.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdirSync } from "node:fs"
import { join, resolve } from "node:path"
import type { Browser, BrowserContext } from "playwright-core"
import { afterAll, beforeAll } from "vitest"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { createAgent, waitSettled } from "../knowledge/support.js"
import { expectAxeClean, haveChromium, launchChromium, openConsole } from "./browser.js"

const artifacts = resolve(import.meta.dirname, "../artifacts/console")

describe.skipIf(!haveChromium)("console evaluations in Chromium", () => {
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

  layer(testServer())("evaluations", (it) => {
    it.effect("lists an evaluation, follows its run to 2/3, runs it again, shows a run's cases", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const agentId = yield* createAgent(h, key, "Lisbon shop")
        const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
          key,
          body: {
            type: "text",
            title: "Opening hours",
            content: "# Opening hours\n\nThe shop in Lisbon opens at nine in the morning on weekdays and closes at six."
          }
        })
        expect(created.status, created.text).toBe(201)
        const sourceId = created.body.data.id as string
        const [settled] = yield* waitSettled(h, key, agentId, [sourceId])
        expect(settled.status).toBe("indexed")
        const evaluation = yield* h.call("POST", `/v1/agents/${agentId}/evaluations`, {
          key,
          body: {
            name: "Shop basics",
            cases: [
              { question: "When does the shop in Lisbon open on weekdays?", expect: { source_id: sourceId } },
              { question: "Can I pay with bitcoin?", expect: { declines: true } },
              { question: "Do you deliver to Mars?", expect: { contains: "Mars deliveries every week" } }
            ]
          }
        })
        expect(evaluation.status, evaluation.text).toBe(201)
        const evaluationId = evaluation.body.data.id as string

        yield* Effect.promise(async () => {
          const opened = await open(h, `#/agents/${agentId}`)
          const { page } = opened
          await page.getByLabel("Secret key").fill(key)
          await page.getByRole("button", { name: "Sign in" }).click()
          await page.getByRole("heading", { name: "Settings: Lisbon shop" }).waitFor()
          await page.getByRole("navigation", { name: "Agent" }).getByRole("link", { name: "Evaluations" }).click()
          await page.getByRole("heading", { name: "Evaluations: Lisbon shop" }).waitFor()
          expect(page.url()).toContain(`#/agents/${agentId}/evaluations`)

          // the list: the evaluation with its latest run, reloaded until it completes
          const list = page.getByRole("table", { name: "Evaluations of this agent" })
          const row = list.locator("tbody tr", { hasText: "Shop basics" })
          await row.getByText("completed").waitFor({ timeout: 60_000 })
          expect(await row.locator("td").nth(1).textContent()).toBe("3")
          expect(await row.locator("td").nth(3).textContent()).toBe("67%")
          await axe(page, "evaluations")

          // the form checks its lines before sending
          await page.getByLabel("Name", { exact: true }).fill("Broken")
          await page.getByLabel("Cases", { exact: true }).fill("Where are you? => Lisbon\nno arrow on this line")
          await page.getByRole("button", { name: "Create and run" }).click()
          const refused = page.getByRole("form", { name: "New evaluation" }).getByRole("alert")
          await refused.waitFor()
          expect(await refused.textContent()).toContain("Line 2")

          // the evaluation: its completed run with 2/3 and the chart of scores
          await row.getByRole("link", { name: "Shop basics" }).click()
          await page.getByRole("heading", { name: "Evaluation: Shop basics" }).waitFor()
          const runs = page.getByRole("table", { name: "Runs, newest first" })
          await runs.locator("tbody tr", { hasText: "completed" }).first().waitFor()
          expect(await runs.locator("tbody tr").count()).toBe(1)
          expect(await runs.locator("tbody tr td").nth(3).textContent()).toBe("2/3")
          expect(await runs.locator("tbody tr td").nth(2).textContent()).toBe("Manual")
          await page.getByRole("img", { name: "Score of each completed run: 1 run, latest 67%" }).locator(".uplot canvas").waitFor()

          // run again: the new run shown queued, then followed until it completes
          const started = page.waitForResponse((r) => r.url().endsWith(`/evaluations/${evaluationId}/runs`) && r.request().method() === "POST")
          await page.getByRole("button", { name: "Run again: Shop basics" }).click()
          const run = await (await started).json()
          expect(run.data.status).toBe("queued")
          await page.getByRole("status").filter({ hasText: `Run ${run.data.id} queued.` }).waitFor()
          const second = runs.locator("tbody tr", { hasText: run.data.id })
          await second.waitFor()
          await second.getByText("completed").waitFor({ timeout: 60_000 })
          expect(await runs.locator("tbody tr").count()).toBe(2)
          expect(await second.locator("td").nth(3).textContent()).toBe("2/3")
          expect(await runs.locator("tbody tr").nth(1).locator("td").nth(3).textContent()).toBe("2/3")
          await page.getByRole("img", { name: "Score of each completed run: 2 runs, latest 67%" }).waitFor()

          // "Run when knowledge changes": saved as it is ticked, and kept
          const watch = page.getByRole("checkbox", { name: "Run when knowledge changes" })
          expect(await watch.isChecked()).toBe(false)
          const patched = page.waitForResponse((r) => r.url().endsWith(`/evaluations/${evaluationId}`) && r.request().method() === "PATCH")
          await watch.check()
          expect((await (await patched).json()).data.run_on_knowledge_change).toBe(true)
          await page.getByRole("status").filter({ hasText: "It runs a minute after the agent's knowledge changes." }).waitFor()
          expect(await watch.isChecked()).toBe(true)
          await axe(page, "evaluation")

          // a run: each case with what was expected, whether it passed, the reply and its sources
          await second.getByRole("link", { name: run.data.id }).click()
          await page.getByRole("heading", { name: `Run ${run.data.id}` }).waitFor()
          const cases = page.getByRole("table", { name: "Cases of the run" })
          await cases.locator("tbody tr").first().waitFor()
          const cells = async (i: number) => cases.locator("tbody tr").nth(i).locator("td").allTextContents()
          const [held, declined, missed] = [await cells(0), await cells(1), await cells(2)]
          expect(held.slice(0, 3)).toEqual(["When does the shop in Lisbon open on weekdays?", `draws on ${sourceId}`, "Passed"])
          expect(held[4]).toContain("Opening hours")
          expect(declined.slice(0, 3)).toEqual(["Can I pay with bitcoin?", "declines", "Passed"])
          expect(missed.slice(0, 3)).toEqual(["Do you deliver to Mars?", "contains “Mars deliveries every week”", "Not passed"])
          expect(missed[3]).toContain("(fallback)")
          await axe(page, "evaluation-run")
          await page.screenshot({ path: join(artifacts, "evaluation-run.png"), fullPage: true })
          expect(opened.errors, "console errors on evaluations").toEqual([])
        })
      })
    )
  })
})
