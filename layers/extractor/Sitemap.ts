/**
 * Sitemaps as sitemaps.org defines them: a `<urlset>` of pages or a
 * `<sitemapindex>` of further sitemaps, each address in a `<loc>`; a plain
 * text file of one address a line; either gzip-encoded (`.xml.gz`, told by
 * its magic bytes, not by its name). Read by one forward scan for tags (each
 * `indexOf` starts where the last one ended), not by patterns that can
 * backtrack nor by a DOM: a site serves what it likes, up to 50 MB, and only
 * `<loc>` is wanted. Read in the decoder process (`Decoders.ts`).
 */
import { gunzipSync } from "node:zlib"

export interface Sitemap {
  /** Page addresses (`<urlset>`, or a text sitemap). */
  readonly pages: ReadonlyArray<string>
  /** Further sitemaps (`<sitemapindex>`). */
  readonly sitemaps: ReadonlyArray<string>
  /** Uncompressed bytes read. */
  readonly bytes: number
  /** The file held more than the `maxEntries` asked for: the first ones are given. */
  readonly truncated: boolean
}

export type SitemapBody =
  | { readonly _tag: "Sitemap"; readonly sitemap: Sitemap }
  | { readonly _tag: "Unreadable"; readonly reason: string; readonly tooLarge: boolean }

export interface SitemapLimits {
  /** Uncompressed bytes read at most (the protocol's 50 MB, or less: the caller's). */
  readonly maxBytes: number
  /** Addresses given at most. */
  readonly maxEntries: number
}

const isGzip = (body: Uint8Array) => body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b

const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }

/** A character XML allows in a document (XML 1.0, section 2.2). */
const isXmlChar = (code: number) =>
  code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff)

/** A reference's name between `&` and `;`: at most this long (`#x10FFFF` is 8), else the `&` is taken as written. */
const longestReference = 10

/**
 * Character data with its references replaced; undefined when a reference names nothing (an unknown entity, a
 * code point past Unicode's, a surrogate, a character XML forbids): the entry holding it is not well-formed and
 * is left out. A bare `&` that starts no reference (`?a=1&b=2`, written unescaped as sites often do) stays.
 */
