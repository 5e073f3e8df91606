import { describe, expect, it } from "@effect/vitest"
import * as EmbeddingModel from "@effect/ai/EmbeddingModel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Ai from "../../layers/Ai.js"
import { chunk } from "../../src/knowledge/Chunk.js"
import { cosine, hashEmbed, stem, stopWords, words } from "../../layers/ai/Text.js"

const handbook = {
  title: "Acme Help Center",
  text: `# Acme Help Center

Everything about using the Acme store.

## Shipping

We ship to 40 countries. Orders placed before 2 pm leave the warehouse the same day.

Express delivery takes one business day inside the country and costs 9 euros.

## Returns and refunds

You can return any item within 30 days of delivery. Refunds reach your card within 5 business days.

## Account and security

Reset your password from Settings > Security. Two-factor authentication protects your account.

## Payments

We accept Visa, Mastercard and PayPal. Invoices are sent by e-mail after each purchase.
`
}

const faq = {
  title: "FAQ",
  text: `Frequently asked questions

Q: Do you offer gift cards?
A: Yes, gift cards from 10 to 200 euros are sold in every store.

Can I change the delivery address after ordering?
Yes, as long as the parcel has not left the warehouse: write to support with the order number.

Where are your stores?
We have stores in Madrid, Lisbon and Paris.
`
}

describe("local Ai provider", () => {
  it.effect("is deterministic", () =>
    Effect.gen(function* () {
      const ai = yield* Ai.Ai
      const first = [yield* ai.categorize(handbook), yield* ai.generateQa(handbook, yield* ai.categorize(handbook))]
      const second = [yield* ai.categorize(handbook), yield* ai.generateQa(handbook, yield* ai.categorize(handbook))]
      expect(second).toEqual(first)
      const [a, b] = [yield* ai.embed(["Where is my parcel?"]), yield* ai.embed(["Where is my parcel?"])]
      expect(b).toEqual(a)
    }).pipe(Effect.provide(Ai.layerLocal)))

  it.effect("categories come from the headings, 3..8 of them, each with a description", () =>
    Effect.gen(function* () {
      const ai = yield* Ai.Ai
      const categories = yield* ai.categorize(handbook)
      expect(categories.map((c) => c.name)).toEqual(["Shipping", "Returns and refunds", "Account and security", "Payments"])
      expect(categories[0]!.description).toBe("We ship to 40 countries.")
    }).pipe(Effect.provide(Ai.layerLocal)))

  it.effect("a text without headings gets 3 categories from its top terms; an empty one still gets 3", () =>
    Effect.gen(function* () {
      const ai = yield* Ai.Ai
      const plain = yield* ai.categorize({
        title: "Notes",
        text: "Coffee beans are roasted daily. The coffee is ground fresh. Our tea comes from Assam; tea bags are compostable. Pastries are baked daily with butter; pastries sell out early."
      })
      expect(plain.map((c) => c.name)).toEqual(["Coffee", "Tea", "Pastries"])
      expect(plain[0]!.description).toBe("Coffee beans are roasted daily.")
      const empty = yield* ai.categorize({ title: "Empty", text: "" })
      expect(empty.length).toBe(3)
      const many = yield* ai.categorize({
        title: "Big",
        text: Array.from({ length: 12 }, (_, i) => `## Topic ${i}\n\nText of topic ${i}.`).join("\n\n")
      })
      expect(many.length).toBe(8)
    }).pipe(Effect.provide(Ai.layerLocal)))

  it.effect("Q&A from sections and paragraphs, placed in the category of their heading", () =>
    Effect.gen(function* () {
      const ai = yield* Ai.Ai
      const categories = yield* ai.categorize(handbook)
      const qa = yield* ai.generateQa(handbook, categories)
      const shipping = qa.find((q) => q.question === "What should I know about shipping?")
      expect(shipping?.category).toBe("Shipping")
      expect(shipping?.answer).toContain("We ship to 40 countries.")
      expect(shipping?.answer).toContain("Express delivery")
      // a paragraph's question is asked of a sentence that has its shape, answered by the whole sentence
      const express = qa.find((q) => q.question === "How long does express delivery take?")
      expect(express?.answer).toBe("Express delivery takes one business day inside the country and costs 9 euros.")
      expect(express?.category).toBe("Shipping")
      expect(qa.find((q) => q.answer.includes("Reset your password"))?.category).toBe("Account and security")
      for (const q of qa) expect(q.category === null || categories.some((c) => c.name === q.category)).toBe(true)
    }).pipe(Effect.provide(Ai.layerLocal)))

  it.effect("FAQ patterns: Q:/A: pairs and lines ending in ? followed by their answer", () =>
    Effect.gen(function* () {
      const ai = yield* Ai.Ai
      const given = [
        { name: "Gift cards", description: "Gift cards and vouchers" },
        { name: "Delivery", description: "Delivery address and parcels" },
        { name: "Stores", description: "Where our stores are" }
      ]
      const qa = yield* ai.generateQa(faq, given)
      expect(qa.slice(0, 3)).toEqual([
        { question: "Do you offer gift cards?", answer: "Yes, gift cards from 10 to 200 euros are sold in every store.", category: "Gift cards" },
        {
          question: "Can I change the delivery address after ordering?",
          answer: "Yes, as long as the parcel has not left the warehouse: write to support with the order number.",
          category: "Delivery"
        },
        { question: "Where are your stores?", answer: "We have stores in Madrid, Lisbon and Paris.", category: "Stores" }
      ])
      // a category that fits nothing leaves the Q&A unplaced
      const unplaced = yield* ai.generateQa(faq, [{ name: "Quantum physics", description: "Particles" }])
      expect(unplaced.every((q) => q.category === null)).toBe(true)
    }).pipe(Effect.provide(Ai.layerLocal)))

  it.effect("a Spanish document gets Spanish questions; accents do not split terms", () =>
    Effect.gen(function* () {
      const ai = yield* Ai.Ai
      const doc = {
        title: "Ayuda",
        text: "Envíos\n\nEnviamos a toda España en 48 horas.\n\nDevoluciones\n\nPuedes devolver el pedido durante 30 días.\n\nFacturación\n\nLa factura se envía por correo electrónico."
      }
      const categories = yield* ai.categorize(doc)
      expect(categories.map((c) => c.name)).toEqual(["Envíos", "Devoluciones", "Facturación"])
      const qa = yield* ai.generateQa(doc, [{ name: "Envios y entregas", description: "" }, { name: "Facturacion", description: "" }])
      expect(qa.map((q) => [q.question, q.category])).toEqual([
        ["¿Qué debo saber sobre envíos?", "Envios y entregas"],
        ["¿Qué debo saber sobre devoluciones?", null],
        ["¿Qué debo saber sobre facturación?", "Facturacion"]
      ])
    }).pipe(Effect.provide(Ai.layerLocal)))

  it.effect("embeddings are unit vectors of the declared length, for any text", () =>
    Effect.gen(function* () {
      const ai = yield* Ai.Ai
      const vectors = yield* ai.embed(["Hello world", "", "¿Dónde está mi pedido?", "x".repeat(10_000)])
      expect(vectors.length).toBe(4)
      for (const v of vectors) {
        expect(v.length).toBe(ai.dimensions)
        expect(Math.abs(Math.sqrt(v.reduce((s, x) => s + x * x, 0)) - 1)).toBeLessThan(1e-9)
      }
    }).pipe(Effect.provide(Ai.layerLocal)))
})

