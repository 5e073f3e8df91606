/**
 * Readable text out of what a source brings: HTML through Readability (the
 * Firefox reader view) on a linkedom DOM, PDF through unpdf (pdf.js), plain
 * text and Markdown as they are. The result keeps headings as Markdown-style
 * `#` lines and blank lines between blocks: the AI steps read structure from it.
 */
import * as Effect from "effect/Effect"

export interface Document {
  readonly title: string
  readonly text: string
}

const blockTags = new Set(["P", "LI", "PRE", "BLOCKQUOTE", "DT", "DD", "TD", "TH", "FIGCAPTION", "CAPTION"])
const headingLevel = (tag: string) => (/^H[1-6]$/.test(tag) ? Number(tag[1]) : 0)

const squash = (s: string) => s.replace(/\s+/g, " ").trim()

/** Blocks of a DOM subtree in document order: headings as `#` lines, other blocks as paragraphs. */
const blocks = (root: Element | null): Array<string> => {
  const out: Array<string> = []
  const walk = (node: Element) => {
    for (const child of Array.from(node.children)) {
      const tag = child.tagName.toUpperCase()
      const level = headingLevel(tag)
      if (level > 0) {
        const text = squash(child.textContent ?? "")
        if (text !== "") out.push(`${"#".repeat(level)} ${text}`)
      } else if (blockTags.has(tag) && !Array.from(child.children).some((c) => blockTags.has(c.tagName.toUpperCase()))) {
        const text = squash(child.textContent ?? "")
        if (text !== "") out.push(tag === "LI" ? `- ${text}` : text)
      } else {
        walk(child)
      }
    }
  }
  if (root !== null) walk(root)
  return out
}

/** linkedom and Readability: loaded with the first HTML page, not at start (most of the work of loading the pipeline). */
const htmlTools = Effect.promise(() => Promise.all([import("linkedom"), import("@mozilla/readability")]))

export const fromHtml = (html: string, fallbackTitle: string): Effect.Effect<Document> =>
  Effect.map(htmlTools, ([{ parseHTML }, { Readability }]) => {
    const { document } = parseHTML(html)
    const pageTitle = squash(document.title ?? "")
    // Readability mutates the DOM it reads; it gets its own parse
    const article = new Readability(parseHTML(html).document, { charThreshold: 100 }).parse()
    const content = article?.content ? parseHTML(`<html><body>${article.content}</body></html>`).document.body : document.body
    let parts = blocks(content)
    if (parts.length === 0) parts = [squash(content?.textContent ?? "")].filter((s) => s !== "")
    const title = squash(article?.title ?? "") || pageTitle || fallbackTitle
    return { title, text: parts.join("\n\n") }
  })

export const fromText = (text: string, fallbackTitle: string): Document => {
  const clean = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n").trim()
  const heading = /^#{1,6}\s+(.+)$/m.exec(clean)
  return { title: heading?.[1]?.trim() || fallbackTitle, text: clean }
}

export const fromPdf = (bytes: Uint8Array, fallbackTitle: string): Effect.Effect<Document, Error> =>
  Effect.tryPromise({
    try: async () => {
      // pdf.js is megabytes of code: loaded on the first PDF, not at start
      const { extractText, getDocumentProxy } = await import("unpdf")
      // pdf.js takes ownership of the buffer it is given
      const pdf = await getDocumentProxy(new Uint8Array(bytes))
      const { text } = await extractText(pdf, { mergePages: false })
      const meta = await pdf.getMetadata().catch(() => undefined)
      const info = meta?.info as { Title?: unknown } | undefined
      const title = typeof info?.Title === "string" && info.Title.trim() !== "" ? info.Title.trim() : fallbackTitle
      return { title, text: text.map((page) => page.trim()).filter((p) => p !== "").join("\n\n") }
    },
    catch: (cause) => new Error(`the PDF could not be read: ${cause instanceof Error ? cause.message : String(cause)}`)
  })
