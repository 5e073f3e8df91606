import { describe, expect, it } from "vitest"
import { languageTags, textSearchConfig } from "../../schema/Languages.js"
import { detectLanguage } from "../../src/languages/Detect.js"

const english = [
  "Do you ship to Canada?",
  "Where is my package?",
  "How long does delivery take?",
  "What are your opening hours?",
  "Is the store open on Sunday?",
  "How much is shipping to Spain?",
  "Can I change my order after paying for it?",
  "My card was charged twice",
  "How long does that take?"
]
const spanish = [
  "¿Envían a Canadá?",
  "¿Cuánto tarda el envío a Canadá?",
  "¿Dónde está mi paquete?",
  "¿Puedo devolver un regalo?",
  "¿Cuál es el horario?",
  "¿Abren los domingos?",
  "¿Cuánto cuesta el envío a España?",
  "quiero un reembolso",
  "Me cobraron dos veces la tarjeta",
  "¿Cuánto tarda eso?"
]

describe("detectLanguage", () => {
  it("tells a shop visitor's short English questions from Spanish ones, among the agent's two languages", () => {
    for (const q of english) expect(detectLanguage(q, { among: ["en", "es"], fallback: "es" }).language, q).toBe("en")
    for (const q of spanish) expect(detectLanguage(q, { among: ["en", "es"], fallback: "en" }).language, q).toBe("es")
  })

  it("reads long passages among every language it knows", () => {
    const passages = {
      en: "Shipments to Canada leave our Halifax warehouse every Thursday and arrive within six business days. Returns are accepted within thirty days of delivery.",
      es: "Los envíos a Canadá salen de nuestro almacén de Halifax cada jueves y llegan en seis días hábiles. Aceptamos devoluciones dentro de los treinta días.",
      pt: "As remessas para o Canadá saem do nosso armazém em Halifax todas as quintas-feiras e chegam em seis dias úteis.",
      fr: "Les envois vers le Canada partent de notre entrepôt d'Halifax chaque jeudi et arrivent en six jours ouvrables.",
      de: "Sendungen nach Kanada verlassen unser Lager in Halifax jeden Donnerstag und kommen innerhalb von sechs Werktagen an."
    } as const
    for (const [tag, text] of Object.entries(passages)) {
      expect(detectLanguage(text, { fallback: "en" })).toEqual({ language: tag, detected: true })
      // A long document is read in three slices; its language still comes through.
      expect(detectLanguage(`${text} `.repeat(60), { fallback: "en" }).language).toBe(tag)
    }
  })

  it("gives the fallback to a text too short to tell, and the only plausible language at once", () => {
    expect(detectLanguage("ok", { fallback: "es" })).toEqual({ language: "es", detected: false })
    expect(detectLanguage("42 €", { fallback: "en" })).toEqual({ language: "en", detected: false })
    expect(detectLanguage("Do you ship to Canada?", { among: ["es"], fallback: "en" }).language).toBe("es")
  })

  it("names a text-search configuration for every language, stemmed where PostgreSQL has a stemmer", () => {
    expect(textSearchConfig("es")).toBe("spanish")
    expect(textSearchConfig("en")).toBe("english")
    expect(textSearchConfig("pl")).toBe("simple")
    expect(new Set(languageTags).size).toBe(50)
  })
})