describe("local Ai provider's reply", () => {
  const reply = (question: string, grounding: ReadonlyArray<Ai.Grounding>) =>
    Effect.flatMap(Ai.Ai, (ai) => Stream.runCollect(ai.answer({ instructions: null, question, history: [], grounding }))).pipe(
      Effect.map((pieces) => Chunk.join(pieces, ""))
    )

  /** A text source as ingestion stores it: its chunks (the title before the text) and its generated Q&A. */
  const ingested = (doc: { readonly title: string; readonly text: string }) =>
    Effect.gen(function* () {
      const ai = yield* Ai.Ai
      const qa = yield* ai.generateQa(doc, yield* ai.categorize(doc))
      return { qa, chunks: chunk(`${doc.title}\n\n${doc.text}`) }
    })

  it.effect("says each thing once: not the title glued to the text, not the chunk that repeats the Q&A", () =>
    Effect.gen(function* () {
      const doc = { title: "Passwords are reset", text: "Passwords are reset from the sign-in page with the Forgot password link." }
      const { chunks, qa } = yield* ingested(doc)
      expect(qa.length).toBe(1)
      expect(chunks).toEqual(["Passwords are reset\n\nPasswords are reset from the sign-in page with the Forgot password link."])
      const said = yield* reply("How do I reset my password?", [
        { kind: "qa", title: qa[0]!.question, text: qa[0]!.answer, score: 0.8 },
        { kind: "chunk", title: doc.title, text: chunks[0]!, score: 0.78 }
      ])
      expect(said).toBe("Passwords are reset from the sign-in page with the Forgot password link.")
      // the chunk alone: its text, without its title before it
      const alone = yield* reply("How do I reset my password?", [{ kind: "chunk", title: doc.title, text: chunks[0]!, score: 0.78 }])
      expect(alone).toBe("Passwords are reset from the sign-in page with the Forgot password link.")
    }).pipe(Effect.provide(Ai.layerLocal)))

  it.effect("two distinct passages are both said; of a passage, only the sentences not said yet", () =>
    Effect.gen(function* () {
      const refunds = "Refunds reach your card within 5 business days."
      const returns = "You can return any item within 30 days of delivery."
      const said = yield* reply("How do returns work?", [
        { kind: "qa", title: "How long do refunds take?", text: refunds, score: 0.7 },
        { kind: "chunk", title: "Returns and refunds", text: `Returns and refunds\n${returns} ${refunds}`, score: 0.69 }
      ])
      expect(said).toBe(`${refunds}\n\n${returns}`)
      // compared folded: case, accents, punctuation and spacing do not make a sentence new
      const again = yield* reply("How do refunds work?", [
        { kind: "qa", title: "Refunds?", text: "Refunds reach your card within 5 business days, on average.", score: 0.7 },
        { kind: "chunk", title: "Policy", text: `REFUNDS reach your card within   5 business days!\n${returns}`, score: 0.7 }
      ])
      expect(again).toBe(`Refunds reach your card within 5 business days, on average.\n\n${returns}`)
      // a later chunk of a titled source: its title and the section heading it repeats are not said, its lines are
      const hours = yield* reply("When do you open?", [
        { kind: "chunk", title: "Store guide", text: "Store guide\nOpening hours\nMonday to Friday 9 to 17\nSaturday 10 to 14", score: 0.5 }
      ])
      expect(hours).toBe("Monday to Friday 9 to 17\nSaturday 10 to 14")
    }).pipe(Effect.provide(Ai.layerLocal)))
})

