/**
 * `<service-form>` in Chromium against the real server: a page on another
 * loopback origin embeds the component as a site would (one module script, one
 * tag). Rendering from config, locale choice, prefill and hidden fields reaching
 * the ticket, client- and server-side field errors, the four events, theming by
 * page CSS and `::part()`, `bare`, the headless helpers and the session cache.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdirSync } from "node:fs"
import { join, resolve } from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll } from "vitest"
import { elementPath } from "../../src/forms/ElementBundle.js"
import { contactForm, createAgent } from "../forms/support.js"
import { Harness, type HarnessShape, type SeededWorkspace, testServer } from "../support/harness.js"
import { catalogues } from "../../schema/texts/Catalogue.js"
import { textsFor } from "../../src/forms/element/texts.js"
import { embedPage, englishAmong, englishOnlyTexts, haveChromium, launchChromium, type PageServer, shadowTexts, startPageServer } from "./browser.js"

const artifacts = resolve(import.meta.dirname, "../artifacts")

declare global {
  interface Window {
    events: Array<{ type: string; detail: any; bubbled: boolean }>
  }
}

describe.skipIf(!haveChromium)("<service-form> in Chromium", () => {
  let browser: Browser
  let site: PageServer
  const contexts: Array<BrowserContext> = []

  beforeAll(async () => {
    browser = await launchChromium()
    site = await startPageServer()
  })
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()))
    await browser?.close()
    await site?.close()
  })

  let pageCount = 0
  /** Opens a page of the site embedding the component; waits for `ready` or `error`. */
  const open = (
    h: HarnessShape,
    attributes: Record<string, string>,
    options: { lang?: string; css?: string; locale?: string; waitFor?: "ready" | "error" } = {}
  ) =>
    Effect.promise(async () => {
      const context = await browser.newContext({ locale: options.locale ?? "en-US", viewport: { width: 800, height: 1000 } })
      contexts.push(context)
      const page = await context.newPage()
      page.setDefaultTimeout(15_000)
      const url = site.put(`/page-${++pageCount}`, embedPage({ scriptUrl: `${h.url}${elementPath}`, attributes, ...options }))
      await page.goto(url)
      const waitFor = `service-form:${options.waitFor ?? "ready"}`
      await page.waitForFunction((type) => window.events.some((e) => e.type === type), waitFor)
      return { page, context, url }
    })

  const events = (page: Page, type: string) =>
    page.evaluate((t) => window.events.filter((e) => e.type === t), type)

  const waitEvent = (page: Page, type: string) =>
    page.waitForFunction((t) => window.events.some((e) => e.type === t), type).then(() => events(page, type))

  const setup = (h: HarnessShape, ws: SeededWorkspace, settings: Record<string, unknown> = {}) =>
    Effect.gen(function* () {
      const agentId = yield* createAgent(h, ws.secretTest)
      const body = contactForm(agentId, { allowed_origins: [site.origin], ...settings })
      const created = yield* h.call("POST", "/v1/forms", { key: ws.secretTest, body })
      expect(created.status, created.text).toBe(201)
      return { formId: created.body.data.id as string, body }
    })

  layer(testServer())("component", (it) => {
    it.effect("renders the form from its config: labels tied to inputs, hidden fields not drawn, a decoy nobody reaches", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { formId } = yield* setup(h, ws)
        const { page } = yield* open(h, { "api-key": ws.formsTest, "form-id": formId, locale: "en" })
        yield* Effect.promise(async () => {
          const [loading] = await events(page, "service-form:loading")
          expect(loading).toMatchObject({ detail: { formId }, bubbled: true })
          const [ready] = await events(page, "service-form:ready")
          expect(ready!.detail.formId).toBe(formId)
          expect(ready!.detail.fields.map((f: any) => f.id)).toEqual(["name", "email", "subject", "body", "topic", "order", "consent", "page"])

          expect(await page.locator("service-form h2[part=title]").textContent()).toBe("Contact us")
          // getByLabel finds each control through its <label for>, inside the shadow root
          for (const [label, tag] of [["Name", "INPUT"], ["E-mail", "INPUT"], ["Message", "TEXTAREA"], ["Topic", "SELECT"], ["I agree", "INPUT"]] as const) {
            expect(await page.getByLabel(label, { exact: true }).evaluate((e) => e.tagName)).toBe(tag)
          }
          expect(await page.getByLabel("E-mail", { exact: true }).getAttribute("type")).toBe("email")
          expect(await page.getByLabel("Name", { exact: true }).getAttribute("aria-required")).toBe("true")
          expect(await page.locator("service-form select option").allTextContents()).toEqual(["Choose an option", "Billing", "Technical"])
          expect(await page.locator("service-form [name=page]").count()).toBe(0)
          expect(await page.locator("service-form button[part=submit]").textContent()).toBe("Send")
          const decoy = page.locator("service-form input[name=_hp]")
          expect(await decoy.getAttribute("tabindex")).toBe("-1")
          expect(await decoy.getAttribute("autocomplete")).toBe("off")
          expect(await page.locator("service-form .hp").getAttribute("aria-hidden")).toBe("true")
          expect(await decoy.isVisible()).toBe(true) // present for bots, but off-screen:
          expect((await decoy.boundingBox())!.x).toBeLessThan(0)

          mkdirSync(artifacts, { recursive: true })
          await page.locator("service-form").screenshot({ path: join(artifacts, "service-form.png") })
        })
      })
    )

    it.effect("shows a skeleton while the config loads; an attribute change re-draws and keeps what was typed", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { formId } = yield* setup(h, ws)
        yield* Effect.promise(async () => {
          const context = await browser.newContext({ locale: "en-US" })
          contexts.push(context)
          const page = await context.newPage()
          page.setDefaultTimeout(15_000)
          let release: () => void = () => {}
          const held = new Promise<void>((resolve) => (release = resolve))
          // the config request is held (not answered by the test) until the skeleton has been seen
          await page.route("**/config", async (route) => {
            await held
            await route.continue()
          })
          const url = site.put(`/page-${++pageCount}`, embedPage({ scriptUrl: `${h.url}${elementPath}`, attributes: { "api-key": ws.formsTest, "form-id": formId } }))
          await page.goto(url)
          const skeleton = page.locator("service-form .skeleton")
          await skeleton.waitFor()
          expect(await skeleton.getAttribute("aria-busy")).toBe("true")
          expect(await skeleton.getAttribute("role")).toBe("status")
          expect(await page.locator("service-form form").count()).toBe(0)
          release()
          await page.waitForFunction(() => window.events.some((e) => e.type === "service-form:ready"))
          expect(await skeleton.count()).toBe(0)

          await page.getByLabel("Name", { exact: true }).fill("Ana")
          await page.locator("service-form").evaluate((e) => e.setAttribute("locale", "es"))
          expect(await page.locator("service-form label[for=sf-name]").textContent()).toBe("Nombre")
          expect(await page.getByLabel("Nombre", { exact: true }).inputValue()).toBe("Ana")
          await page.locator("service-form").evaluate((e) => e.setAttribute("appearance", "bare"))
          expect(await page.locator("service-form form").evaluate((e) => getComputedStyle(e).borderTopWidth)).toBe("0px")
          // ready is raised once per load, not per re-draw
          expect(await events(page, "service-form:ready")).toHaveLength(1)
        })
      })
    )

    it.effect("picks the locale: attribute, then the document's lang, then the browser, then Spanish", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { formId } = yield* setup(h, ws)
        const base = { "api-key": ws.formsTest, "form-id": formId }
        const labelOf = (page: Page) => page.locator("service-form label[for=sf-name]").textContent()

        const byLang = yield* open(h, base, { lang: "es-MX", locale: "en-US" })
        expect(yield* Effect.promise(() => labelOf(byLang.page))).toBe("Nombre")
        expect(yield* Effect.promise(() => byLang.page.locator("service-form button").textContent())).toBe("Enviar")
        expect(yield* Effect.promise(() => byLang.page.locator("service-form h2").textContent())).toBe("Contáctanos")
        // a text the form has only in English is shown in English
        expect(yield* Effect.promise(() => byLang.page.locator("service-form label[for=sf-topic]").textContent())).toBe("Topic")

        const byAttribute = yield* open(h, { ...base, locale: "en" }, { lang: "es" })
        expect(yield* Effect.promise(() => labelOf(byAttribute.page))).toBe("Name")

        const byBrowser = yield* open(h, base, { locale: "en-GB" })
        expect(yield* Effect.promise(() => labelOf(byBrowser.page))).toBe("Name")

        const fallback = yield* open(h, base, { locale: "fr-FR" })
        expect(yield* Effect.promise(() => labelOf(fallback.page))).toBe("Nombre")
      })
    )

    it.effect("prefill and hidden fields reach the ticket; success raises service-form:success with the response body", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { formId } = yield* setup(h, ws)
        const { page } = yield* open(h, {
          "api-key": ws.formsTest,
          "form-id": formId,
          locale: "en",
          "prefill-name": "Ana Pérez",
          "prefill-email": "ana@example.com",
          prefill: JSON.stringify({ body: "Where is my order?", subject: "Order 42", page: "/pricing", name: "overridden" }),
          "hidden-fields": "subject"
        })
        const detail = yield* Effect.promise(async () => {
          expect(await page.getByLabel("Name", { exact: true }).inputValue()).toBe("Ana Pérez")
          expect(await page.getByLabel("E-mail", { exact: true }).inputValue()).toBe("ana@example.com")
          expect(await page.getByLabel("Message", { exact: true }).inputValue()).toBe("Where is my order?")
          expect(await page.locator("service-form [name=subject]").count()).toBe(0)
          await page.getByLabel("Topic").selectOption("tech")
          await page.getByLabel("I agree").check()
          await page.locator("service-form button[part=submit]").click()
          const [success] = await waitEvent(page, "service-form:success")
          expect(await page.locator("service-form [part=success]").textContent()).toBe("Thanks!")
          expect(await page.evaluate(() => document.querySelector("service-form")!.shadowRoot!.activeElement?.getAttribute("part"))).toBe("success")
          expect(await events(page, "service-form:error")).toEqual([])
          return success!.detail
        })
        expect(detail).toMatchObject({
          data: { object: "form_submission", form_id: formId, ticket: { public_id: expect.stringMatching(/^tck_/) } },
          meta: { request_id: expect.stringMatching(/^req_/) }
        })
        const ticket = yield* h.call("GET", `/v1/tickets/${detail.data.ticket.public_id}`, { key: ws.secretTest })
        expect(ticket.body.data).toMatchObject({
          origin: "form",
          visitor_name: "Ana Pérez",
          visitor_email: "ana@example.com",
          subject: "Order 42"
        })
        const first = ticket.body.data.thread.find((t: any) => t.object === "ticket_message")
        expect(first.body).toBe("Where is my order?\n\nTopic: tech\nI agree: yes\nPage: /pricing")
      })
    )

    it.effect("a bot that fills the decoy is answered 204: no ticket, and the page looks like a success", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { formId } = yield* setup(h, ws)
        const { page } = yield* open(h, {
          "api-key": ws.formsTest,
          "form-id": formId,
          locale: "en",
          "prefill-name": "Spam Bot",
          "prefill-email": "bot@example.com",
          prefill: JSON.stringify({ body: "Buy cheap things now" })
        })
        yield* Effect.promise(async () => {
          await page.getByLabel("Topic").selectOption("tech")
          await page.getByLabel("I agree").check()
          // what a form-filling bot does: every input gets a value, the hidden decoy too
          await page.evaluate(() => {
            const decoy = document.querySelector("service-form")!.shadowRoot!.querySelector<HTMLInputElement>("input[name=_hp]")!
            decoy.value = "http://spam.example"
          })
          await page.locator("service-form button[part=submit]").click()
          await waitEvent(page, "service-form:success")
        })
        const tickets = yield* h.call("GET", "/v1/tickets", { key: ws.secretTest })
        expect(tickets.body.data).toEqual([])
      })
    )

    it.effect("field errors show next to their fields, are announced, and focus goes to the first; server errors too", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { formId, body } = yield* setup(h, ws)
        const { page } = yield* open(h, { "api-key": ws.formsTest, "form-id": formId, locale: "en" })
        const submits: Array<string> = []
        page.on("request", (r) => r.method() === "POST" && submits.push(r.url()))
        const shadowFocus = () => page.evaluate(() => document.querySelector("service-form")!.shadowRoot!.activeElement?.id)

        yield* Effect.promise(async () => {
          await page.getByLabel("E-mail", { exact: true }).fill("not-an-email")
          await page.getByLabel("Order number").fill("12")
          await page.locator("service-form button[part=submit]").click()
          const nameError = page.locator("service-form #sf-name-error")
          expect(await nameError.textContent()).toBe("This field is required")
          const name = page.getByLabel("Name", { exact: true })
          expect(await name.getAttribute("aria-invalid")).toBe("true")
          expect((await name.getAttribute("aria-describedby"))!.split(" ")).toContain("sf-name-error")
          expect(await page.locator("service-form #sf-email-error").textContent()).toBe("Enter a valid e-mail address")
          expect(await page.locator("service-form #sf-body-error").textContent()).toBe("This field is required")
          expect(await page.locator("service-form #sf-order-error").textContent()).toBe("The format is not valid")
          expect(await page.locator("service-form #sf-consent-error").textContent()).toBe("Check this box to continue")
          expect(await page.locator("service-form #sf-subject-error").textContent()).toBe("")
          expect(await page.locator("service-form [role=alert]").textContent()).toBe("Please check the 5 marked fields")
          expect(await shadowFocus()).toBe("sf-name")
          expect(submits).toEqual([])

          // typing in a field clears its error
          await name.fill("Ana")
          expect(await name.getAttribute("aria-invalid")).toBeNull()
          expect(await nameError.textContent()).toBe("")
        })

        // the form changes after the page loaded it: the server's refusal is shown the same way
        const stricter = body.fields.map((f) => (f.id === "body" ? { ...f, min_length: 50 } : f))
        const patched = yield* h.call("PATCH", `/v1/forms/${formId}`, { key: ws.secretTest, body: { fields: stricter } })
        expect(patched.status, patched.text).toBe(200)
        yield* Effect.promise(async () => {
          await page.getByLabel("E-mail", { exact: true }).fill("ana@example.com")
          await page.getByLabel("Order number").fill("ORD-1234")
          await page.getByLabel("Message", { exact: true }).fill("Too short here")
          await page.getByLabel("I agree").check()
          await page.locator("service-form button[part=submit]").click()
          const [failure] = await waitEvent(page, "service-form:error")
          expect(failure!.detail).toEqual({ formId, phase: "submit", message: expect.stringContaining("field_errors") })
          expect(await page.locator("service-form #sf-body-error").textContent()).toBe("At least 50 characters")
          expect(await page.getByLabel("Message", { exact: true }).getAttribute("aria-invalid")).toBe("true")
          expect(await page.locator("service-form [role=alert]").textContent()).toBe("Please check the marked field")
          expect(await shadowFocus()).toBe("sf-body")
          // the button is usable again for the next try
          expect(await page.locator("service-form button[part=submit]").isEnabled()).toBe(true)
          expect(await page.locator("service-form button[part=submit]").textContent()).toBe("Send")
          expect(submits).toHaveLength(1)
        })
      })
    )

    it.effect('locale="es": every text of the component is Spanish, its field errors and their summary too, the server\'s as well', () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { formId, body } = yield* setup(h, ws)
        const { page } = yield* open(h, { "api-key": ws.formsTest, "form-id": formId, locale: "es" }, { locale: "en-US" })
        const es = textsFor("es")
        const seen: Array<string> = []
        yield* Effect.promise(async () => {
          seen.push(...(await shadowTexts(page, "service-form")))
          await page.locator("service-form input[type=email]").first().fill("no-es-un-correo")
          await page.locator("service-form button[part=submit]").click()
          expect(await page.locator("service-form #sf-name-error").textContent()).toBe(es.required)
          expect(await page.locator("service-form #sf-email-error").textContent()).toBe(es.email)
          seen.push(...(await shadowTexts(page, "service-form")))
        })
        // the form changed after the page loaded it: the server's refusal, in the component's locale
        const stricter = body.fields.map((f) => (f.id === "body" ? { ...f, min_length: 50 } : f))
        const patched = yield* h.call("PATCH", `/v1/forms/${formId}`, { key: ws.secretTest, body: { fields: stricter } })
        expect(patched.status, patched.text).toBe(200)
        yield* Effect.promise(async () => {
          await page.getByLabel("Nombre", { exact: true }).fill("Ana")
          await page.getByLabel("Correo", { exact: true }).fill("ana@example.com")
          await page.getByLabel("Order number").fill("ORD-1234")
          await page.getByLabel("Mensaje", { exact: true }).fill("Demasiado corto")
          await page.getByLabel("I agree").check()
          await page.locator("service-form button[part=submit]").click()
          await waitEvent(page, "service-form:error")
          expect(await page.locator("service-form #sf-body-error").textContent()).toBe("Al menos 50 caracteres")
        })
        expect(englishAmong(seen, englishOnlyTexts(catalogues, "form."))).toEqual([])
        expect(seen).toContain(es.required)
        expect(seen.some((text) => text.startsWith("Revisa los"))).toBe(true)
      })
    )

    it.effect("a 429 on submit tells how many minutes to wait, from Retry-After", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        // one submission per address a quarter of an hour; this test and the page share 127.0.0.1
        const { formId } = yield* setup(h, ws, { rate_limit: { max: 1, window_seconds: 900 } })
        const first = yield* h.call("POST", `/api/forms/${formId}/submit`, {
          headers: { "service-api-key": ws.formsTest },
          body: { fields: { name: "Bo", email: "bo@example.com", body: "The first one, sent from here.", consent: true } }
        })
        expect(first.status, first.text).toBe(201)
        const { page } = yield* open(h, { "api-key": ws.formsTest, "form-id": formId, locale: "en" })
        yield* Effect.promise(async () => {
          await page.getByLabel("Name", { exact: true }).fill("Ana")
          await page.getByLabel("E-mail", { exact: true }).fill("ana@example.com")
          await page.getByLabel("Order number").fill("ORD-1234")
          await page.getByLabel("Message", { exact: true }).fill("My parcel has not arrived yet.")
          await page.getByLabel("I agree").check()
          await page.locator("service-form button[part=submit]").click()
          const [failure] = await waitEvent(page, "service-form:error")
          expect(failure!.detail).toMatchObject({ formId, phase: "submit" })
          expect(await page.locator("service-form [role=alert]").textContent()).toMatch(/^Too many submissions\. Try again in 1[45] min\.$/)
          expect(await page.locator("service-form button[part=submit]").isEnabled()).toBe(true)
        })
      })
    )

    it.effect("a failing config raises service-form:error with phase config and shows why", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { page } = yield* open(
          h,
          { "api-key": ws.formsTest, "form-id": "frm_doesnotexist00" },
          { lang: "es", waitFor: "error" }
        )
        const [failure] = yield* Effect.promise(() => events(page, "service-form:error"))
        expect(failure!.detail).toMatchObject({ formId: "frm_doesnotexist00", phase: "config" })
        // an unknown form's 404 carries no CORS headers, so the page cannot read it: the message says what it may be
        expect(failure!.detail.message).toMatch(/could not be fetched/)
        expect(yield* Effect.promise(() => page.locator("service-form [part=error]").textContent())).toBe(
          "No se pudo cargar el formulario."
        )
        expect(yield* Effect.promise(() => events(page, "service-form:ready"))).toEqual([])

        // a page on an origin the form does not allow cannot read the config either
        const { formId: elsewhere } = yield* setup(h, ws, { allowed_origins: ["https://shop.example.com"] })
        const { page: foreign } = yield* open(h, { "api-key": ws.formsTest, "form-id": elsewhere }, { waitFor: "error" })
        const [refused] = yield* Effect.promise(() => events(foreign, "service-form:error"))
        expect(refused!.detail).toMatchObject({ formId: elsewhere, phase: "config", message: expect.stringContaining("origin") })

        const { page: keyless } = yield* open(h, { "form-id": "frm_doesnotexist00" }, { waitFor: "error" })
        const [missing] = yield* Effect.promise(() => events(keyless, "service-form:error"))
        expect(missing!.detail).toMatchObject({ phase: "config", message: expect.stringContaining("api-key") })
      })
    )

    it.effect("the dashboard theme applies; page CSS and ::part() win over it; width and bare", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { formId } = yield* setup(h, ws)
        const base = { "api-key": ws.formsTest, "form-id": formId, locale: "en" }
        const style = (page: Page, selector: string, property: string, pseudo?: string) =>
          page
            .locator(`service-form ${selector}`)
            .first()
            .evaluate((e, [p, pseudo]) => getComputedStyle(e, pseudo).getPropertyValue(p!), [property, pseudo])

        const themed = yield* open(h, base)
        yield* Effect.promise(async () => {
          expect(await style(themed.page, "label.required", "color", "::after")).toBe("rgb(0, 85, 255)")
          expect(await style(themed.page, "button[part=submit]", "background-color")).toBe("rgb(0, 85, 255)")
          expect(await themed.page.locator("service-form").evaluate((e) => e.getBoundingClientRect().width)).toBe(480)
          expect(await style(themed.page, "form", "border-top-width")).toBe("1px")
          expect(await style(themed.page, "form", "box-shadow")).not.toBe("none")
        })

        const restyled = yield* open(h, { ...base, width: "320" }, {
          css: "service-form{--service-accent:rgb(255, 0, 0);--service-radius:0px}service-form::part(submit){background:rgb(0, 128, 0);color:rgb(255, 255, 0)}"
        })
        yield* Effect.promise(async () => {
          expect(await style(restyled.page, "label.required", "color", "::after")).toBe("rgb(255, 0, 0)")
          expect(await style(restyled.page, "button[part=submit]", "background-color")).toBe("rgb(0, 128, 0)")
          expect(await style(restyled.page, "button[part=submit]", "color")).toBe("rgb(255, 255, 0)")
          expect(await style(restyled.page, "form", "border-top-left-radius")).toBe("0px")
          expect(await restyled.page.locator("service-form").evaluate((e) => e.getBoundingClientRect().width)).toBe(320)
        })

        const bare = yield* open(h, { ...base, appearance: "bare", width: "fluid" })
        yield* Effect.promise(async () => {
          expect(await style(bare.page, "form", "border-top-width")).toBe("0px")
          expect(await style(bare.page, "form", "box-shadow")).toBe("none")
          expect(await style(bare.page, "form", "background-color")).toBe("rgba(0, 0, 0, 0)")
          expect(await style(bare.page, "form", "padding-top")).toBe("0px")
          const [host, body] = await bare.page.evaluate(() => [
            document.querySelector("service-form")!.getBoundingClientRect().width,
            document.body.getBoundingClientRect().width
          ])
          expect(host).toBe(body)
        })
      })
    )

    it.effect("window.Service.form: getConfig and submit return the parsed bodies", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { formId } = yield* setup(h, ws)
        const { page } = yield* open(h, { "api-key": ws.formsTest, "form-id": formId })
        const result = yield* Effect.promise(() =>
          page.evaluate(
            async ({ apiKey, formId }) => {
              const helpers = (window as any).Service.form
              const config = await helpers.getConfig({ apiKey, formId })
              const sent = await helpers.submit({
                apiKey,
                formId,
                fields: { name: "Bo", email: "bo@example.com", body: "Hello there", consent: true }
              })
              const refused = await helpers.submit({ apiKey, formId, fields: { name: "Bo" } }).catch((e: any) => ({
                name: e.name,
                status: e.status,
                fields: e.body.error.field_errors.map((f: any) => f.field)
              }))
              return { title: config.data.title, sent, refused }
            },
            { apiKey: ws.formsTest, formId }
          )
        )
        expect(result.title).toEqual({ en: "Contact us", es: "Contáctanos" })
        expect(result.sent.data.ticket.public_id).toMatch(/^tck_/)
        expect(result.refused).toEqual({ name: "ServiceFormError", status: 400, fields: ["email", "body", "consent"] })
      })
    )

    it.effect("the config is cached in session storage and revalidated with its ETag on the next view", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { formId } = yield* setup(h, ws)
        const { page } = yield* open(h, { "api-key": ws.formsTest, "form-id": formId, locale: "en" })
        const conditional: Array<string | undefined> = []
        yield* Effect.promise(async () => {
          expect(await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith("service-form:")).length)).toBe(1)
          page.on("request", (r) => {
            if (r.url().endsWith("/config") && r.method() === "GET") conditional.push(r.headers()["if-none-match"])
          })
          await page.reload()
          await page.waitForFunction(() => window.events.some((e) => e.type === "service-form:ready"))
          await page.waitForLoadState("networkidle")
          expect(await page.getByLabel("Name", { exact: true }).isVisible()).toBe(true)
        })
        expect(conditional).toHaveLength(1)
        expect(conditional[0]).toMatch(/^"/)
      })
    )

    it.effect("the demo page shows a sandbox form working in one click", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const { formId } = yield* setup(h, ws, { allowed_origins: [] })
        const log = yield* Effect.promise(async () => {
          const context = await browser.newContext({ locale: "en-US" })
          contexts.push(context)
          const page = await context.newPage()
          page.setDefaultTimeout(15_000)
          await page.goto(`${h.url}/demo/forms/${formId}?key=${ws.formsTest}`)
          await page.getByLabel("Name", { exact: true }).fill("Demo person")
          await page.getByLabel("E-mail", { exact: true }).fill("demo@example.com")
          await page.getByLabel("Message", { exact: true }).fill("Trying the demo")
          await page.getByLabel("I agree").check()
          await page.locator("service-form button[part=submit]").click()
          await page.locator("service-form [part=success]").waitFor()
          return page.locator("#log").textContent()
        })
        expect(log).toContain("service-form:ready")
        expect(log).toMatch(/service-form:success .*"public_id":"tck_/)
      })
    )
  })
})