const decodeText = (raw: string): string | undefined => {
  let out = ""
  let from = 0
  for (let amp = raw.indexOf("&"); amp >= 0; amp = raw.indexOf("&", from)) {
    const semi = raw.indexOf(";", amp + 1)
    const name = semi < 0 || semi - amp - 1 > longestReference ? undefined : raw.slice(amp + 1, semi)
    if (name === undefined || !/^(#[0-9]+|#x[0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*)$/.test(name)) {
      out += raw.slice(from, amp + 1)
      from = amp + 1
      continue
    }
    let replacement: string | undefined
    if (name.startsWith("#")) {
      const code = name[1] === "x" ? parseInt(name.slice(2), 16) : Number(name.slice(1))
      replacement = isXmlChar(code) ? String.fromCodePoint(code) : undefined
    } else {
      replacement = entities[name]
    }
    if (replacement === undefined) return undefined
    out += raw.slice(from, amp) + replacement
    from = semi + 1
  }
  return out + raw.slice(from)
}

/** A `<loc>`'s content (character data, or one CDATA section) as its address; undefined when it is not well-formed. */
const locText = (inner: string): string | undefined => {
  const trimmed = inner.trim()
  if (trimmed.startsWith("<![CDATA[")) {
    const end = trimmed.indexOf("]]>")
    return end === trimmed.length - 3 ? trimmed.slice(9, end).trim() : undefined
  }
  if (trimmed.includes("<")) return undefined
  return decodeText(trimmed)?.trim()
}

/** Where a tag's name ends: at white space, `/` or `>`. */
const nameEnd = (xml: string, from: number): number => {
  let i = from
  while (i < xml.length) {
    const c = xml.charCodeAt(i)
    // space, tab, line feed, carriage return, `/`, `>`
    if (c === 0x20 || c === 0x9 || c === 0xa || c === 0xd || c === 0x2f || c === 0x3e) break
    i++
  }
  return i
}

const prefixOf = (name: string) => {
  const colon = name.indexOf(":")
  return colon < 0 ? "" : name.slice(0, colon + 1)
}
const localOf = (name: string) => name.slice(name.indexOf(":") + 1).toLowerCase()

/** The document's root element's local name: after the prolog's declaration, comments and doctype. */
const rootOf = (xml: string): string | undefined => {
  let at = xml.indexOf("<")
  while (at >= 0) {
    if (xml.startsWith("<?", at)) at = skipPast(xml, at, "?>")
    else if (xml.startsWith("<!--", at)) at = skipPast(xml, at, "-->")
    else if (xml.startsWith("<!", at)) at = skipPast(xml, at, ">")
    else return localOf(xml.slice(at + 1, nameEnd(xml, at + 1)))
    at = at < 0 ? -1 : xml.indexOf("<", at)
  }
  return undefined
}

/** The index just past the next `end` after `from`; -1 when there is none. */
const skipPast = (xml: string, from: number, end: string) => {
  const found = xml.indexOf(end, from)
  return found < 0 ? -1 : found + end.length
}

/**
 * The `<loc>` of each `element` (`url` or `sitemap`), in document order, at most `max` (and whether there were
 * more). An entry counts once closed; one opened again before its end (a document of `<url>`s never closed) starts
 * afresh. Its `<loc>` is the first of its own namespace prefix (an image sitemap's `<image:loc>` is not the page).
 */
const locs = (xml: string, element: "url" | "sitemap", max: number): { readonly found: Array<string>; readonly truncated: boolean } => {
  const found: Array<string> = []
  // the open entry's prefix (undefined: none open), and the address found in it so far
  let entry: string | undefined
  let loc: string | undefined
  let at = xml.indexOf("<")
  while (at >= 0 && at < xml.length) {
    if (xml.startsWith("<!--", at)) {
      at = skipPast(xml, at, "-->")
    } else if (xml.startsWith("<![CDATA[", at)) {
      at = skipPast(xml, at, "]]>")
    } else if (xml.startsWith("<?", at) || xml.startsWith("<!", at)) {
      at = skipPast(xml, at, ">")
    } else {
      const closing = xml[at + 1] === "/"
      const nameStart = at + (closing ? 2 : 1)
      const name = xml.slice(nameStart, nameEnd(xml, nameStart))
      const tagEnd = xml.indexOf(">", nameStart + name.length)
      if (tagEnd < 0) break
      const local = localOf(name)
      const selfClosing = xml[tagEnd - 1] === "/"
      if (local === element && !closing) {
        entry = selfClosing ? undefined : prefixOf(name)
        loc = undefined
      } else if (local === element && closing) {
        if (entry !== undefined && loc !== undefined && loc !== "") {
          if (found.length >= max) return { found, truncated: true }
          found.push(loc)
        }
        entry = undefined
      } else if (local === "loc" && !closing && !selfClosing && entry !== undefined && loc === undefined && prefixOf(name) === entry) {
        // the loc's content runs to the next end tag (a CDATA section's `]]>` first, as it may hold `<`)
        const contentStart = tagEnd + 1
        const next = xml.indexOf("<", contentStart)
        const searchFrom = next >= 0 && xml.startsWith("<![CDATA[", next) ? skipPast(xml, next, "]]>") : contentStart
        const end = searchFrom < 0 ? -1 : xml.indexOf("</", searchFrom)
        if (end < 0) break
        const endName = xml.slice(end + 2, nameEnd(xml, end + 2))
        // a loc not closed by its own end tag (or not well-formed) gives its entry no address
        loc = endName === name ? (locText(xml.slice(contentStart, end)) ?? "") : ""
        at = xml.indexOf("<", end + 2)
        continue
      }
      at = tagEnd + 1
    }
    at = at < 0 ? -1 : xml.indexOf("<", at)
  }
  return { found, truncated: false }
}

/** A fetched sitemap's body, gzip-encoded or not, read within `limits`. */
export const parseSitemap = (body: Uint8Array, limits: SitemapLimits): SitemapBody => {
  const maxBytes = limits.maxBytes
  const tooLarge = { _tag: "Unreadable", reason: `larger than ${describeBytes(maxBytes)} uncompressed`, tooLarge: true } as const
  let bytes = body
  if (isGzip(body)) {
    try {
      bytes = gunzipSync(body, { maxOutputLength: maxBytes })
    } catch (error) {
      const overflow = error instanceof RangeError || (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE"
      return overflow ? tooLarge : { _tag: "Unreadable", reason: "not valid gzip", tooLarge: false }
    }
  }
  if (bytes.length > maxBytes) return tooLarge
  const content = new TextDecoder("utf-8").decode(bytes).replace(/^\uFEFF/, "")
  const read = (found: { readonly found: Array<string>; readonly truncated: boolean }, kind: "pages" | "sitemaps"): SitemapBody => ({
    _tag: "Sitemap",
    sitemap: {
      pages: kind === "pages" ? found.found : [],
      sitemaps: kind === "sitemaps" ? found.found : [],
      bytes: bytes.length,
      truncated: found.truncated
    }
  })
  if (content.trimStart().startsWith("<")) {
    const root = rootOf(content)
    if (root === "sitemapindex") return read(locs(content, "sitemap", limits.maxEntries), "sitemaps")
    if (root === "urlset") return read(locs(content, "url", limits.maxEntries), "pages")
    return { _tag: "Unreadable", reason: "neither a urlset nor a sitemapindex", tooLarge: false }
  }
  // a text sitemap: one address a line
  const pages: Array<string> = []
  for (const raw of content.split("\n")) {
    const line = raw.trim()
    if (!/^https?:\/\//i.test(line)) continue
    if (pages.length >= limits.maxEntries) return read({ found: pages, truncated: true }, "pages")
    pages.push(line)
  }
  return read({ found: pages, truncated: false }, "pages")
}

const describeBytes = (bytes: number) =>
  bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`