// 20 Q&As, 12 English and 8 Spanish, and a question for each worded differently
const corpus: ReadonlyArray<readonly [question: string, answer: string, paraphrase: string]> = [
  ["How do I reset my password?", "Open Settings > Security and choose Reset password; we e-mail you a link.", "I forgot my password, how can I change it?"],
  ["How long does shipping take?", "Standard shipping takes 3 to 5 business days; express shipping arrives the next day.", "How many days until my shipping arrives?"],
  ["What is your refund policy?", "Refunds are issued within 30 days of purchase to the original payment method.", "Can I get my money back after buying?"],
  ["Which payment methods do you accept?", "We accept Visa, Mastercard, American Express and PayPal.", "Can I pay with a credit card or PayPal?"],
  ["How do I cancel my subscription?", "Go to Billing and click Cancel subscription; access continues until the period ends.", "I want to stop my subscription plan"],
  ["Do you ship internationally?", "Yes, we ship to more than 40 countries worldwide.", "Can you send orders abroad to other countries?"],
  ["How can I contact customer support?", "Write to support@example.com or use the chat, Monday to Friday from 9 to 18.", "What is the e-mail of your support team?"],
  ["Is my personal data secure?", "All data is encrypted at rest and in transit, and we never sell personal information.", "Do you protect the privacy of my information?"],
  ["Can I change my delivery address?", "You can edit the address until the parcel leaves the warehouse.", "I moved, how do I update the shipping address of my parcel?"],
  ["How do I enable two-factor authentication?", "In Security settings turn on two-factor authentication and scan the QR code.", "How to set up 2FA with an authenticator app?"],
  ["Where are your offices located?", "Our offices are in Madrid and Lisbon.", "In which city is your office?"],
  ["Do you offer discounts for students?", "Students get 20% off with a valid student card.", "Is there a student discount?"],
  ["¿Cómo restablezco mi contraseña?", "Abre Ajustes > Seguridad y pulsa Restablecer contraseña; te enviamos un enlace por correo.", "Olvidé la contraseña, ¿cómo la cambio?"],
  ["¿Cuánto tarda el envío?", "El envío estándar tarda de 3 a 5 días hábiles; el envío urgente llega al día siguiente.", "¿En cuántos días llega mi pedido enviado?"],
  ["¿Puedo devolver un producto?", "Aceptamos devoluciones durante 30 días desde la entrega, con el ticket de compra.", "Quiero hacer una devolución de lo que compré"],
  ["¿Qué métodos de pago aceptan?", "Aceptamos tarjeta Visa, Mastercard, Bizum y PayPal.", "¿Se puede pagar con tarjeta?"],
  ["¿Cómo cancelo mi suscripción?", "En Facturación pulsa Cancelar suscripción; el acceso sigue hasta el final del periodo.", "Deseo darme de baja de la suscripción mensual"],
  ["¿Hacen envíos internacionales?", "Sí, enviamos a más de 40 países de todo el mundo.", "¿Envían pedidos a otros países?"],
  ["¿Cuál es el horario de atención al cliente?", "Atendemos de lunes a viernes de 9 a 18 horas por chat y correo.", "¿A qué hora abre el servicio de atención?"],
  ["¿Tienen descuentos para estudiantes?", "Los estudiantes tienen un 20% de descuento con su carné.", "¿Hay algún descuento de estudiante?"]
]

