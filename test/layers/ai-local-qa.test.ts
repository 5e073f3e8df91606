import { describe, expect, it } from "vitest"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import * as Extract from "../../layers/ai/Extract.js"
import { question } from "../../layers/ai/Question.js"

// every word written in lower case somewhere, so a capital is the sentence's
const common = () => true

const english: ReadonlyArray<readonly [sentence: string, asked: string | null]> = [
  ["Express delivery takes one business day inside the country.", "How long does express delivery take?"],
  ["Refunds take up to 5 business days.", "How long do refunds take?"],
  ["The warranty lasts two years.", "How long does the warranty last?"],
  ["The gift card costs 25 euros.", "How much does the gift card cost?"],
  ["Premium plans cost 20 dollars a month.", "How much do premium plans cost?"],
  ["Two-factor authentication is an extra step that protects your account.", "What is two-factor authentication?"],
  ["A webhook is an HTTP callback sent when something happens.", "What is a webhook?"],
  ["Webhooks are HTTP callbacks sent when something happens.", null],
  ["You can return any item within 30 days of delivery.", "Can I return any item within 30 days of delivery?"],
  ["Customers can change your delivery address.", "Can I change my delivery address?"],
  ["You can also contact us by phone.", "Can I contact you by phone?"],
  ["Our store opens at 9 am on weekdays.", "When does your store open?"],
  ["The museum is open every day from 10 to 18.", "When is the museum open?"],
  ["The head office is located in Madrid.", "Where is the head office?"],
  ["Invoices are sent by e-mail after each purchase.", "How are invoices sent?"],
  ["The summer sale starts on 1 July.", "When does the summer sale start?"],
  ["The starter kit includes a charger and two cables.", "What does the starter kit include?"],
  ["Shipping is free for orders over 50 euros.", "Is shipping free?"],
  ["The extension is disabled by default on the server.", "Is the extension disabled by default?"],
  // pronoun subjects lose their referent
  ["It takes 3 days.", null],
  ["This costs 10 euros.", null],
  ["They are a family business.", null],
  ["The first argument is a list of nodes.", null],
  // no shape to transform
  ["We ship to 40 countries.", null],
  ["Reset your password from Settings.", null],
  ["Orders placed before 2 pm leave the warehouse the same day.", null],
  ["Express delivery takes priority over standard parcels.", null],
  ["The team costs nothing but time.", null],
  // over-long subject, not a whole sentence, a question already, a rest that points elsewhere
  ["The new and improved annual premium subscription plan for teams costs 99 euros.", null],
  ["express delivery takes one day", null],
  ["Does delivery take long?", null],
  ["You can call any command on it.", null],
  ["You can pay by card, cash or voucher if the store allows it.", null]
]

const spanish: ReadonlyArray<readonly [sentence: string, asked: string | null]> = [
  ["El envío estándar tarda 3 días laborables.", "¿Cuánto tarda el envío estándar?"],
  ["Las devoluciones tardan una semana.", "¿Cuánto tardan las devoluciones?"],
  ["La tarjeta regalo cuesta 25 euros.", "¿Cuánto cuesta la tarjeta regalo?"],
  ["Puedes devolver el pedido durante 30 días.", "¿Puedo devolver el pedido durante 30 días?"],
  ["Los clientes pueden cambiar tu dirección de entrega.", "¿Puedo cambiar mi dirección de entrega?"],
  ["Un bono es una tarjeta regalo canjeable en tienda.", "¿Qué es un bono?"],
  ["Nuestra tienda abre a las 9 de lunes a viernes.", "¿Cuándo abre vuestra tienda?"],
  ["La oficina está en Madrid.", "¿Dónde está la oficina?"],
  ["La factura se envía por correo electrónico.", "¿Cómo se envía la factura?"],
  ["El curso empieza el 3 de marzo.", "¿Cuándo empieza el curso?"],
  ["El pack incluye un cargador y dos cables.", "¿Qué incluye el pack?"],
  ["Esto tarda 3 días.", null],
  ["Enviamos a toda España en 48 horas.", null],
  ["Puedes pagarlo aquí.", null],
  ["La tienda es muy bonita.", null]
]

