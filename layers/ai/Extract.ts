/**
 * Extractive reading of a document for the local provider: its headings,
 * sections and FAQ pairs, then categories and Q&A drafts made from them.
 * Deterministic: the same input gives the same output, in the same order.
 * Written in the document's language: the texts made around its words (a
 * category's description, a question about a heading) come from the catalogue
 * (`schema/texts/`); a language the catalogue lacks gets no question made from
 * a heading, and its sentences none (the question rules are English and Spanish).
 */
import type { LanguageTag } from "../../schema/Languages.js"
import { isTextLanguage, text as catalogueText, type TextKey, type TextLanguage } from "../../schema/texts/Catalogue.js"
import { answerMarker, type Entry, entries, type Heading, isQuestionText, questionMarker } from "./Entries.js"
import { question } from "./Question.js"
import { firstSentence, fold, looksSpanish, stem, terms, words } from "./Text.js"


interface Section {
  /** Headings from the outermost down to this section's own (empty before the first heading). */
  readonly path: ReadonlyArray<string>
  readonly heading: string | null
  readonly paragraphs: Array<Array<string>>
}

export interface Parsed {
  readonly headings: ReadonlyArray<Heading>
  readonly faq: ReadonlyArray<{ readonly question: string; readonly answer: string; readonly path: ReadonlyArray<string> }>
  readonly sections: ReadonlyArray<Section>
  /** The document's language: given, else Spanish or English by their common words. */
  readonly language: LanguageTag
}

/** The document's language as the catalogue has it, or undefined. */
const catalogued = (language: LanguageTag): TextLanguage | undefined => (isTextLanguage(language) ? language : undefined)

/** A catalogue text in the document's language; English for a language the catalogue lacks. */
const say = (language: LanguageTag, key: TextKey, values?: Readonly<Record<string, string>>) =>
  catalogueText(catalogued(language) ?? "en", key, values)

/** Whether the question rules (`Question.ts`) read the language: English and Spanish. */
const asksIn = (language: LanguageTag): language is "en" | "es" => language === "en" || language === "es"

const maxAnswer = 1200