describe("local embeddings", () => {
  it.effect("the same vectors through @effect/ai's EmbeddingModel", () =>
    Effect.gen(function* () {
      const model = yield* EmbeddingModel.EmbeddingModel
      const direct = yield* Effect.flatMap(Ai.Ai, (ai) => ai.embed(["Where is my parcel?", "¿Dónde está mi pedido?"])).pipe(
        Effect.provide(Ai.layerLocal)
      )
      expect(yield* model.embedMany(["Where is my parcel?", "¿Dónde está mi pedido?"])).toEqual(direct)
      expect(yield* model.embed("Where is my parcel?")).toEqual(direct[0])
    }).pipe(Effect.provide(Ai.layerLocalEmbeddingModel())))

  it.effect("a question worded differently ranks its Q&A in the top 3 of 20 (English and Spanish)", () =>
    Effect.gen(function* () {
      const ai = yield* Ai.Ai
      const documents = yield* ai.embed(corpus.map(([q, a]) => `${q}\n${a}`))
      const queries = yield* ai.embed(corpus.map(([, , p]) => p))
      const misses: Array<string> = []
      queries.forEach((query, i) => {
        const ranked = documents.map((d, j) => ({ j, score: cosine(query, d) })).sort((a, b) => b.score - a.score)
        const rank = ranked.findIndex((r) => r.j === i)
        if (rank >= 3) misses.push(`${corpus[i]![2]} → rank ${rank + 1}`)
      })
      expect(misses).toEqual([])
    }).pipe(Effect.provide(Ai.layerLocal)))
})

// The embedder and stemmer as they were before their caches, kept here unmemoised as the reference
const reference = (() => {
  const suffixes: ReadonlyArray<readonly [string, string]> = [
    ["aciones", "a"], ["iciones", "i"], ["ciones", "c"], ["ation", "at"], ["mente", ""], ["ments", ""], ["ment", ""],
    ["ings", ""], ["ing", ""], ["ies", "y"], ["cion", "c"], ["edad", ""], ["idad", ""], ["ando", ""], ["iendo", ""],
    ["ados", ""], ["adas", ""], ["ado", ""], ["ada", ""], ["ed", ""], ["es", ""], ["ly", ""], ["s", ""], ["ar", ""],
    ["er", ""], ["ir", ""], ["e", ""], ["o", ""], ["a", ""], ["y", ""]
  ]
  const stripOnce = (word: string): string => {
    if (word.length <= 3 || /^[0-9]+$/.test(word)) return word
    for (const [suffix, replacement] of suffixes) {
      if (suffix === "s" && word.endsWith("ss")) continue
      if (word.endsWith(suffix) && word.length - suffix.length + replacement.length >= 3) {
        return word.slice(0, word.length - suffix.length) + replacement
      }
    }
    return word
  }
  const stem = (word: string): string => stripOnce(stripOnce(word))
  const hash = (text: string, seed: number): number => {
    let h = 0x811c9dc5 ^ seed
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i)
      h = Math.imul(h, 0x01000193)
    }
    return h >>> 0
  }
  const add = (vector: Float64Array, feature: string, weight: number) => {
    const h = hash(feature, 0)
    const sign = (hash(feature, 0x9e3779b9) & 1) === 0 ? 1 : -1
    vector[h % vector.length] += sign * weight
  }
  const hashEmbed = (text: string, dimensions: number): Array<number> => {
    const vector = new Float64Array(dimensions)
    let previous: string | null = null
    for (const word of words(text)) {
      if (stopWords.has(word) || word.length < 2) {
        add(vector, `w:${word}`, 0.15)
        previous = null
        continue
      }
      const s = stem(word)
      add(vector, `w:${s}`, 1)
      const padded = `^${s}$`
      const grams = Math.max(1, padded.length - 2)
      for (let i = 0; i + 3 <= padded.length; i++) add(vector, `g:${padded.slice(i, i + 3)}`, 0.8 / Math.sqrt(grams))
      if (previous !== null) add(vector, `b:${previous} ${s}`, 0.5)
      previous = s
    }
    let norm = 0
    for (const x of vector) norm += x * x
    if (norm === 0) {
      const unit = new Array<number>(dimensions).fill(0)
      unit[0] = 1
      return unit
    }
    const scale = 1 / Math.sqrt(norm)
    return Array.from(vector, (x) => x * scale)
  }
  return { stem, hashEmbed }
})()

