/**
 * The texts the service writes itself, in the visitor's language, through the real server with the `local`
 * model: a Spanish agent declines off-topic Spanish questions with the Spanish fallback (the API's and the
 * widget's, streamed or whole), an English question gets the English one, and a message too short to tell takes
 * the widget's `locale`.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { catalogues } from "../../schema/texts/Catalogue.js"
import { chooseTextLanguage } from "../../src/languages/TextLanguage.js"
import { draftLanguage } from "../../src/languages/DocumentLanguage.js"
import { addQa, sse, text } from "../conversations/support.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"

const shop = "https://tienda.example.com"

const spanishAgent = (h: HarnessShape, key: string) =>
  Effect.gen(function* () {
    const created = yield* h.call("POST", "/v1/agents", {
      key,
      body: { type: "support", name: "Asistente de la tienda", allowed_origins: [shop] }
    })
    expect(created.status, created.text).toBe(201)
    const agentId = created.body.data.id as string
    yield* addQa(h, key, agentId, "¿Cuánto tarda el envío?", "Los pedidos llegan en cinco días laborables a toda España.")
    yield* addQa(h, key, agentId, "¿Puedo devolver un artículo?", "Puedes devolver cualquier artículo en un plazo de 30 días.")
    return agentId
  })

const spanishFallback = catalogues.es["answer.fallback"]
const englishFallback = catalogues.en["answer.fallback"]
const spanishEscalation = catalogues.es["answer.escalation"]

describe("the text language chosen", () => {
  it("is the question's when it can be told, then the widget's locale, then the agent's, then English", () => {
    expect(chooseTextLanguage({ question: "¿Cuál es la capital de Francia?", locale: "en", agentLanguage: "auto" })).toBe("es")
    expect(chooseTextLanguage({ question: "What is the capital of France?", locale: "es", agentLanguage: "es" })).toBe("en")
    expect(chooseTextLanguage({ question: "ok", locale: "es-MX", agentLanguage: "auto" })).toBe("es")
    expect(chooseTextLanguage({ question: "ok", agentLanguage: "es" })).toBe("es")
    expect(chooseTextLanguage({ question: "ok", locale: "fr", agentLanguage: "de" })).toBe("en")
    // a language the catalogue lacks is told, and falls through to the next
    expect(chooseTextLanguage({ question: "Quelle est la capitale de la France ?", locale: "es", agentLanguage: "auto" })).toBe("es")
  })

  it("for drafts is the document's, unless the agent has one", () => {
    const doc = { title: "Envíos", text: "Los pedidos llegan en cinco días laborables. Las devoluciones son gratuitas durante 30 días." }
    expect(draftLanguage(doc, "auto")).toBe("es")
    expect(draftLanguage(doc, "pt")).toBe("pt")
  })
})

layer(testServer())("fallback in the visitor's language", (it) => {
  it.effect("a Spanish agent declines off-topic Spanish questions in Spanish, an English one in English", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* spanishAgent(h, ws.secretTest)
      const ask = (message: string) =>
        Effect.map(
          h.call("POST", `/v1/agents/${agentId}/messages`, { key: ws.secretTest, body: { message, stream: false } }),
          (r) => {
            expect(r.status, r.text).toBe(201)
            return r.body.data as { content: string; outcome: string; sources: ReadonlyArray<unknown> }
          }
        )
      // on topic: answered from the knowledge
      expect((yield* ask("¿Cuánto tarda el envío?")).outcome).toBe("answered")
      for (const question of ["¿Cuál es la capital de Francia?", "¿Me recomiendas una película para esta noche?", "¿Quién ganó el mundial de fútbol?"]) {
        const reply = yield* ask(question)
        expect(reply.outcome, question).toBe("fallback")
        expect(reply.content, question).toBe(spanishFallback)
        expect(reply.sources).toEqual([])
      }
      const english = yield* ask("What is the capital of France?")
      expect(english.outcome).toBe("fallback")
      expect(english.content).toBe(englishFallback)

      // streamed, the tokens make the same Spanish text
      const streamed = yield* sse(h, `/v1/agents/${agentId}/messages`, { key: ws.secretTest, body: { message: "¿Cuál es la capital de Italia?" } })
      expect(streamed.status).toBe(200)
      expect(text(streamed.events)).toBe(spanishFallback)
      // the escalation offered with it is Spanish too; an English question's English
      expect(streamed.events.filter((e) => e.data.type === "escalation").map((e) => e.data.message)).toEqual([spanishEscalation])
      const englishStream = yield* sse(h, `/v1/agents/${agentId}/messages`, { key: ws.secretTest, body: { message: "What is the capital of Italy?" } })
      expect(englishStream.events.filter((e) => e.data.type === "escalation").map((e) => e.data.message)).toEqual([
        catalogues.en["answer.escalation"]
      ])
    })
  )

  it.effect("the API's `locale` chooses for a question too short to tell, as the widget's does", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const created = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "Shop" } })
      const agentId = created.body.data.id as string
      const ask = (body: Record<string, unknown>) =>
        Effect.map(h.call("POST", `/v1/agents/${agentId}/messages`, { key: ws.secretTest, body: { stream: false, ...body } }), (r) => {
          expect(r.status, r.text).toBe(201)
          return r.body.data as { content: string; outcome: string }
        })
      const spanish = yield* ask({ message: "ok", locale: "es" })
      expect(spanish.outcome).toBe("fallback")
      expect(spanish.content).toBe(spanishFallback)
      expect((yield* ask({ message: "ok", locale: "en-GB" })).content).toBe(englishFallback)
      expect((yield* ask({ message: "ok" })).content).toBe(englishFallback)
      const streamed = yield* sse(h, `/v1/agents/${agentId}/messages`, { key: ws.secretTest, body: { message: "ok", locale: "es-MX" } })
      expect(text(streamed.events)).toBe(spanishFallback)
      expect(streamed.events.filter((e) => e.data.type === "escalation").map((e) => e.data.message)).toEqual([spanishEscalation])
      const bad = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
        key: ws.secretTest,
        body: { message: "ok", stream: false, locale: "<script>" }
      })
      expect(bad.status).toBe(400)
      expect(bad.body.error.param).toBe("locale")
    })
  )

  it.effect("in the widget, a message too short to tell takes the widget's locale; a Spanish one is Spanish at any locale", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* spanishAgent(h, ws.secretTest)
      const base = `/widget/v1/agents/${agentId}/conversations`
      const opened = yield* h.call("POST", base, { key: ws.widgetTest, headers: { origin: shop }, body: {} })
      expect(opened.status, opened.text).toBe(201)
      const conversationId = opened.body.data.id as string
      const send = (body: Record<string, unknown>) =>
        Effect.map(
          h.call("POST", `${base}/${conversationId}/messages`, { key: ws.widgetTest, headers: { origin: shop }, body: { stream: false, ...body } }),
          (r) => {
            expect(r.status, r.text).toBe(201)
            return r.body.data as { content: string; outcome: string }
          }
        )
      expect((yield* send({ message: "ok", locale: "es" })).content).toBe(spanishFallback)
      expect((yield* send({ message: "ok", locale: "en" })).content).toBe(englishFallback)
      expect((yield* send({ message: "¿Cuál es la capital de Francia?", locale: "en" })).content).toBe(spanishFallback)
      // a locale that is no language tag is refused, as any bad field
      const bad = yield* h.call("POST", `${base}/${conversationId}/messages`, {
        key: ws.widgetTest,
        headers: { origin: shop },
        body: { message: "hola", stream: false, locale: "<script>" }
      })
      expect(bad.status).toBe(400)
    })
  )

  it.effect("a Spanish visitor's escalation makes a ticket whose default subject and transcript are Spanish", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* spanishAgent(h, ws.secretTest)
      const base = `/widget/v1/agents/${agentId}/conversations`
      const widget = { key: ws.widgetTest, headers: { origin: shop } }
      const escalated = (metadata: Record<string, unknown>, message: string | undefined) =>
        Effect.gen(function* () {
          const opened = yield* h.call("POST", base, { ...widget, body: { metadata } })
          const conversationId = opened.body.data.id as string
          if (message !== undefined) {
            const sent = yield* h.call("POST", `${base}/${conversationId}/messages`, { ...widget, body: { message, stream: false } })
            expect(sent.status, sent.text).toBe(201)
          }
          const reply = yield* h.call("POST", `${base}/${conversationId}/escalate`, { ...widget, body: { visitor_email: "ana@example.com" } })
          expect(reply.status, reply.text).toBe(201)
          const ticket = yield* h.call("GET", `/v1/tickets/${reply.body.data.ticket.public_id}`, { key: ws.secretTest })
          const first = ticket.body.data.thread.find((t: any) => t.object === "ticket_message")
          return { subject: ticket.body.data.subject as string, transcript: first?.body as string | undefined }
        })
      const spanish = yield* escalated({ locale: "en" }, "¿Cuál es la capital de Francia?")
      expect(spanish.subject).toBe("¿Cuál es la capital de Francia?")
      expect(spanish.transcript).toBe(`Visitante: ¿Cuál es la capital de Francia?\nAsistente: ${spanishFallback}`)
      // nothing said: the widget's locale names the subject's language
      expect((yield* escalated({ locale: "es" }, undefined)).subject).toBe(catalogues.es["handoff.ticketSubject"])
      expect((yield* escalated({ locale: "en" }, undefined)).subject).toBe(catalogues.en["handoff.ticketSubject"])
    })
  )
})
