/**
 * A Markdown or plain-text document as blocks and lines (`entries`), headings recognised either way, and the
 * markers of its FAQ pairs: what `Extract.ts` reads its sections and questions from.
 */
import { words } from "./Text.js"

export interface Heading {
  readonly kind: "heading"
  readonly level: number
  readonly text: string
}
interface Line {
  readonly kind: "line"
  readonly text: string
  /** Index of the blank-line separated paragraph the line belongs to. */
  readonly paragraph: number
}
export type Entry = Heading | Line

const markdownHeading = /^(#{1,6})\s+(.+?)\s*#*\s*$/
const bullet = /^(?:[-*+•]|\d+[.)])\s+/
export const questionMarker = /^(?:q|question|p|pregunta)\s*[:.]\s*/i
export const answerMarker = /^(?:a|answer|r|respuesta)\s*[:.]\s*/i

export const clean = (text: string) => text.replace(/[*_`]+/g, "").replace(/\s+/g, " ").trim()

// a question opens with a word and reads as prose: a grammar or code line ending in "?" is none
export const isQuestionText = (text: string) =>
  /\?\s*$/.test(text) && text.length <= 200 && /^[¿¡]?\p{L}/u.test(text) && !/[=|{}<>;\\]|::/.test(text)

/** Blocks and lines of a Markdown or plain-text document, headings recognised either way. */
export const entries = (text: string): Array<Entry> => {
  const blocks = text.replace(/\r\n?/g, "\n").split(/\n\s*\n/)
  const raw: Array<Array<Entry>> = []
  let paragraph = 0
  for (const block of blocks) {
    const lines = block.split("\n").map((l) => l.trim()).filter((l) => l.length > 0)
    const out: Array<Entry> = []
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!
      const next = lines[i + 1]
      const md = markdownHeading.exec(line)
      if (md) {
        out.push({ kind: "heading", level: md[1]!.length, text: clean(md[2]!) })
        paragraph++
      } else if (next !== undefined && /^(=+|-+)$/.test(next) && !/^(=+|-+)$/.test(line)) {
        out.push({ kind: "heading", level: next.startsWith("=") ? 1 : 2, text: clean(line) })
        paragraph++
        i++
      } else {
        const body = clean(line.replace(bullet, ""))
        if (body.length > 0) out.push({ kind: "line", text: body, paragraph })
      }
    }
    paragraph++
    raw.push(out)
  }
  // a lone short line with no closing punctuation, before more text, reads as a heading
  const result: Array<Entry> = []
  for (let b = 0; b < raw.length; b++) {
    const block = raw[b]!
    const only = block.length === 1 ? block[0]! : undefined
    const followed = raw.slice(b + 1).some((later) => later.some((e) => e.kind === "line"))
    if (
      only?.kind === "line" &&
      followed &&
      only.text.length <= 80 &&
      words(only.text).length <= 10 &&
      !/[.,;:!]$/.test(only.text) &&
      !questionMarker.test(only.text) &&
      !isQuestionText(only.text)
    ) {
      result.push({ kind: "heading", level: 2, text: only.text })
    } else {
      result.push(...block)
    }
  }
  return result
}