const clip = (text: string, max: number) => {
  if (text.length <= max) return text
  const cut = text.slice(0, max)
  const space = cut.lastIndexOf(" ")
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`
}

export interface Doc {
  readonly title: string
  readonly text: string
  readonly language?: LanguageTag | undefined
}

export const parse = (doc: Doc): Parsed => {
  const all = entries(doc.text)
  const headings = all.filter((e): e is Heading => e.kind === "heading")
  const consumed = new Set<number>()
  const faq: Array<{ question: string; answer: string; path: ReadonlyArray<string> }> = []
  const stack: Array<Heading> = []
  const pathAt: Array<ReadonlyArray<string>> = []
  for (let i = 0; i < all.length; i++) {
    const e = all[i]!
    if (e.kind === "heading") {
      while (stack.length > 0 && stack[stack.length - 1]!.level >= e.level) stack.pop()
      stack.push(e)
    }
    pathAt.push(stack.map((h) => h.text))
  }
  const questionAt = (e: Entry) =>
    e.kind === "heading" ? isQuestionText(e.text) : questionMarker.test(e.text) || isQuestionText(e.text)
  for (let i = 0; i < all.length; i++) {
    const e = all[i]!
    if (!questionAt(e)) continue
    const answer: Array<string> = []
    let j = i + 1
    for (; j < all.length; j++) {
      const next = all[j]!
      if (next.kind === "heading" || questionAt(next)) break
      answer.push(next.text.replace(answerMarker, ""))
    }
    if (answer.length === 0) continue
    const question = e.text.replace(questionMarker, "").trim()
    const path = e.kind === "heading" ? pathAt[i]!.slice(0, -1) : pathAt[i]!
    faq.push({ question, answer: clip(answer.join("\n"), maxAnswer), path })
    for (let k = i; k < j; k++) consumed.add(k)
    i = j - 1
  }
  const sections: Array<Section> = []
  let current: Section = { path: [], heading: null, paragraphs: [] }
  let lastParagraph = -1
  for (let i = 0; i < all.length; i++) {
    const e = all[i]!
    if (e.kind === "heading") {
      if (current.heading !== null || current.paragraphs.length > 0) sections.push(current)
      current = { path: pathAt[i]!, heading: consumed.has(i) ? null : e.text, paragraphs: [] }
      lastParagraph = -1
      continue
    }
    if (consumed.has(i)) continue
    if (e.paragraph !== lastParagraph || current.paragraphs.length === 0) current.paragraphs.push([])
    current.paragraphs[current.paragraphs.length - 1]!.push(e.text)
    lastParagraph = e.paragraph
  }
  if (current.heading !== null || current.paragraphs.length > 0) sections.push(current)
  const language = doc.language ?? (looksSpanish(`${doc.title}\n${doc.text}`) ? "es" : "en")
  return { headings, faq, sections, language }
}

export interface Category {
  readonly name: string
  readonly description: string
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

const describe = (parsed: Parsed, heading: string): string => {
  const section = parsed.sections.find((s) => s.heading === heading)
  const text = section?.paragraphs[0]?.join(" ")
  if (text) return clip(firstSentence(text), 200)
  // a language the catalogue lacks: the heading itself, no template around it in another language
  return catalogued(parsed.language) === undefined ? heading : say(parsed.language, "draft.categoryQuestions", { topic: heading.toLowerCase() })
}

/** 3..8 categories: the document's headings at the shallowest level that has 3, topped up with its top terms. */
export const categories = (doc: Doc): Array<Category> => {
  const parsed = parse(doc)
  const title = fold(doc.title).trim()
  const candidates = parsed.headings.filter(
    (h) => !isQuestionText(h.text) && fold(h.text).trim() !== title && h.text.length > 0
  )
  const levels = [...new Set(candidates.map((h) => h.level))].sort((a, b) => a - b)
  const level = levels.find((l) => new Set(candidates.filter((h) => h.level === l).map((h) => fold(h.text))).size >= 3)
  const ordered = level === undefined
    ? [...candidates].sort((a, b) => a.level - b.level)
    : candidates.filter((h) => h.level === level)
  const out: Array<Category> = []
  const seen = new Set<string>()
  const push = (name: string, description: string) => {
    const key = fold(name).trim()
    if (out.length >= 8 || key.length === 0 || seen.has(key)) return
    seen.add(key)
    out.push({ name, description })
  }
  for (const h of ordered) push(clip(h.text, 60), describe(parsed, h.text))
  if (out.length < 3) {
    const covered = new Set(out.flatMap((c) => terms(c.name)))
    const counts = new Map<string, { count: number; surface: Map<string, number>; first: number }>()
    let position = 0
    for (const word of words(`${doc.title}\n${doc.text}`)) {
      position++
      const [term] = terms(word)
      // adverbs name no topic
      if (term === undefined || word.length < 3 || /^[0-9]+$/.test(word) || /(ly|mente)$/.test(word) || covered.has(term)) continue
      const entry = counts.get(term) ?? { count: 0, surface: new Map<string, number>(), first: position }
      entry.count++
      entry.surface.set(word, (entry.surface.get(word) ?? 0) + 1)
      counts.set(term, entry)
    }
    const ranked = [...counts.entries()].sort((a, b) => b[1].count - a[1].count || a[1].first - b[1].first)
    const sentences = doc.text.replace(/\s+/g, " ").split(/(?<=[.!?])\s+/)
    for (const [term, entry] of ranked) {
      if (out.length >= 3) break
      const surface = [...entry.surface.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0]
      const sentence = sentences.find((s) => terms(s).includes(term))
      push(
        capitalise(surface),
        sentence
          ? clip(sentence.trim(), 200)
          : catalogued(parsed.language) === undefined
            ? capitalise(surface)
            : say(parsed.language, "draft.categoryContentAbout", { topic: surface })
      )
    }
  }
  const fallback = (["draft.categoryGeneral", "draft.categoryOther", "draft.categoryMore"] as const).map((key) => say(parsed.language, key))
  for (const name of fallback) {
    if (out.length >= 3) break
    push(name, catalogued(parsed.language) === undefined ? doc.title : say(parsed.language, "draft.categoryContentOf", { title: doc.title }))
  }
  return out
}

export interface Qa {
  readonly question: string
  readonly answer: string
  readonly category: string | null
}

/** A heading as said inside a question; a long heading is no topic a visitor names, so it gives none. */
const topic = (heading: string): string | null => {
  const trimmed = heading.replace(/[.!?¿¡:;,\s]+$/u, "").replace(/^[¿¡]/u, "")
  if (trimmed.length === 0 || trimmed.split(/\s+/).length > maxHeadingWords) return null
  // a line of code or markup taken for a heading names nothing a visitor asks about
  if (!/^[\p{L}\p{N}][\p{L}\p{N}\s.,'’&/+:-]*$/u.test(trimmed)) return null
  // sentence case reads on inside a question; a capitalised name stays as written
  const sentenceCase = !/\s\p{Lu}/u.test(trimmed) && !/^\p{Lu}{2}/u.test(trimmed)
  return sentenceCase ? trimmed.charAt(0).toLowerCase() + trimmed.slice(1) : trimmed
}

const maxHeadingWords = 10

const fromHeading = (heading: string, language: LanguageTag): string | null => {
  const said = topic(heading)
  if (said === null || catalogued(language) === undefined) return null
  return say(language, "draft.headingQuestion", { topic: said })
}

const abbreviation = /(?:^|\s)(?:e\.g|i\.e|etc|vs|approx|incl|no|nr|mr|mrs|ms|dr|st|sr|sra|srta|ud|uds|p\. ej|aprox|núm|tel)\.$/iu

/**
 * A paragraph's sentences, whole: cut after . ! ? before a capital, not after
 * an abbreviation; a line break ends a sentence only where the next line opens
 * a new one (a capital after closing punctuation, or a list item's line).
 */
const sentences = (paragraph: string): Array<string> => {
  const units: Array<string> = []
  for (const line of paragraph.split("\n").map((l) => l.trim()).filter((l) => l.length > 0)) {
    const last = units[units.length - 1]
    if (last !== undefined && !/[.!?:]$/.test(last) && /^\p{Ll}/u.test(line)) units[units.length - 1] = `${last} ${line}`
    else units.push(line)
  }
  return units.flatMap((unit) => {
    const out: Array<string> = []
    for (const piece of unit.replace(/\s+/g, " ").split(/(?<=[.!?])\s+(?=[\p{Lu}¿¡"“(\d])/u)) {
      const last = out[out.length - 1]
      if (last !== undefined && abbreviation.test(last)) out[out.length - 1] = `${last} ${piece}`
      else out.push(piece)
    }
    return out
  })
}

/** A sentence that goes on from the one before it: its answer reads whole only with both. */
const continues = /^(?:it|its|this|that|these|those|they|their|them|there|however|also|but|otherwise|then|so|esto|eso|ello|sin embargo|también|además|pero|si no|así)\b/iu

/**
 * One Q&A from a paragraph: the first sentence that turns into a real question,
 * answered by that sentence (and the next one when it goes on from it); none
 * when no sentence does.
 */
const fromParagraph = (
  paragraph: string,
  language: LanguageTag,
  common: (word: string) => boolean
): { readonly question: string; readonly answer: string } | null => {
  if (!asksIn(language)) return null
  const spanish = language === "es"
  const all = sentences(paragraph)
  for (let i = 0; i < all.length; i++) {
    const asked = question(all[i]!, spanish, common)
    if (asked === null) continue
    const next = all[i + 1]
    const answer = next !== undefined && continues.test(next) ? `${all[i]} ${next}` : all[i]!
    return { question: asked, answer }
  }
  return null
}

/**
 * Whether a word is a common one, so the capital it has opening a sentence is
 * only the sentence's: unless the document also capitalises it mid-sentence
 * and never writes it in lower case (a name), compared by stem.
 */
const commonIn = (text: string): ((word: string) => boolean) => {
  const lower = new Set<string>()
  const capital = new Set<string>()
  for (const w of text.match(/(?<![\p{L}\p{N}])\p{Ll}[\p{L}\p{N}'’-]*/gu) ?? []) lower.add(stem(fold(w)))
  for (const w of text.match(/(?<=[\p{L}\p{N},;] )\p{Lu}[\p{L}\p{N}'’-]*/gu) ?? []) capital.add(stem(fold(w)))
  return (word) => {
    const key = stem(fold(word))
    return lower.has(key) || !capital.has(key)
  }
}

/** The category a Q&A falls under: a heading above it with that name, else the best term overlap, else none. */
const place = (
  path: ReadonlyArray<string>,
  question: string,
  answer: string,
  given: ReadonlyArray<{ readonly name: string; readonly description: string }>
): string | null => {
  for (let i = path.length - 1; i >= 0; i--) {
    const hit = given.find((c) => fold(c.name).trim() === fold(path[i]!).trim())
    if (hit) return hit.name
  }
  const qTerms = new Set(terms(`${path.join(" ")} ${question}`))
  const aTerms = new Set(terms(answer))
  let best: string | null = null
  let bestScore = 0
  for (const category of given) {
    let score = 0
    for (const t of new Set(terms(category.name))) score += (qTerms.has(t) ? 3 : 0) + (aTerms.has(t) ? 1 : 0)
    for (const t of new Set(terms(category.description))) score += (qTerms.has(t) ? 0.5 : 0) + (aTerms.has(t) ? 0.25 : 0)
    if (score > bestScore) {
      best = category.name
      bestScore = score
    }
  }
  return best
}

const maxQa = 300

/** FAQ pairs first, then one Q&A per headed section, then one per remaining paragraph that has a sentence to ask about. */
export const qa = (
  doc: Doc,
  given: ReadonlyArray<{ readonly name: string; readonly description: string }>
): Array<Qa> => {
  const parsed = parse(doc)
  const common = commonIn(doc.text)
  const out: Array<Qa> = []
  const seen = new Set<string>()
  const push = (path: ReadonlyArray<string>, question: string, answer: string) => {
    const key = fold(question).replace(/[^a-z0-9]+/g, " ").trim()
    if (out.length >= maxQa || key.length === 0 || answer.trim().length === 0 || seen.has(key)) return
    seen.add(key)
    out.push({ question, answer, category: place(path, question, answer, given) })
  }
  for (const pair of parsed.faq) push(pair.path, pair.question, pair.answer)
  for (const section of parsed.sections) {
    const paragraphs = section.paragraphs.map((p) => p.join("\n"))
    if (paragraphs.length === 0) continue
    let rest = paragraphs
    if (section.heading !== null) {
      const asked = fromHeading(section.heading, parsed.language)
      if (asked !== null) push(section.path, asked, clip(paragraphs.join("\n\n"), maxAnswer))
      rest = paragraphs.slice(1)
    }
    for (const paragraph of rest) {
      const drafted = fromParagraph(paragraph, parsed.language, common)
      if (drafted !== null) push(section.path, drafted.question, drafted.answer)
    }
  }
  return out
}
