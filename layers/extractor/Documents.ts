/**
 * Readable text out of untrusted bytes: HTML through Readability (the Firefox
 * reader view) on a linkedom DOM, PDF through unpdf (pdf.js), plain text and
 * Markdown as they are. The result keeps headings as Markdown-style `#` lines
 * and blank lines between blocks: the AI steps read structure from it.
 *
 * Runs inside an extraction thread (`Thread.ts`), never on the service's main
 * thread: a hostile document may take any time or memory, and the thread is
 * what a limit can stop. The packages are imported statically so the bundle
 * gives this module their named exports (a CommonJS package loaded with
 * `import()` only has a default export there).
 */
import { Readability } from "@mozilla/readability"
import { parseHTML } from "linkedom"
import { extractText, getDocumentProxy } from "unpdf"

export type DocumentKind = "html" | "pdf" | "text"

export interface Document {
  readonly title: string
  readonly text: string
}

/** A document that cannot be read, with a reason a person understands. */
export class Unreadable extends Error {}

const blockTags = new Set(["P", "LI", "PRE", "BLOCKQUOTE", "DT", "DD", "TD", "TH", "FIGCAPTION", "CAPTION"])
const headingLevel = (tag: string) => (/^H[1-6]$/.test(tag) ? Number(tag[1]) : 0)

const squash = (s: string) => s.replace(/\s+/g, " ").trim()

/**
 * Blocks of a DOM subtree in document order: headings as `#` lines, other
 * blocks as paragraphs. Walked with an explicit stack, not recursion: a page
 * nested tens of thousands of elements deep must not overflow the stack.
 */
const blocks = (root: Element | null): Array<string> => {
  const out: Array<string> = []
  const stack: Array<Element> = root === null ? [] : [...Array.from(root.children)].reverse()
  while (stack.length > 0) {
    const node = stack.pop()!
    const tag = node.tagName.toUpperCase()
    const level = headingLevel(tag)
    if (level > 0) {
      const text = squash(node.textContent ?? "")
      if (text !== "") out.push(`${"#".repeat(level)} ${text}`)
    } else if (blockTags.has(tag) && !Array.from(node.children).some((c) => blockTags.has(c.tagName.toUpperCase()))) {
      const text = squash(node.textContent ?? "")
      if (text !== "") out.push(tag === "LI" ? `- ${text}` : text)
    } else {
      const children = Array.from(node.children)
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
    }
  }
  return out
}

/**
 * Deeper than this, Readability is skipped and the whole body is read: its
 * scoring walks each element's ancestors, so its time grows faster than the
 * page's depth (a page nested a thousand deep takes it many seconds).
 */
export const readabilityMaxDepth = 200

/** How deep the tree under `root` goes (iteratively: the depth is the hostile part). */
const depthOf = (root: Element | null): number => {
  let deepest = 0
  const stack: Array<[Element, number]> = root === null ? [] : [[root, 1]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (depth > deepest) deepest = depth
    for (const child of Array.from(node.children)) stack.push([child, depth + 1])
  }
  return deepest
}

/** The article Readability finds, or none: it gives up (throws) on pages it cannot make sense of. */
const readable = (html: string) => {
  try {
    // Readability mutates the DOM it reads; it gets its own parse
    return new Readability(parseHTML(html).document, { charThreshold: 100 }).parse()
  } catch {
    return null
  }
}

/** linkedom gives no document element for text without a tag (an empty page, plain words): give it one. */
const parsePage = (html: string) => {
  const parsed = parseHTML(html)
  return parsed.document.documentElement === null ? parseHTML(`<html><body>${html}</body></html>`) : parsed
}

export const fromHtml = (html: string, fallbackTitle: string): Document => {
  const { document } = parsePage(html)
  const pageTitle = squash(document.title ?? "")
  const article = depthOf(document.documentElement) > readabilityMaxDepth ? null : readable(html)
  const content = article?.content ? parseHTML(`<html><body>${article.content}</body></html>`).document.body : document.body
  let parts = blocks(content ?? null)
  if (parts.length === 0) parts = [squash(content?.textContent ?? "")].filter((s) => s !== "")
  const title = squash(article?.title ?? "") || pageTitle || fallbackTitle
  return { title, text: parts.join("\n\n") }
}

export const fromText = (text: string, fallbackTitle: string): Document => {
  const clean = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n").trim()
  const heading = /^#{1,6}\s+(.+)$/m.exec(clean)
  return { title: heading?.[1]?.trim() || fallbackTitle, text: clean }
}

export const fromPdf = async (bytes: Uint8Array, fallbackTitle: string): Promise<Document> => {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>
  try {
    // pdf.js takes ownership of the buffer it is given
    pdf = await getDocumentProxy(new Uint8Array(bytes))
  } catch (cause) {
    throw new Unreadable(`the PDF could not be read: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
  const { text } = await extractText(pdf, { mergePages: false })
  const meta = await pdf.getMetadata().catch(() => undefined)
  const info = meta?.info as { Title?: unknown } | undefined
  const title = typeof info?.Title === "string" && info.Title.trim() !== "" ? info.Title.trim() : fallbackTitle
  return { title, text: text.map((page) => page.trim()).filter((p) => p !== "").join("\n\n") }
}

const decodeUtf8 = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

/** Bytes that are not text at all: a NUL, or many control characters, near the start. */
const isBinary = (bytes: Uint8Array): boolean => {
  const head = bytes.subarray(0, 4096)
  let control = 0
  for (const byte of head) {
    if (byte === 0) return true
    if (byte < 9 || (byte > 13 && byte < 32)) control++
  }
  return control > head.length / 10
}

/** One document of any kind; throws `Unreadable` (or anything else, which the caller reports as unreadable). */
export const extract = (kind: DocumentKind, bytes: Uint8Array, fallbackTitle: string): Promise<Document> | Document => {
  if (kind !== "pdf" && isBinary(bytes)) throw new Unreadable(`the ${kind === "html" ? "page" : "file"} holds binary data, not ${kind === "html" ? "HTML" : "text"}`)
  switch (kind) {
    case "html":
      return fromHtml(decodeUtf8(bytes), fallbackTitle)
    case "text":
      return fromText(decodeUtf8(bytes), fallbackTitle)
    case "pdf":
      return fromPdf(bytes, fallbackTitle)
  }
}
