/**
 * Which of the catalogue's languages (`schema/texts/`) a text the service writes to a visitor is in: the
 * fallback answer, the hand-off e-mail. The question's own language first, when it can be told (the visitor
 * wrote in it, and an `openai` model answers in it too); then the widget's `locale` (the page's language, or
 * the one its integrator set); then the agent's language; then English.
 */
import type { AgentLanguage, LanguageTag } from "../../schema/Languages.js"
import { isTextLanguage, type TextLanguage } from "../../schema/texts/Catalogue.js"
import { detectLanguage } from "./Detect.js"

/**
 * The languages a visitor's question is told among: the catalogue's and their near neighbours, so that a short
 * Spanish question is not taken for Catalan or Hungarian (`src/languages/Detect.ts` explains why short texts
 * need a list), and a Portuguese or French one is not taken for Spanish.
 */
const plausible: ReadonlyArray<LanguageTag> = ["en", "es", "pt", "fr", "de", "it"]

/** `es-MX` → `es`; a tag the catalogue lacks → undefined. */
export const textLanguageOfTag = (tag: string | null | undefined): TextLanguage | undefined => {
  const base = tag?.trim().toLowerCase().split(/[-_]/)[0]
  return base !== undefined && isTextLanguage(base) ? base : undefined
}

/** The first of the catalogue's languages an `Accept-Language` header names, by weight, then order. */
export const textLanguageOfAcceptLanguage = (header: string | undefined): TextLanguage | undefined => {
  const ranked = (header ?? "")
    .split(",")
    .slice(0, 32)
    .map((part, at) => {
      const [tag = "", ...params] = part.split(";")
      const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
      const weight = q === undefined ? 1 : Number(q.slice(2))
      return { tag, weight: Number.isFinite(weight) ? weight : 0, at }
    })
    .filter((r) => r.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.at - b.at)
  for (const r of ranked) {
    const language = textLanguageOfTag(r.tag)
    if (language !== undefined) return language
  }
  return undefined
}

/** The language a question is written in, when it can be told (among the plausible ones and the agent's). */
export const questionLanguage = (question: string, agentLanguage: AgentLanguage): LanguageTag | undefined => {
  const among = agentLanguage === "auto" || plausible.includes(agentLanguage) ? plausible : [...plausible, agentLanguage]
  const found = detectLanguage(question, { among, fallback: "en" })
  return found.detected ? found.language : undefined
}

export interface TextLanguageInput {
  /** The visitor's question (or their messages), when there is one. */
  readonly question?: string | undefined
  /** The widget's `locale`, when the text is for a widget visitor. */
  readonly locale?: string | undefined
  readonly agentLanguage: AgentLanguage
}

export const chooseTextLanguage = (input: TextLanguageInput): TextLanguage => {
  const asked = input.question === undefined ? undefined : questionLanguage(input.question, input.agentLanguage)
  return (
    textLanguageOfTag(asked) ??
    textLanguageOfTag(input.locale) ??
    (input.agentLanguage === "auto" ? undefined : textLanguageOfTag(input.agentLanguage)) ??
    "en"
  )
}