describe("text features with their caches", () => {
  const texts = [
    "Orders placed before 2 pm leave the warehouse the same day; ordered items are shipped, and shipping is tracked.",
    "La contraseña se restablece desde Ajustes. Las contraseñas caducan cada 90 días; la facturación llega por correo electrónico.",
    "Invoice 2024-0042 totals 1999 euros, 12 items at 166.58 each, code A7 B 9x.",
    "the and of to in is it a i you we they the and of",
    "parcel parcel parcel parcels parcel delivery delivered delivering parcel",
    ""
  ]

  it("hashEmbed gives exactly the numbers of the unmemoised embedder, at two lengths, cached or not", () => {
    for (const dimensions of [384, 97]) {
      for (const round of [1, 2]) {
        for (const text of texts) expect(hashEmbed(text, dimensions), `${dimensions} round ${round}: ${text}`).toEqual(reference.hashEmbed(text, dimensions))
      }
    }
  })

  it("stem gives the stems it gave before", () => {
    const list = [
      "orders", "ordered", "order", "ordering", "shipping", "shipments", "address", "addresses", "stories", "quickly",
      "information", "contraseñas", "contrasena", "contrasenas", "facturacion", "devoluciones", "enviando", "comprado",
      "compradas", "rapidamente", "ciudad", "felicidad", "2024", "abc", "x", "ss", "pass", "business", "running", "moving"
    ]
    for (const round of [1, 2]) expect(list.map(stem), `round ${round}`).toEqual(list.map(reference.stem))
    expect(["orders", "ordered", "order"].map(stem)).toEqual(["ord", "ord", "ord"])
  })
})

describe("local Ai provider, big inputs", () => {
  // over `localThreadChars`: worked on the provider's thread
  const big = { title: handbook.title, text: Array.from({ length: 200 }, () => handbook.text).join("\n\n") }
  const oneLine = { title: "One line", text: Array.from({ length: 60_000 }, (_, i) => `refund${i % 97}`).join(" ") }

  it.effect("gives the same categories, Q&A and vectors as the provider on the main thread", () =>
    Effect.gen(function* () {
      expect(big.text.length).toBeGreaterThan(Ai.localThreadChars)
      const ai = yield* Ai.Ai
      const inline = Ai.makeLocal()
      const categories = yield* ai.categorize(big)
      expect(categories).toEqual(yield* inline.categorize(big))
      expect(yield* ai.generateQa(big, categories)).toEqual(yield* inline.generateQa(big, categories))
      const texts = chunk(big.text)
      expect(yield* ai.embed(texts)).toEqual(yield* inline.embed(texts))
    }).pipe(Effect.provide(Ai.layerLocal)))

  it.effect("leaves the main thread free while it works", () =>
    Effect.gen(function* () {
      expect(oneLine.text.length).toBeGreaterThan(Ai.localThreadChars)
      const ai = yield* Ai.Ai
      let turns = 0
      let done = false
      // bounded: it stops once the work is answered
      const turn = () => {
        turns++
        if (!done) setImmediate(turn)
      }
      setImmediate(turn)
      const categories = yield* ai.categorize(oneLine)
      yield* ai.generateQa(oneLine, categories)
      done = true
      // the event loop turned while the document was read (on the main thread it could not have)
      expect(turns).toBeGreaterThan(100)
    }).pipe(Effect.provide(Ai.layerLocal)))
})
