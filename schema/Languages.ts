/**
 * The languages the service tells apart: the fifty its detector knows (`src/languages/Detect.ts`), named by
 * their ISO 639-1 tags, each with the PostgreSQL text-search configuration its words are indexed with. Both
 * databases ship the Snowball stemmers named here; a language without one is indexed with `simple` (its words
 * folded to lower case, none stemmed or dropped).
 */
import * as Schema from "effect/Schema"

const stemmed = {
  ar: "arabic",
  ca: "catalan",
  da: "danish",
  de: "german",
  el: "greek",
  en: "english",
  es: "spanish",
  eu: "basque",
  fi: "finnish",
  fr: "french",
  hi: "hindi",
  hu: "hungarian",
  hy: "armenian",
  id: "indonesian",
  it: "italian",
  lt: "lithuanian",
  nb: "norwegian",
  nl: "dutch",
  pt: "portuguese",
  ro: "romanian",
  ru: "russian",
  sr: "serbian",
  sv: "swedish",
  tr: "turkish"
} as const

const unstemmed = [
  "af", "az", "be", "bg", "bn", "ckb", "cs", "et", "fa", "ha", "he", "hr", "is", "ja", "ka", "kk", "ko", "mk",
  "mr", "pl", "rn", "sk", "tl", "uk", "vi", "zh"
] as const

export const languageTags = [...(Object.keys(stemmed) as Array<keyof typeof stemmed>), ...unstemmed]

/** A language the service tells apart, by its ISO 639-1 tag (`ckb`, Central Kurdish, has none). */
export const LanguageTag = Schema.Literal(...languageTags).annotations({
  identifier: "LanguageTag",
  description: "A language by its ISO 639-1 tag: `en`, `es`, `pt`, `fr`, `de`, ..."
})
export type LanguageTag = typeof LanguageTag.Type

/** An agent's language: one tag, or `auto` (each text's own language, as detected). */
export const AgentLanguage = Schema.Union(Schema.Literal("auto"), LanguageTag).annotations({
  identifier: "AgentLanguage",
  description: "`auto` (the default: each source and question in its own detected language) or a language tag"
})
export type AgentLanguage = typeof AgentLanguage.Type

export type TextSearchConfig = (typeof stemmed)[keyof typeof stemmed] | "simple"

/** The text-search configuration a language's words are indexed and searched with. */
export const textSearchConfig = (tag: LanguageTag): TextSearchConfig =>
  tag in stemmed ? stemmed[tag as keyof typeof stemmed] : "simple"

/** The `locale` pattern, also for the bodies described by hand rather than by a Schema. */
export const visitorLocalePattern = "^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$"

/** A visitor's language as a page or client names it (`es`, `en-GB`, `es_MX`): what the service writes them is chosen by it. */
export const VisitorLocale = Schema.String.pipe(
  Schema.maxLength(35),
  Schema.pattern(new RegExp(visitorLocalePattern), { message: () => "locale must be a language tag such as `es` or `en-GB`" })
)
