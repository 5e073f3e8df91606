/**
 * The texts the service writes itself, one JSON file per language (`en.json`, `es.json`): the fallback answer and
 * its `escalation` offer, the hand-off e-mail and ticket, the local provider's drafts, the chat's and the form's
 * browser texts, a form submission's field errors. A translator adds a
 * language by copying `en.json` under the language's tag, translating each value (the `{name}` placeholders kept
 * as they are), and naming the file here. Plain data and plain functions: the browser components bundle this
 * module too, so it imports nothing else.
 */
import en from "./en.json" with { type: "json" }
import es from "./es.json" with { type: "json" }

export type TextKey = keyof typeof en

/** The languages the catalogue has, English first (every other falls back to it). */
export const textLanguages = ["en", "es"] as const
export type TextLanguage = (typeof textLanguages)[number]

/** Each language's texts; the test holds them to the same keys and placeholders as English. */
export const catalogues: Readonly<Record<TextLanguage, Readonly<Record<TextKey, string>>>> = { en, es }

export const isTextLanguage = (tag: string): tag is TextLanguage => (textLanguages as ReadonlyArray<string>).includes(tag)

/** The `{name}` placeholders of a template, in order of first appearance. */
export const placeholdersOf = (template: string): Array<string> => [
  ...new Set([...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!))
]

/** The text `key` in `language`, its placeholders filled from `values` (a missing one is left as written). */
export const text = (
  language: TextLanguage,
  key: TextKey,
  values: Readonly<Record<string, string | number>> = {}
): string =>
  (catalogues[language][key] ?? catalogues.en[key]).replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in values ? String(values[name]) : whole
  )
