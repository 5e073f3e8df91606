/**
 * The admin console (`/console`) in Chromium against the real server: signing
 * in, agents, knowledge with its progress and a retrieval test, the playground's streamed reply,
 * a member's reply to a ticket, a flow by keyboard only, axe on every page,
 * no console error (a CSP violation is one), a screenshot of each page.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdirSync } from "node:fs"
import { join, resolve } from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll } from "vitest"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { expectAxeClean, haveChromium, launchChromium, openConsole, type PageServer, startPageServer } from "./browser.js"

const artifacts = resolve(import.meta.dirname, "../artifacts/console")

interface Opened {
  readonly page: Page
  /** Console errors and uncaught exceptions seen so far. */
  readonly errors: Array<string>
}

describe.skipIf(!haveChromium)("admin console in Chromium", () => {
  let browser: Browser
  let site: PageServer
  const contexts: Array<BrowserContext> = []

  beforeAll(async () => {
    browser = await launchChromium()
    site = await startPageServer()
    mkdirSync(artifacts, { recursive: true })
  })
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()))
    await browser?.close()
    await site?.close()
  })

  const open = (h: HarnessShape, hash = "") => openConsole(browser, contexts, h.url, hash)

  const signIn = async (page: Page, key: string) => {
    await page.getByLabel("Secret key").fill(key)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("navigation", { name: "Main" }).waitFor()
  }

  const axe = expectAxeClean

  const shoot = (page: Page, name: string) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true })

  /** Each page: settled, accessible, photographed. */
  const check = async (opened: Opened, name: string) => {
    await opened.page.waitForFunction(() => document.querySelector(".loading") === null)
    await axe(opened.page, name)
    await shoot(opened.page, name)
    expect(opened.errors, `console errors on ${name}`).toEqual([])
  }

  layer(testServer())("console", (it) => {
    it.effect("is served with a strict CSP; signs in per environment, with the key kept in the tab, not a cookie", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Desk" } })
        for (const subject of ["First", "Second"]) {
          const ticket = yield* h.call("POST", "/v1/tickets", { key: ws.secretTest, body: { agent_id: agent.body.data.id, subject } })
          expect(ticket.status, ticket.text).toBe(201)
        }
        yield* Effect.promise(async () => {
          const response = await fetch(`${h.url}/console`)
          expect(response.status).toBe(200)
          const csp = response.headers.get("content-security-policy")!
          expect(csp).toContain("script-src 'self'")
          expect(csp).toContain("connect-src 'self'")
          expect(csp).not.toContain("unsafe-inline")
          expect(await response.text()).not.toMatch(/<script>|<style>| style=/)
          const script = await fetch(`${h.url}/console/app.js`)
          expect(script.headers.get("content-type")).toContain("javascript")

          const opened = await open(h)
          const { page } = opened
          await page.getByRole("heading", { name: "Sign in to the sandbox environment" }).waitFor()
          await check(opened, "sign-in")

          // a wrong key: the envelope's message is shown
          await page.getByLabel("Secret key").fill("sk_test_notakey0000000000000000")
          await page.getByRole("button", { name: "Sign in" }).click()
          await page.getByRole("alert").waitFor()
          expect(await page.getByRole("alert").textContent()).toMatch(/key/i)
          // the 401 of the wrong key is a console error of the browser's own: not ours
          opened.errors.length = 0

          await signIn(page, ws.secretTest)
          expect(await page.evaluate(() => document.cookie)).toBe("")
          expect(await page.evaluate(() => sessionStorage.getItem("console.key.test"))).toBe(ws.secretTest)
          const authorization = page.waitForRequest((r) => r.url().includes("/v1/usage"))
          await page.reload()
          expect((await authorization).headers()["authorization"]).toBe(`Bearer ${ws.secretTest}`)
          await page.getByRole("heading", { name: "Overview" }).waitFor()
          await page.getByText("Tickets this month").waitFor()
          // the two tickets: in the meter and in the day's bar
          const ticketsChart = page.getByRole("img", { name: "Tickets per day: 2 in all, at most 2 a day" })
          await ticketsChart.waitFor()
          // drawn by uPlot on a canvas, its rules from the console's own stylesheet; the figures stay in a table
          await ticketsChart.locator(".uplot canvas").waitFor()
          expect(await page.evaluate(() => getComputedStyle(document.querySelector(".uplot .u-wrap")!).position)).toBe("relative")
          expect(await page.locator("figure.chart table.sr-only", { hasText: "Tickets per day" }).locator("tbody tr td").last().textContent()).toBe("2")
          expect(await page.getByRole("progressbar", { name: "Tickets this month: 2 of 20" }).count()).toBe(1)
          await check(opened, "overview")

          // live has its own key
          await page.getByRole("button", { name: "Live" }).click()
          expect(await page.getByRole("button", { name: "Live" }).getAttribute("aria-pressed")).toBe("true")
          await page.getByRole("heading", { name: "Sign in to the live environment" }).waitFor()
          await signIn(page, ws.secretLive)
          await page.getByText("live ·", { exact: false }).first().waitFor()
          // each environment's button tells whether it has a key
          expect(await page.getByRole("button", { name: "Live (signed in)", exact: true }).count()).toBe(1)
          await page.getByRole("button", { name: "Sandbox (signed in)", exact: true }).click()
          await page.getByRole("navigation", { name: "Main" }).waitFor()
          expect(opened.errors).toEqual([])
        })
      })
    )

    it.effect("agents: create, edit, delete; knowledge: a text source's progress bar reaches indexed, a retrieval test ranks it; the playground streams a reply with its sources, resumed after a dropped connection", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        yield* Effect.promise(async () => {
          const opened = await open(h, "#/agents")
          const { page } = opened
          await signIn(page, ws.secretTest)
          await page.getByRole("heading", { name: "Agents" }).waitFor()
          await page.getByText("No agents yet").waitFor()
          await check(opened, "agents-empty")

          await page.getByLabel("Name").fill("Help desk")
          await page.getByRole("button", { name: "Create agent" }).click()
          await page.getByRole("heading", { name: "Knowledge: Help desk" }).waitFor()
          await page.getByText("No knowledge yet").waitFor()

          // a text source, watched until indexed without reloading the page
          await page.getByLabel("Title", { exact: true }).fill("Refunds")
          await page.getByLabel("Content", { exact: true }).fill(
            "Refund policy. Customers may ask for a refund within 30 days of purchase. Refunds are paid to the original card within five working days."
          )
          await page.getByRole("button", { name: "Add source" }).click()
          const source = page.locator("li.source").first()
          await source.waitFor()
          const bar = source.locator("progress")
          expect(Number(await bar.getAttribute("max"))).toBe(100)
          await page.locator("li.source-indexed").waitFor({ timeout: 60_000 })
          expect(await bar.getAttribute("value")).toBe("100")
          expect(await source.textContent()).toContain("indexed")
          expect(await source.textContent()).toContain("Attempts 1")

          // a failing source shows its error text: an invalid CSV
          await page.getByLabel("CSV Q&A").check()
          await page.getByLabel("CSV text").fill("not,a,valid,csv,file,with,too,many,columns\n\"unterminated")
          await page.getByRole("button", { name: "Add source" }).click()
          const failure = page.locator("li.source-failed .source-error").or(page.getByRole("alert")).first()
          await failure.waitFor({ timeout: 60_000 })
          expect((await failure.textContent())!.length).toBeGreaterThan(8)
          // the 400 the test provoked is logged by the browser itself
          opened.errors.splice(0, opened.errors.length, ...opened.errors.filter((e) => !e.includes("status of 400")))
          await check(opened, "knowledge")

          // a page, a batch and a file: each reaches indexed; a missing page fails with its error text
          const page1 = site.put("/shipping", "<html><head><title>Shipping</title></head><body><main><h1>Shipping</h1><p>Orders ship within two days from our warehouse. Tracking numbers are e-mailed when the parcel leaves.</p></main></body></html>")
          const page2 = site.put("/returns", "<html><head><title>Returns</title></head><body><main><h1>Returns</h1><p>Returns are accepted for unused items in their original box. Print the label from your account page.</p></main></body></html>")
          await page.getByLabel("URL", { exact: true }).check()
          await page.getByLabel("Page URL").fill(page1)
          await page.getByRole("button", { name: "Add source" }).click()
          await page.getByText("URL added.").waitFor()
          await page.getByLabel("Batch of URLs").check()
          await page.getByLabel("URLs", { exact: true }).fill(`${page2}\n${site.origin}/missing`)
          await page.getByRole("button", { name: "Add source" }).click()
          await page.getByText("2 URLs added.").waitFor()
          await page.getByLabel("File", { exact: true }).check()
          await page.locator("input[type=file]").setInputFiles({
            name: "warranty.txt",
            mimeType: "text/plain",
            buffer: Buffer.from("Warranty. Every device carries a two year warranty covering manufacturing defects.")
          })
          await page.getByRole("button", { name: "Add source" }).click()
          await page.getByText("File warranty.txt added.").waitFor()
          await page.waitForFunction(() => document.querySelectorAll("li.source-indexed").length === 4, undefined, { timeout: 60_000 })
          const missing = page.locator("li.source-failed")
          await missing.waitFor({ timeout: 60_000 })
          expect(await missing.textContent()).toContain("/missing")
          expect(await missing.locator(".source-error").textContent()).toMatch(/Failed: .*404|not found/i)
          await check(opened, "knowledge-sources")
          // deleting a source
          await missing.getByRole("button", { name: "Delete source" }).click()
          await missing.getByRole("button", { name: "Yes, delete source" }).click()
          await missing.waitFor({ state: "detached" })

          // test retrieval: the question the playground asks below finds the refunds text, relevant, scored
          await page.getByLabel("Question", { exact: true }).fill("How many days do I have to ask for a refund?")
          await page.getByRole("button", { name: "Search knowledge" }).click()
          const firstHit = page.getByRole("list", { name: /^Hits for / }).locator("li.hit").first()
          await firstHit.waitFor()
          expect(await firstHit.locator(".badge").textContent()).toBe("relevant")
          expect(await firstHit.textContent()).toMatch(/(Q&A|passage) · score [01]\.\d\d/)
          expect(await firstHit.locator(".excerpt").textContent()).toMatch(/refund/i)
          await page.getByText(/hits? reach(es)? the threshold/).waitFor()
          await check(opened, "knowledge-test-retrieval")
          // a question it knows nothing of: every hit marked not relevant, and the reply's fallback named
          await page.getByLabel("Question", { exact: true }).fill("What is the airspeed velocity of an unladen swallow?")
          await page.getByRole("button", { name: "Search knowledge" }).click()
          await page.getByText(/No hit reaches the threshold .* falls back/).waitFor()
          expect(await page.locator("li.hit .badge-relevant").count()).toBe(0)

          // the playground
          await page.getByRole("link", { name: "Playground" }).click()
          await page.getByRole("heading", { name: "Playground: Help desk" }).waitFor()
          await check(opened, "playground-empty")
          await page.evaluate(() => {
            const w = window as any
            w.replyTexts = []
            new MutationObserver(() => {
              const bubble = document.querySelector(".turn-assistant .bubble")
              const text = bubble?.textContent ?? ""
              if (text !== "" && text !== "…" && w.replyTexts[w.replyTexts.length - 1] !== text) w.replyTexts.push(text)
            }).observe(document.body, { subtree: true, childList: true, characterData: true })
          })
          await page.getByLabel("Message").fill("How many days do I have to ask for a refund?")
          // the connection drops after the first token: the page gets the stream cut there, then resumes
          let fullStream = ""
          let streamType = ""
          await page.route(
            (url) => url.pathname.endsWith("/messages"),
            async (route) => {
              const original = await route.fetch()
              fullStream = await original.text()
              streamType = original.headers()["content-type"] ?? ""
              const blocks = fullStream.split("\n\n")
              const firstToken = blocks.findIndex((b) => b.includes('"type":"token"'))
              await route.fulfill({ response: original, body: blocks.slice(0, firstToken + 1).join("\n\n") + "\n\n" })
            },
            { times: 1 }
          )
          const resume = page.waitForRequest((r) => r.url().endsWith("/stream") && r.method() === "GET")
          await page.getByLabel("Message").press("Enter")
          await page.getByText("Reply complete").waitFor({ timeout: 30_000 })
          const resumed = await resume
          expect(Number(resumed.headers()["last-event-id"])).toBeGreaterThan(0)
          // the reply came as server-sent token events (the local model sends them in one burst, so the page may
          // draw them in one frame); what was drawn grew by prefixes and ends as the tokens joined
          expect(streamType).toContain("text/event-stream")
          expect(fullStream).toMatch(/^id: ?\d+$/m)
          const events = fullStream
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => JSON.parse(line.slice(5)))
          const tokens = events.filter((e) => e.type === "token").map((e) => e.content as string)
          expect(tokens.length).toBeGreaterThan(2)
          const texts = (await page.evaluate(() => (window as any).replyTexts)) as Array<string>
          for (let i = 1; i < texts.length; i++) expect(texts[i]!.startsWith(texts[i - 1]!)).toBe(true)
          expect(await page.locator(".turn-assistant .bubble").textContent()).toBe(tokens.join(""))
          const sources = page.locator(".turn-assistant .reply-sources li")
          expect(await sources.count()).toBeGreaterThan(0)
          // the refunds text, as its passage ("Refunds") or as a Q&A item made of it
          expect(await sources.first().textContent()).toMatch(/refund/i)
          await check(opened, "playground")

          // settings: edit, then delete
          await page.getByRole("link", { name: "Settings" }).click()
          await page.getByLabel("Instructions").fill("Answer briefly.")
          await page.getByLabel("Welcome message").fill("Hello! How can I help?")
          const consoleOrigin = new URL(page.url()).origin
          await page.getByLabel("Allowed origins").fill(`https://shop.example.com\n${consoleOrigin}`)
          await page.getByLabel("Display name").fill("Ana")
          await page.getByLabel("Colour").fill("#112233")
          await page.getByLabel("Launcher position").selectOption("bottom-left")
          await page.getByLabel("Lead capture").selectOption("on_escalation")
          await page.getByLabel(/hand-off/).check()
          await page.getByRole("button", { name: "Save changes" }).click()
          await page.getByText("Saved.").waitFor()
          await check(opened, "agent-settings")
          // the snippet with a widget key, and the real chat component tried on this page (its origin is allowed)
          await page.getByLabel("Widget key").fill(ws.widgetTest)
          await page.locator("service-chat").getByRole("button", { name: /Ana/ }).waitFor()
          const snippet = await page.getByLabel("Embed snippet").inputValue()
          expect(snippet).toContain(`agent-id="${page.url().split("#/agents/")[1]!.split("/")[0]}"`)
          expect(snippet).toContain(`api-key="${ws.widgetTest}"`)
          expect(snippet).toContain(`${consoleOrigin}/storage/v1/object/public/widget/v1/service-chat-element.esm.js`)
          // an invalid origin: the service's message
          await page.getByLabel("Allowed origins").fill("https://shop.example.com/path")
          await page.getByRole("button", { name: "Save changes" }).click()
          expect(await page.getByRole("alert").textContent()).toContain("not an origin")
          await page.getByRole("button", { name: "Delete agent" }).click()
          await page.getByRole("button", { name: "Yes, delete agent" }).click()
          await page.getByRole("heading", { name: "Agents" }).waitFor()
          await page.getByText("No agents yet").waitFor()
          expect(opened.errors.filter((e) => !e.includes("status of 400"))).toEqual([])
        })
        const agents = yield* h.call("GET", "/v1/agents", { key: ws.secretTest })
        expect(agents.body.data).toEqual([])
      })
    )

    it.effect("tickets: the inbox filters; a member's reply appears in the thread as member; the status changes; erasure after a confirm", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Desk" } })
        for (const [subject, priority] of [["Where is my order?", "high"], ["Invoice copy", "low"]] as const) {
          const created = yield* h.call("POST", "/v1/tickets", {
            key: ws.secretTest,
            body: {
              agent_id: agent.body.data.id,
              subject,
              body: "Hello, I need help.",
              visitor_email: "ana@example.com",
              priority,
              tags: ["orders"]
            }
          })
          expect(created.status, created.text).toBe(201)
        }
        yield* Effect.promise(async () => {
          const opened = await open(h, "#/tickets")
          const { page } = opened
          await signIn(page, ws.secretTest)
          await page.getByRole("link", { name: "Where is my order?" }).waitFor()
          await check(opened, "tickets")
          await page.getByLabel("Priority").selectOption("low")
          await page.getByRole("link", { name: "Where is my order?" }).waitFor({ state: "detached" })
          await page.getByRole("link", { name: "Invoice copy" }).waitFor()
          await page.getByLabel("Priority").selectOption("")
          await page.getByLabel("Tag").fill("nothing-tagged")
          await page.getByText("No tickets match.").waitFor()
          await page.getByLabel("Tag").fill("")
          await page.getByRole("link", { name: "Where is my order?" }).click()
          await page.getByRole("heading", { name: "Where is my order?" }).waitFor()
          await page.getByLabel("Acting as member").fill("mem_ana")
          await page.getByLabel("Reply").fill("It ships tomorrow.")
          await page.getByRole("button", { name: "Send reply" }).click()
          const reply = page.locator("li.message-member")
          await reply.waitFor()
          expect(await reply.locator(".author").textContent()).toBe("member")
          expect(await reply.textContent()).toContain("It ships tomorrow.")
          // the member's reply moved it to pending_user; now resolve it
          expect(await page.getByLabel("Status").inputValue()).toBe("pending_user")
          await page.getByLabel("Status").selectOption("resolved")
          await page.locator("li.event", { hasText: "pending_user → resolved by member mem_ana" }).waitFor()
          await page.getByLabel("Tags").fill("orders, shipping")
          const patched = page.waitForResponse((r) => r.request().method() === "PATCH")
          await page.getByRole("button", { name: "Save tags" }).click()
          expect((await (await patched).json()).data.tags).toEqual(["orders", "shipping"])
          await check(opened, "ticket")
          // erasure, after a confirm step: the visitor's data leaves the thread and the inbox; the ticket stays
          await page.getByRole("button", { name: "Erase personal data" }).click()
          const erased = page.waitForResponse((r) => r.request().method() === "DELETE")
          await page.getByRole("button", { name: "Yes, erase personal data" }).click()
          expect((await erased).status()).toBe(200)
          await page.locator("li.event", { hasText: "erased by member mem_ana" }).waitFor()
          expect(await page.locator("li.message .body").allTextContents()).toEqual(["[deleted]", "[deleted]"])
          await page.locator(".crumbs").getByRole("link", { name: "Tickets" }).click()
          const row = page.getByRole("row", { name: /Where is my order\?/ })
          await row.waitFor()
          expect(await row.textContent()).toContain("[deleted]")
          expect(await page.locator("table").textContent()).toContain("ana@example.com")
          expect(await row.textContent()).not.toContain("ana@example.com")
        })
      })
    )

    it.effect("webhooks: create (secret shown once), send a test, see its delivery, retry a failed one, deactivate and reactivate, edit the URL and events", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        let webhookId = ""
        yield* Effect.promise(async () => {
          const opened = await open(h, "#/webhooks")
          const { page } = opened
          await signIn(page, ws.secretTest)
          await page.getByText("No subscriptions yet.").waitFor()
          await page.getByLabel("Receiver URL").fill("https://hooks.example.com/receive")
          await page.getByRole("button", { name: "Create subscription" }).click()
          const secret = page.getByRole("region", { name: "Signing secret, shown this once" })
          await secret.waitFor()
          expect(await secret.textContent()).toContain("whsec_")
          await check(opened, "webhooks")
          await page.getByRole("button", { name: "I saved it" }).click()
          await page.getByRole("link", { name: "https://hooks.example.com/receive" }).click()
          await page.getByText("No deliveries yet").waitFor()
          await page.getByRole("button", { name: "Send a test event" }).click()
          await page.locator("li.delivery", { hasText: "webhook.test" }).waitFor()
          // a receiver that answers: the delivery succeeds (the page polls while one is pending) and shows its attempt
          await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).click()
          // the list loaded first: a form filled while it loads is drawn anew, empty
          await page.getByRole("link", { name: "https://hooks.example.com/receive", exact: true }).waitFor()
          await page.getByLabel("Receiver URL").fill(site.put("/hook", "ok"))
          await page.getByRole("button", { name: "Create subscription" }).click()
          await page.getByRole("button", { name: "I saved it" }).click()
          await page.getByRole("link", { name: `${site.origin}/hook` }).click()
          await page.getByRole("button", { name: "Send a test event" }).click()
          const delivered = page.locator("li.delivery", { hasText: "succeeded" })
          await delivered.waitFor({ timeout: 30_000 })
          await delivered.getByRole("button", { name: "Show attempts" }).click()
          await delivered.locator("ol.attempts li", { hasText: "HTTP 200" }).waitFor()
          await check(opened, "webhook-delivered")
          // a receiver not there yet fails the first attempt; once it answers, Retry now adds an attempt that succeeds
          await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).click()
          await page.getByRole("link", { name: `${site.origin}/hook`, exact: true }).waitFor()
          await page.getByLabel("Receiver URL").fill(`${site.origin}/hook-later`)
          await page.getByRole("button", { name: "Create subscription" }).click()
          await page.getByRole("button", { name: "I saved it" }).click()
          await page.getByRole("link", { name: `${site.origin}/hook-later` }).click()
          await page.getByRole("button", { name: "Send a test event" }).click()
          const failed = page.locator("li.delivery", { hasText: "HTTP 404" })
          await failed.waitFor({ timeout: 30_000 })
          expect(await failed.textContent()).toContain("1 attempt ")
          site.put("/hook-later", "ok")
          await failed.getByRole("button", { name: "Retry now" }).click()
          const retried = page.locator("li.delivery", { hasText: "2 attempts" })
          await retried.waitFor({ timeout: 30_000 })
          await retried.getByRole("button", { name: "Show attempts" }).click()
          await retried.locator("ol.attempts li", { hasText: "HTTP 200" }).waitFor()
          expect(await retried.locator("ol.attempts li", { hasText: "HTTP 404" }).count()).toBe(1)
          await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).click()
          await page.getByRole("link", { name: "https://hooks.example.com/receive" }).click()
          await page.getByRole("button", { name: "Deactivate" }).click()
          await page.getByRole("button", { name: "Reactivate" }).click()
          await page.getByRole("button", { name: "Deactivate" }).waitFor()
          // the subscription edited in place: its URL and events
          const edit = page.locator("form", { has: page.getByRole("heading", { name: "Edit subscription" }) })
          await edit.getByLabel("Receiver URL").fill("https://hooks.example.com/moved")
          await edit.getByLabel("lead.captured").check()
          await edit.getByLabel("ticket.created").uncheck()
          await edit.getByRole("button", { name: "Save subscription" }).click()
          await page.getByRole("heading", { name: "https://hooks.example.com/moved" }).waitFor()
          await check(opened, "webhook")
          webhookId = page.url().split("#/webhooks/")[1]!
        })
        const edited = yield* h.call("GET", `/v1/webhooks/${webhookId}`, { key: ws.secretTest })
        expect(edited.body.data.url).toBe("https://hooks.example.com/moved")
        expect(edited.body.data.events).toEqual(["lead.captured"])
      })
    )

    it.effect("conversations with their messages, ratings and hand-off; a member answers a handed-off chat; leads, filtered and deleted", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const shop = "https://shop.example.com"
        const agent = yield* h.call("POST", "/v1/agents", {
          key: ws.secretTest,
          body: { type: "support", name: "Sales", allowed_origins: [shop], widget: { handoff: true } }
        })
        const agentId = agent.body.data.id as string
        // a widget conversation handed off to people
        const widgetPath = `/widget/v1/agents/${agentId}/conversations`
        const chat = yield* h.call("POST", widgetPath, { key: ws.widgetTest, headers: { origin: shop }, body: {} })
        const handedOff = chat.body.data.id as string
        const escalation = yield* h.call("POST", `${widgetPath}/${handedOff}/escalate`, {
          key: ws.widgetTest,
          headers: { origin: shop },
          body: { visitor_email: "vera@example.com" }
        })
        expect(escalation.status, escalation.text).toBe(201)
        const ticket = escalation.body.data.ticket.public_id as string
        const sent = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
          key: ws.secretTest,
          body: { message: "Do you ship to Canada?", stream: false }
        })
        expect(sent.status, sent.text).toBe(201)
        const lead = yield* h.call("POST", "/v1/leads", {
          key: ws.secretTest,
          body: { agent_id: agentId, email: "lee@example.com", name: "Lee", conversation_id: sent.body.data.conversation_id }
        })
        expect(lead.status, lead.text).toBe(201)
        const rated = yield* h.call("POST", `/v1/conversations/${sent.body.data.conversation_id}/messages/${sent.body.data.id}/feedback`, {
          key: ws.secretTest,
          body: { rating: "down", comment: "Not about Canada" }
        })
        expect(rated.status, rated.text).toBe(200)
        yield* Effect.promise(async () => {
          const opened = await open(h, "#/conversations")
          const { page } = opened
          await signIn(page, ws.secretTest)
          const byChannel = (channel: string) => page.getByRole("row").filter({ has: page.getByRole("cell", { name: channel, exact: true }) })
          await byChannel("widget").getByText("requested").waitFor()
          await check(opened, "conversations")
          await byChannel("api").getByRole("link").click()
          await page.getByText("Do you ship to Canada?").waitFor()
          await page.locator(".turn-assistant .feedback", { hasText: "Rated not helpful" }).getByText(/Not about Canada/).waitFor()
          await page.getByText("rated 0 helpful, 1 not helpful").waitFor()
          expect(await page.getByRole("region", { name: "Hand-off" }).count()).toBe(0)
          await check(opened, "conversation")

          // the handed-off one: its state, a member's answer sent from here, then the release
          await page.goBack()
          await byChannel("widget").getByRole("link").click()
          const handoff = page.getByRole("region", { name: "Hand-off" })
          await handoff.getByText("requested").waitFor()
          expect(await handoff.getByRole("link", { name: ticket }).getAttribute("href")).toBe(`#/tickets/${ticket}`)
          await check(opened, "conversation-handoff")
          await handoff.getByLabel("Acting as member").fill("mem_ada")
          await handoff.getByLabel("Answer the visitor").fill("It left the warehouse today.")
          await handoff.getByRole("button", { name: "Send to the visitor" }).click()
          await page.locator(".turn-member", { hasText: "It left the warehouse today." }).getByText(/Member/).waitFor()
          await handoff.getByText("active").waitFor()
          await handoff.getByRole("button", { name: "Give back to the agent" }).click()
          await handoff.getByText("The agent answers this conversation again.").waitFor()
          expect(await handoff.getByText("closed").count()).toBe(1)
          await page.getByRole("link", { name: "Leads" }).click()
          const row = page.getByRole("row", { name: /lee@example.com/ })
          await row.waitFor()
          await page.getByLabel("E-mail").fill("nobody@example.com")
          await page.getByText("No leads match.").waitFor()
          await page.getByLabel("E-mail").fill("")
          await row.waitFor()
          await check(opened, "leads")
          await row.getByRole("button", { name: /Delete/ }).click()
          await row.getByRole("button", { name: "Yes, delete" }).click()
          await page.getByText("No leads match.").waitFor()
        })
        // the answer went the ticket's way: on its thread, by the member, and in the conversation
        const thread = yield* h.call("GET", `/v1/tickets/${ticket}/messages`, { key: ws.secretTest })
        expect(thread.body.data.map((m: any) => [m.author_type, m.author_id, m.body])).toEqual([["member", "mem_ada", "It left the warehouse today."]])
        const read = yield* h.call("GET", `/v1/conversations/${handedOff}`, { key: ws.secretTest })
        expect(read.body.data.messages.map((m: any) => [m.role, m.content])).toEqual([["member", "It left the warehouse today."]])
        expect(read.body.data.handoff.status).toBe("closed")
      })
    )

    it.effect("Q&A with categories (add, filter, edit, delete) and the glossary (add, disable, delete)", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Shop" } })
        const agentId = agent.body.data.id as string
        yield* Effect.promise(async () => {
          const opened = await open(h, `#/agents/${agentId}/qa`)
          const { page } = opened
          await signIn(page, ws.secretTest)
          await page.getByRole("heading", { name: "Q&A: Shop" }).waitFor()
          await page.getByText("No Q&A here.").waitFor()
          await page.getByLabel("New category").fill("Billing")
          await page.getByRole("button", { name: "Add category" }).click()
          await page.locator("ol.categories li", { hasText: "Billing" }).waitFor()
          const form = page.locator("form", { has: page.getByRole("heading", { name: "New Q&A" }) })
          await form.getByLabel("Question").fill("Can I pay by invoice?")
          await form.getByLabel("Answer").fill("Yes, on annual plans.")
          await form.getByLabel("Category").selectOption({ label: "Billing" })
          await form.getByRole("button", { name: "Add Q&A" }).click()
          const item = page.locator("li.qa", { hasText: "Can I pay by invoice?" })
          await item.waitFor()
          await page.getByLabel("Show").selectOption("none")
          await page.getByText("No Q&A here.").waitFor()
          await page.getByLabel("Show").selectOption({ label: "Billing" })
          await item.waitFor()
          await check(opened, "qa")
          await item.getByRole("button", { name: "Edit: Can I pay by invoice?" }).click()
          const editing = page.locator("li.qa").first()
          await editing.getByLabel("Answer").fill("Yes, on annual plans, net 30.")
          await editing.getByRole("button", { name: "Save Q&A" }).click()
          await page.getByText("Yes, on annual plans, net 30.").waitFor()
          await page.locator("li.qa").getByRole("button", { name: /Delete/ }).click()
          await page.getByRole("button", { name: "Yes, delete" }).click()
          await page.getByText("No Q&A here.").waitFor()

          await page.getByRole("link", { name: "Glossary" }).click()
          await page.getByText("No terms yet.").waitFor()
          await page.getByLabel("Term", { exact: true }).fill("SKU")
          await page.getByLabel("Definition").fill("Stock keeping unit")
          await page.getByLabel("Synonyms").fill("item code, article number")
          await page.getByRole("button", { name: "Add term" }).click()
          const row = page.getByRole("row", { name: /SKU/ })
          await row.waitFor()
          expect(await row.textContent()).toContain("item code, article number")
          await row.getByLabel("SKU enabled").uncheck()
          await page.waitForFunction(() => !(document.querySelector("input[aria-label='SKU enabled']") as HTMLInputElement)?.checked)
          await check(opened, "glossary")
          await row.getByRole("button", { name: /Delete/ }).click()
          await row.getByRole("button", { name: "Yes, delete" }).click()
          await page.getByText("No terms yet.").waitFor()
        })
        const glossary = yield* h.call("GET", `/v1/agents/${agentId}/glossary`, { key: ws.secretTest })
        expect(glossary.body.data.terms).toEqual([])
      })
    )

    it.effect("forms: create from the template, edit fields, texts and branding field by field with the <service-form> preview following the draft; a field error from the service shows beside the field; the identity secret rotated; the JSON editor behind a toggle", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed({ plan: "pro" })
        yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Front desk" } })
        let formId = ""
        yield* Effect.promise(async () => {
          const opened = await open(h, "#/forms")
          const { page } = opened
          await signIn(page, ws.secretTest)
          await page.getByText("No forms yet.").waitFor()
          await page.getByRole("button", { name: "Create form" }).click()
          await page.getByRole("heading", { name: "Contact us" }).waitFor()
          await page.getByLabel("Forms public key").fill(ws.formsTest)
          const preview = page.frameLocator("iframe[title='Form preview']")
          await preview.locator("service-form h2[part=title]").filter({ hasText: "Contact us" }).waitFor()
          expect(await preview.getByLabel("E-mail", { exact: true }).count()).toBe(1)
          // the field-by-field editor: the preview follows the unsaved draft
          const fieldset = (n: number) => page.locator("fieldset.form-field").nth(n)
          await fieldset(0).getByLabel("Label (en)").fill("Full name")
          await preview.getByLabel("Full name").waitFor()
          await page.getByLabel("Title (en)").fill("Write to us")
          await preview.locator("service-form h2[part=title]").filter({ hasText: "Write to us" }).waitFor()
          await page.getByLabel("Button colour").fill("#e11d48")
          await expect
            .poll(() => preview.locator("service-form").evaluate((el) => getComputedStyle(el.shadowRoot!.querySelector("[part~=submit]")!).backgroundColor))
            .toBe("rgb(225, 29, 72)")
          await page.getByRole("button", { name: "Add field" }).click()
          await fieldset(3).getByLabel("Type").selectOption("select")
          await fieldset(3).getByLabel("Option 1 label (en)").fill("Sales")
          await fieldset(3).getByRole("button", { name: /Move .* up/ }).click()
          await expect.poll(() => fieldset(2).getByLabel("Option 1 label (en)").inputValue()).toBe("Sales")
          await preview.getByRole("option", { name: "Sales" }).or(preview.locator("option", { hasText: "Sales" })).first().waitFor({ state: "attached" })
          await fieldset(2).getByRole("button", { name: /Remove Field 4/ }).click()
          expect(await page.locator("fieldset.form-field").count()).toBe(3)
          await page.getByRole("button", { name: "Save form" }).click()
          await page.getByText("Saved.").or(page.getByRole("alert")).waitFor()
          expect(await page.getByRole("alert").count(), await page.locator(".editor").textContent() ?? "").toBe(0)
          await preview.locator("service-form h2[part=title]").filter({ hasText: "Write to us" }).waitFor()
          formId = page.url().split("#/forms/")[1]!
          await page.getByLabel("Language").selectOption("es")
          await preview.locator("service-form h2[part=title]").filter({ hasText: "Contáctanos" }).waitFor()
          await page.getByLabel("Language").selectOption("en")
          expect(await page.getByLabel("Embed snippet").inputValue()).toContain(`form-id="${formId}"`)
          // the identity secret, shown once
          await page.getByRole("button", { name: "Rotate identity secret" }).click()
          await page.getByRole("button", { name: "Yes, rotate identity secret" }).click()
          await page.getByRole("region", { name: "New identity secret" }).waitFor()
          await page.getByRole("button", { name: "I saved it" }).click()
          await check(opened, "form-editor")
          // a field error from the service shows beside the field it names
          await fieldset(1).getByLabel("Field id").fill("Bad Id")
          await page.getByRole("button", { name: "Save form" }).click()
          await page.getByRole("alert").waitFor()
          await fieldset(1).locator(".field-problems").waitFor()
          expect(await fieldset(0).locator(".field-problems").count()).toBe(0)
          opened.errors.splice(0, opened.errors.length, ...opened.errors.filter((e) => !e.includes("status of 400")))
          await check(opened, "form-editor-error")
          await fieldset(1).getByLabel("Field id").fill("email")
          // the JSON editor, behind the advanced toggle
          await page.getByRole("button", { name: "Advanced (JSON)" }).click()
          const definition = page.getByLabel("Definition (JSON)")
          const edited = JSON.parse(await definition.inputValue())
          expect(edited.title.en).toBe("Write to us")
          await definition.fill(JSON.stringify({ ...edited, fields: [] }))
          await page.getByRole("button", { name: "Save form" }).click()
          await page.getByRole("alert").waitFor()
          expect((await page.getByRole("alert").textContent())!.length).toBeGreaterThan(10)
          opened.errors.splice(0, opened.errors.length, ...opened.errors.filter((e) => !e.includes("status of 400")))
          await page.getByRole("link", { name: "Forms" }).first().click()
          await page.getByRole("link", { name: "Write to us" }).waitFor()
          await check(opened, "forms")
        })
        const saved = yield* h.call("GET", `/v1/forms/${formId}`, { key: ws.secretTest })
        expect(saved.body.data.fields.map((f: { label: { en: string } }) => f.label.en)).toEqual(["Full name", "E-mail", "Message"])
      })
    )

    it.effect("a crawl started from the knowledge page: its counts move to completed, its pages become sources, its skipped pages listed with why, its schedule stopped", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Crawled desk" } })
        const agentId = agent.body.data.id as string
        const article = (title: string, body: string) =>
          `<html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${body}</p></main></body></html>`
        const start = site.put(
          "/crawl/start",
          article("Help centre", 'Answers about orders. <a href="/crawl/delivery">Delivery</a> <a href="/crawl/warranty">Warranty</a> <a href="/crawl/logo.png">Logo</a>')
        )
        site.put("/crawl/delivery", article("Delivery", "Parcels reach mainland addresses within three working days of the order."))
        site.put("/crawl/warranty", article("Warranty", "Every appliance carries a two year warranty covering parts and labour."))
        yield* Effect.promise(async () => {
          const opened = await open(h, `#/agents/${agentId}/knowledge`)
          const { page } = opened
          await signIn(page, ws.secretTest)
          await page.getByRole("heading", { name: "Crawl a website" }).waitFor()
          await page.getByLabel("Site address").fill(start)
          await page.getByLabel("Crawl the site again").selectOption("weekly")
          await page.getByRole("button", { name: "Start crawl" }).click()
          const crawl = page.locator("li.crawl").first()
          await page.locator("li.crawl-completed").waitFor({ timeout: 60_000 })
          await crawl.getByText("3 kept · 3 indexed · 0 indexing · 0 failed · 0 queued · skipped not html 1").waitFor({ timeout: 60_000 })
          expect(await crawl.locator("progress").getAttribute("value")).toBe("100")
          // its pages are the agent's sources, listed without reloading the page
          await page.locator("li.source-indexed", { hasText: "Warranty" }).waitFor({ timeout: 30_000 })
          await crawl.getByRole("button", { name: "Show skipped pages" }).click()
          await crawl.getByRole("list", { name: "Skipped pages" }).getByText("not html").waitFor()
          expect(await crawl.getByRole("list", { name: "Skipped pages" }).textContent()).toContain("/crawl/logo.png")
          await check(opened, "knowledge-crawl")
          await crawl.getByText(/again weekly, next /).waitFor()
          await crawl.getByRole("button", { name: "Stop crawling again" }).click()
          await crawl.getByRole("button", { name: "Stop crawling again" }).waitFor({ state: "detached" })
        })
      })
    )

    it.effect("a url source refreshed from the knowledge page after its page changed, the agent's refresh schedule saved, a round begun", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Fresh desk" } })
        const agentId = agent.body.data.id as string
        const article = (body: string) =>
          `<html><head><title>Opening hours</title></head><body><main><h1>Opening hours</h1><p>${body}</p></main></body></html>`
        const url = site.put("/fresh/hours", article("The shop opens from nine to five on weekdays only."))
        const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, { key: ws.secretTest, body: { type: "url", url } })
        expect(created.status).toBe(201)
        yield* Effect.promise(async () => {
          const opened = await open(h, `#/agents/${agentId}/knowledge`)
          const { page } = opened
          await signIn(page, ws.secretTest)
          const source = page.locator("li.source-indexed", { hasText: "Opening hours" })
          await source.getByText(/Checked —/).waitFor({ timeout: 60_000 })
          site.put("/fresh/hours", article("The shop now opens from eight to eight, every day of the week."))
          await source.getByRole("button", { name: "Refresh Opening hours" }).click()
          await source.getByText(/ · changed /).waitFor({ timeout: 60_000 })

          await page.getByLabel("Refresh every web page").selectOption("weekly")
          await page.getByLabel("Days a page gone keeps its knowledge").fill("3")
          await page.getByRole("button", { name: "Save schedule" }).click()
          await page.getByRole("status").getByText("Saved.").waitFor()
          await page.getByRole("button", { name: "Refresh every web page now" }).click()
          await page.getByRole("status").getByText(/Round started/).waitFor()
          await check(opened, "knowledge-refresh")
        })
        const saved = yield* h.call("GET", `/v1/agents/${agentId}`, { key: ws.secretTest })
        expect(saved.body.data.knowledge_refresh).toEqual({ schedule: "weekly", gone_grace_days: 3 })
      })
    )

    it.effect("a training agent's course: a module, a lesson, a text source reaching indexed, then the module deleted with all it holds", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agent = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "training", name: "Onboarding" } })
        const agentId = agent.body.data.id as string
        yield* Effect.promise(async () => {
          const opened = await open(h, `#/agents/${agentId}/course`)
          const { page } = opened
          await signIn(page, ws.secretTest)
          await page.getByText("No modules yet.").waitFor()
          await page.getByLabel("Module title").fill("Basics")
          await page.getByRole("button", { name: "Add module" }).click()
          await page.getByRole("button", { name: "Module: Basics", exact: true }).click()
          await page.getByText("No lessons in this module.").waitFor()
          await page.getByLabel("Lesson title").fill("Welcome")
          await page.getByRole("button", { name: "Add lesson" }).click()
          await page.getByRole("button", { name: "Lesson: Welcome", exact: true }).click()
          await page.getByText("No sources in this lesson.").waitFor()
          await page.getByLabel("Source title").fill("First day")
          await page.getByLabel("Source text").fill("On the first day you meet your team and receive your laptop and badge.")
          await page.getByRole("button", { name: "Add text source" }).click()
          await page.locator("li.source-indexed", { hasText: "First day" }).waitFor({ timeout: 60_000 })
          await check(opened, "course")
          await page.getByRole("button", { name: "Delete module: Basics" }).click()
          await page.getByRole("button", { name: "Yes, delete module" }).click()
          await page.getByText("No modules yet.").waitFor()
        })
      })
    )

    it.effect("API keys: the list, one created (shown once, copied) and revoked, a revoked secret key refused with 401; a list longer than a page loaded with Load more", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        let shownKeys = 0
        yield* Effect.promise(async () => {
          const opened = await open(h, "#/keys")
          const { page } = opened
          await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: h.url })
          await signIn(page, ws.secretTest)
          await page.getByRole("heading", { name: "API keys" }).waitFor()
          await page.getByRole("cell", { name: ws.secretTest.slice(0, 8), exact: false }).first().waitFor()
          await page.getByLabel("Kind").selectOption("widget")
          await page.getByLabel("Key name").fill("Shop widget")
          await page.getByRole("button", { name: "Create key" }).click()
          const shown = page.getByRole("region", { name: "New key, shown this once" })
          await shown.waitFor()
          const value = (await shown.locator("code").textContent())!
          expect(value).toMatch(/^widget_pk_/)
          await shown.getByRole("button", { name: "Copy" }).click()
          await shown.getByText("Copied.").waitFor()
          expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(value)
          const row = page.getByRole("row", { name: /Shop widget/ })
          await row.waitFor()
          await check(opened, "keys")
          await row.getByRole("button", { name: /Revoke/ }).click()
          await row.getByRole("button", { name: "Yes, revoke" }).click()
          await row.waitFor({ state: "detached" })
          // a secret key revoked in the console stops working at once
          await shown.getByRole("button", { name: "I saved it" }).click()
          await page.getByLabel("Kind").selectOption("secret")
          await page.getByLabel("Key name").fill("Nightly job")
          await page.getByRole("button", { name: "Create key" }).click()
          await shown.waitFor()
          const secretKey = (await shown.locator("code").textContent())!
          expect(secretKey).toMatch(/^sk_test_/)
          const withKey = () => fetch(`${h.url}/v1/agents`, { headers: { authorization: `Bearer ${secretKey}` } })
          expect((await withKey()).status).toBe(200)
          const jobRow = page.getByRole("row", { name: /Nightly job/ })
          await jobRow.getByRole("button", { name: /Revoke/ }).click()
          await jobRow.getByRole("button", { name: "Yes, revoke" }).click()
          await jobRow.waitFor({ state: "detached" })
          const refused = await withKey()
          expect(refused.status).toBe(401)
          expect(((await refused.json()) as any).error.code).toBe("invalid_api_key")
          // a list longer than a page: "Load more" follows the cursor until the last page
          await page.evaluate(() => sessionStorage.setItem("console.page-size", "2"))
          await page.reload()
          const rows = page.locator("table tbody tr")
          await rows.first().waitFor()
          expect(await rows.count()).toBe(2)
          const more = page.getByRole("button", { name: "Load more keys" })
          await page.getByText("2 keys shown").waitFor()
          await check(opened, "keys-paged")
          while (await more.isVisible()) {
            const before = await rows.count()
            await more.click()
            await expect.poll(() => rows.count()).toBeGreaterThan(before)
          }
          shownKeys = await rows.count()
        })
        const all = yield* h.call("GET", "/v1/keys?limit=100", { key: ws.secretTest })
        expect(shownKeys).toBe(all.body.data.length)
        expect(shownKeys).toBeGreaterThan(2)
      })
    )

    it.effect("keyboard only: sign in, reach Agents, create an agent, open its knowledge, with focus always visible", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        yield* Effect.promise(async () => {
          const { page, errors } = await open(h)
          await page.getByRole("heading", { name: "Sign in to the sandbox environment" }).waitFor()
          /** Presses Tab until the focused element matches `selector`; each stop shows a focus outline. */
          const tabTo = async (selector: string) => {
            for (let i = 0; i < 40; i++) {
              await page.keyboard.press("Tab")
              const state = await page.evaluate((sel) => {
                const e = document.activeElement!
                const style = getComputedStyle(e)
                return { hit: e.matches(sel), outlined: style.outlineStyle !== "none" && style.outlineWidth !== "0px", what: e.outerHTML.slice(0, 120) }
              }, selector)
              // past the last control focus leaves the page for the browser's own (the body is then "focused")
              if (state.what.startsWith("<body")) continue
              expect(state.outlined, `focus visible while tabbing to ${selector}: ${state.what}`).toBe(true)
              if (state.hit) return
            }
            throw new Error(`Tab never reached ${selector}`)
          }
          await tabTo("input[name=secret-key]")
          await page.keyboard.type(ws.secretTest)
          await page.keyboard.press("Enter")
          await page.getByRole("navigation", { name: "Main" }).waitFor()
          // signing in moves focus to the page's content
          await page.waitForFunction(() => document.activeElement?.id === "main")
          await tabTo('nav.side a[href="#/agents"]')
          await page.keyboard.press("Enter")
          await page.getByRole("heading", { name: "Agents" }).waitFor()
          // a page change moves focus to the content (the next Tab starts there): wait for it, as a person would see it
          await page.waitForFunction(() => document.activeElement?.id === "main")
          await tabTo("input[name=agent-name]")
          await page.keyboard.type("Keyboard agent")
          await page.keyboard.press("Enter")
          await page.getByRole("heading", { name: "Knowledge: Keyboard agent" }).waitFor()
          await page.waitForFunction(() => document.activeElement?.id === "main")
          await tabTo("input[name=kind][value=text]")
          await page.keyboard.press("ArrowRight")
          expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).value)).toBe("url")
          expect(await page.getByLabel("Page URL").isVisible()).toBe(true)
          expect(errors).toEqual([])
        })
      })
    )
  })
})
