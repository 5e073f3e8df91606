/**
 * The local provider's reply, made of the agent's own knowledge: extractive, in the catalogue's words only where
 * it has nothing to say (`answer.none`).
 */
import type { LanguageTag } from "../../schema/Languages.js"
import { isTextLanguage, text as catalogueText } from "../../schema/texts/Catalogue.js"
import { words } from "./Text.js"

/** A sentence or passage as compared with what a reply already said: its words, folded, one space apart. */
const said = (text: string): string => words(text).join(" ")

/**
 * A chunk's text without the lines that name it: its source's title (the
 * pipeline puts it before the document's text) and the section heading a chunk
 * repeats (a short line with no closing punctuation, before more text). Said
 * inside an excerpt, they read glued to the sentence after them.
 */
const body = (text: string, title: string): string => {
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l.length > 0)
  const titled = said(title)
  const heading = (line: string) => line.length <= 120 && !/[.!?:;]$/.test(line)
  // never the last line: a chunk that is only its title or a heading still says it
  let first = 0
  if (lines.length > 1 && titled.length > 0 && said(lines[0]!) === titled) first++
  if (lines.length - first > 1 && heading(lines[first]!)) first++
  return lines.slice(first).join("\n")
}

/** A passage's sentences, cut at sentence ends and at line breaks, whitespace folded; `opens`: the first of its line. */
const sentencesOf = (text: string): Array<{ readonly text: string; readonly opens: boolean }> =>
  text.split("\n").flatMap((line) =>
    (line.replace(/\s+/g, " ").trim().match(/.+?[.!?]+(?=\s|$)|.+$/g) ?? [])
      .map((s) => s.trim())
      .filter((s) => s.length > 0)
      .map((s, i) => ({ text: s, opens: i === 0 }))
  )

/** Whether `sentence` is already in `spoken` (folded words): said before, or contained in something said. */
const alreadySaid = (spoken: ReadonlyArray<string>, sentence: string): boolean => {
  const key = said(sentence)
  return key.length === 0 || spoken.some((s) => ` ${s} `.includes(` ${key} `))
}

/** The first sentences of a passage not said yet, up to about `max` characters, its lines kept apart. */
const excerpt = (text: string, max: number, spoken: ReadonlyArray<string>): string => {
  let out = ""
  for (const sentence of sentencesOf(text)) {
    if (alreadySaid([...spoken, said(out)], sentence.text)) continue
    if (out.length > 0 && out.length + sentence.text.length + 1 > max) break
    out = out.length === 0 ? sentence.text : `${out}${sentence.opens ? "\n" : " "}${sentence.text}`
  }
  return out.length > max ? `${out.slice(0, max).trimEnd()}...` : out
}

/**
 * The local provider's reply: the best Q&A answer, then an excerpt of the best
 * chunk when it scores close to that answer (or there is no Q&A); extractive,
 * so only the agent's own knowledge is ever said, and each thing once: a
 * sentence already said, or contained in what was said, is left out.
 */
export const answer = (
  grounding: ReadonlyArray<{ readonly kind: "qa" | "chunk"; readonly title: string; readonly text: string; readonly score: number }>,
  language: LanguageTag = "en"
): string => {
  const qa = grounding.find((g) => g.kind === "qa")
  const chunk = grounding.find((g) => g.kind === "chunk")
  const parts: Array<string> = []
  if (qa !== undefined) parts.push(qa.text.trim())
  if (chunk !== undefined && (qa === undefined || chunk.score >= qa.score * 0.9)) {
    parts.push(excerpt(body(chunk.text, chunk.title), 400, parts.map(said)))
  }
  const text = parts.filter((p) => p.length > 0).join("\n\n")
  return text.length > 0 ? text : catalogueText(isTextLanguage(language) ? language : "en", "answer.none")
}
