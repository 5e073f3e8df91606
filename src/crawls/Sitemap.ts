/**
 * Sitemaps as sitemaps.org defines them: a `<urlset>` of pages or a
 * `<sitemapindex>` of further sitemaps, each address in a `<loc>`; a plain
 * text file of one address a line; either gzip-encoded (`.xml.gz`, told by
 * its magic bytes, not by its name). Read with patterns, not a DOM: a sitemap
 * holds up to 50,000 addresses in up to 50 MB, and only `<loc>` is wanted.
 */
import { gunzipSync } from "node:zlib"

/** The protocol's own bound on a sitemap's uncompressed size: a larger one is refused, not read. */
export const maxSitemapBytes = 50 * 1024 * 1024

export interface Sitemap {
  /** Page addresses (`<urlset>`, or a text sitemap). */
  readonly pages: ReadonlyArray<string>
  /** Further sitemaps (`<sitemapindex>`). */
  readonly sitemaps: ReadonlyArray<string>
}

export type SitemapBody = { readonly _tag: "Sitemap"; readonly sitemap: Sitemap } | { readonly _tag: "Unreadable"; readonly reason: string }

const isGzip = (body: Uint8Array) => body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b

const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }

const text = (inner: string): string =>
  inner
    .replace(/^\s*<!\[CDATA\[([\s\S]*?)\]\]>\s*$/, "$1")
    .replace(/&(amp|lt|gt|quot|apos);|&#(\d+);|&#x([0-9a-f]+);/gi, (_, name: string | undefined, dec: string | undefined, hex: string | undefined) =>
      name !== undefined ? entities[name.toLowerCase()]! : String.fromCodePoint(dec !== undefined ? Number(dec) : parseInt(hex!, 16))
    )
    .trim()

const locs = (xml: string, element: "url" | "sitemap"): Array<string> => {
  const out: Array<string> = []
  const entry = new RegExp(`<(?:[a-z0-9_-]+:)?${element}\\b[^>]*>([\\s\\S]*?)</(?:[a-z0-9_-]+:)?${element}>`, "gi")
  for (const match of xml.matchAll(entry)) {
    const loc = /<(?:[a-z0-9_-]+:)?loc\b[^>]*>([\s\S]*?)<\/(?:[a-z0-9_-]+:)?loc>/i.exec(match[1]!)
    if (loc !== null) out.push(text(loc[1]!))
  }
  return out
}

/** A fetched sitemap's body, gzip-encoded or not. */
export const parseSitemap = (body: Uint8Array): SitemapBody => {
  let bytes = body
  if (isGzip(body)) {
    try {
      bytes = gunzipSync(body, { maxOutputLength: maxSitemapBytes })
    } catch (error) {
      const tooLarge = error instanceof RangeError || (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE"
      return { _tag: "Unreadable", reason: tooLarge ? "larger than 50 MB uncompressed" : "not valid gzip" }
    }
  }
  if (bytes.length > maxSitemapBytes) return { _tag: "Unreadable", reason: "larger than 50 MB uncompressed" }
  const content = new TextDecoder("utf-8").decode(bytes).replace(/^\uFEFF/, "")
  if (/<(?:[a-z0-9_-]+:)?sitemapindex\b/i.test(content)) {
    return { _tag: "Sitemap", sitemap: { pages: [], sitemaps: locs(content, "sitemap") } }
  }
  if (/<(?:[a-z0-9_-]+:)?urlset\b/i.test(content)) {
    return { _tag: "Sitemap", sitemap: { pages: locs(content, "url"), sitemaps: [] } }
  }
  if (content.trimStart().startsWith("<")) return { _tag: "Unreadable", reason: "neither a urlset nor a sitemapindex" }
  // a text sitemap: one address a line
  const pages = content.split(/\r?\n/).map((line) => line.trim()).filter((line) => /^https?:\/\//i.test(line))
  return { _tag: "Sitemap", sitemap: { pages, sitemaps: [] } }
}