describe("the local provider's question from a sentence", () => {
  it.each(english)("English: %s", (sentence, asked) => expect(question(sentence, false, common)).toBe(asked))
  it.each(spanish)("Spanish: %s", (sentence, asked) => expect(question(sentence, true, common)).toBe(asked))

  it("keeps a name's capital and drops a sentence's", () => {
    expect(question("Stripe is a payment processor.", false, () => false)).toBe("What is Stripe?")
    expect(question("Refunds take 5 days.", false, () => true)).toBe("How long do refunds take?")
    expect(question("PayPal costs nothing to set up for 30 days.", false, () => true)).toBe("How much does PayPal cost?")
  })
})

describe("the local provider's Q&A drafts", () => {
  it("a paragraph with no sentence to ask about gives no item; the answer is the whole sentence, and the next when it goes on", () => {
    const doc = {
      title: "Help",
      text: "We love our customers. Thanks for reading.\n\nReset your password from Settings.\n\nWe ship worldwide. Refunds take 5 business days. They reach the card used to pay.\n\nVisit the store."
    }
    expect(Extract.qa(doc, [])).toEqual([
      { question: "How long do refunds take?", answer: "Refunds take 5 business days. They reach the card used to pay.", category: null }
    ])
  })

  it("a sentence's capital is dropped from a common word, kept on a name the document capitalises mid-sentence", () => {
    const asked = (text: string) => Extract.qa({ title: "Help", text }, []).map((q) => q.question)
    expect(asked("Stripe is a payment processor. We pay with Stripe.")).toEqual(["What is Stripe?"])
    expect(asked("Refunds take 5 days.")).toEqual(["How long do refunds take?"])
  })

  it("a sentence is not cut at an abbreviation or a wrapped line", () => {
    const doc = {
      title: "Help",
      text: "Note: nothing here.\n\nThe starter kit includes a charger, cables etc. and a\nprinted manual."
    }
    expect(Extract.qa(doc, []).map((q) => [q.question, q.answer])).toEqual([
      ["What does the starter kit include?", "The starter kit includes a charger, cables etc. and a printed manual."]
    ])
  })

  // real prose, read from packages as installed: every question asked of a sentence is a whole question
  const installed = (name: string) => {
    const require = createRequire(import.meta.url)
    return readFileSync(join(dirname(require.resolve(`${name}/package.json`)), "README.md"), "utf8")
  }
  const documents = ["ws", "@effect/platform", "ioredis", "fast-check", "debug", "semver"]

  it.each(documents)("over the README of %s: questions a visitor would ask, answered by whole sentences", (name) => {
    const text = installed(name)
    const doc = { title: name, text }
    const drafted = Extract.qa(doc, Extract.categories(doc))
    const prose = text.replace(/[*_`]+/g, "").replace(/\s+/g, " ")
    const faq = new Set(Extract.parse(doc).faq.map((f) => f.question))
    for (const item of drafted) {
      expect(item.question).toMatch(/\?$/)
      expect(item.question).not.toMatch(/tell me about|puedes decir sobre|…/)
      if (faq.has(item.question) || /^(?:What should I know about|¿Qué debo saber sobre) /.test(item.question)) continue
      expect(item.question).toMatch(/^(?:What|How|When|Where|Can|Is|Are|¿)/)
      // the answer is one or two whole sentences of the passage, as written
      expect(item.answer).toMatch(/^\p{Lu}.*[.!]$/su)
      expect(prose).toContain(item.answer)
    }
    // a code line ending in "?" is no question
    for (const item of drafted) expect(item.question).not.toMatch(/::=|[=|{}<>;]/)
  })
})
