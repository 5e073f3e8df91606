/**
 * `<service-chat>` with two processes of the bundle on one PostgreSQL: the widget's page follows the
 * conversation on the first, a member's reply and the release are served by the second, and both reach the open
 * widget without a reload (LISTEN/NOTIFY between the processes). Self-contained: it makes its own throwaway
 * database on the local PostgreSQL (`DATABASE_URL`'s server, else `postgres://postgres@127.0.0.1:5432/postgres`),
 * so it runs in the PGlite pass too; it skips, saying so, only when that server does not answer.
 */
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pg, throwawayDatabase } from "../../scripts/bench/lib.js"
import { bootstrapWorkspace, cleanupAll, expectCall, type Service, setupTimeout, startService } from "../dist/support.js"
import { chatPage, haveChromium, launchChromium, type PageServer, startPageServer } from "./browser.js"

const serverUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** The PostgreSQL server answers a query within a few seconds. */
const reachable = async (): Promise<boolean> => {
  const client = new (pg.Client as any)({ connectionString: serverUrl, connectionTimeoutMillis: 3_000 })
  try {
    await client.connect()
    await client.query("select 1")
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => undefined)
  }
}

const havePostgres = await reachable()
if (!havePostgres) {
  console.warn(`SKIPPED the two-process widget test: no PostgreSQL answers at ${new URL(serverUrl).host}`)
}

describe.skipIf(!haveChromium || !havePostgres)("<service-chat> with two processes on one PostgreSQL", () => {
  let browser: Browser
  let site: PageServer
  let first: Service
  let second: Service

  beforeAll(async () => {
    const url = await throwawayDatabase({ serverUrl, prefix: "chat_two" })
    // one after the other: the first start makes the default workspace, the second finds it
    first = await startService({ DATABASE_URL: url })
    second = await startService({ DATABASE_URL: url })
    browser = await launchChromium()
    site = await startPageServer()
  }, setupTimeout)
  afterAll(async () => {
    await browser?.close()
    await site?.close()
    await cleanupAll()
  })

  it("a member's reply and the release, served by the second process, reach the widget open on the first", async () => {
    const { secret } = await bootstrapWorkspace(first)
    const agent = await expectCall(first, "POST", "/v1/agents", 201, {
      key: secret,
      body: { type: "support", name: "Help desk", allowed_origins: [site.origin], widget: { handoff: true } }
    })
    const widgetKey = (await expectCall(first, "POST", "/v1/keys", 201, { key: secret, body: { kind: "widget", scopes: ["widget:chat"] } })).data
      .secret as string

    const context = await browser.newContext({ locale: "en-US" })
    const page = await context.newPage()
    page.setDefaultTimeout(20_000)
    await page.goto(site.put("/chat", chatPage(first.base, { "api-key": widgetKey, "agent-id": agent.data.id, open: "" })))
    await page.getByRole("button", { name: "Talk to a person" }).click()
    await page.getByLabel("Your e-mail").fill("ana@example.com")
    await page.getByRole("button", { name: "Continue" }).click()
    await page.locator("service-chat .log .notice", { hasText: "a person will answer" }).waitFor()

    // the second process serves the member: its NOTIFY wakes the first's stream
    const tickets = await expectCall(second, "GET", "/v1/tickets", 200, { key: secret })
    const ticket = tickets.data.find((t: any) => t.origin === "ai_escalation")
    expect(ticket, JSON.stringify(tickets.data)).toBeDefined()
    await expectCall(second, "POST", `/v1/tickets/${ticket.public_id}/messages`, 201, {
      key: secret,
      body: { body: "Hello Ana, a person from the second process here." }
    })
    await page.locator("service-chat .msg.member", { hasText: "from the second process" }).waitFor({ timeout: 10_000 })
    await page.locator("service-chat .log .notice", { hasText: "A team member has this conversation now." }).waitFor()

    await expectCall(second, "POST", `/v1/conversations/${ticket.conversation_id}/release`, 200, { key: secret })
    await page.locator("service-chat .log .notice", { hasText: "the assistant answers again" }).waitFor({ timeout: 10_000 })
    await context.close()
  })
})
