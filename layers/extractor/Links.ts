import { parseHTML } from "linkedom"

/**
 * What a crawl needs of an HTML page besides its text: the addresses it links
 * to, resolved against the page's `<base href>` (else its own address), its
 * `<link rel="canonical">`, and whether its robots meta tag (`nofollow`,
 * `noindex`, for every robot or for ours) asks not to follow or keep it.
 * Read in the decoder process, on the DOM the text is read from.
 */

export interface PageLinks {
  /** Absolute http(s) addresses of `<a href>` and `<area href>`, in document order, each once; none when `nofollow`. */
  readonly links: ReadonlyArray<string>
  /** The canonical address the page names, absolute; undefined when it names none (or none readable). */
  readonly canonical: string | undefined
  readonly noindex: boolean
  readonly nofollow: boolean
}

/** At most this many links are read of one page: past it, a page is a link farm, not a guide to the site. */
export const maxLinksPerPage = 20_000

const resolve = (href: string | null, base: string): string | undefined => {
  if (href === null) return undefined
  try {
    const url = new URL(href.trim(), base)
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined
  } catch {
    return undefined
  }
}

/** `document`: the page's DOM (linkedom); `pageUrl`: the address that answered, after redirects; `robot`: our token. */
export const pageLinks = (document: Document, pageUrl: string, robot: string): PageLinks => {
  const base = resolve(document.querySelector("base[href]")?.getAttribute("href") ?? null, pageUrl) ?? pageUrl
  const directives = Array.from(document.querySelectorAll("meta[name]"))
    .filter((meta) => {
      const name = (meta.getAttribute("name") ?? "").toLowerCase()
      return name === "robots" || name === robot.toLowerCase()
    })
    .flatMap((meta) => (meta.getAttribute("content") ?? "").toLowerCase().split(/[\s,]+/))
  const noindex = directives.includes("noindex") || directives.includes("none")
  const nofollow = directives.includes("nofollow") || directives.includes("none")
  const canonicalLink = Array.from(document.querySelectorAll("link[rel][href]")).find((link) =>
    (link.getAttribute("rel") ?? "").toLowerCase().split(/\s+/).includes("canonical")
  )
  const canonical = canonicalLink === undefined ? undefined : resolve(canonicalLink.getAttribute("href"), base)
  const links: Array<string> = []
  if (!nofollow) {
    const seen = new Set<string>()
    for (const anchor of Array.from(document.querySelectorAll("a[href], area[href]"))) {
      if (links.length >= maxLinksPerPage) break
      if ((anchor.getAttribute("rel") ?? "").toLowerCase().split(/\s+/).includes("nofollow")) continue
      const url = resolve(anchor.getAttribute("href"), base)
      if (url === undefined || seen.has(url)) continue
      seen.add(url)
      links.push(url)
    }
  }
  return { links, canonical, noindex, nofollow }
}

/** An HTML page's bytes (UTF-8, as the pipeline reads pages) to its links. */
export const readLinks = (bytes: Uint8Array, pageUrl: string, robot: string): PageLinks => {
  const html = new TextDecoder("utf-8").decode(bytes)
  return pageLinks(parseHTML(html).document, pageUrl, robot)
}
