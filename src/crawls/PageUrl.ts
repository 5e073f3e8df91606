/**
 * A page's address as a crawl compares them: one spelling for each page, so
 * that no page is fetched twice. The fragment goes; tracking parameters
 * (`utm_*`, click ids) go; the rest of the query is sorted; the scheme and
 * host are lowercased and a default port dropped (as `URL` does).
 */

/** Query parameters that say how a visitor came, never which page they see. */
const tracking = /^(utm_[a-z_]+|gclid|dclid|gbraid|wbraid|fbclid|msclkid|yclid|mc_cid|mc_eid|_ga|_gl|igshid|ref_src)$/i

/** `href` resolved against `base` and normalised; undefined when it is not an http(s) address. */
export const normalise = (href: string, base?: string): string | undefined => {
  let url: URL
  try {
    url = base === undefined ? new URL(href) : new URL(href, base)
  } catch {
    return undefined
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
  url.hash = ""
  url.username = ""
  url.password = ""
  const kept = [...url.searchParams.entries()].filter(([name]) => !tracking.test(name))
  kept.sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1))
  url.search = new URLSearchParams(kept).toString()
  return url.href
}

/** What a crawl stays within: the root's origin, and its path prefix when asked. */
export interface Scope {
  readonly origin: string
  /** A path prefix every page's path starts with ("/" for the whole origin). */
  readonly pathPrefix: string
}

export const scopeOf = (root: string, keepToPath: boolean): Scope => {
  const url = new URL(root)
  // the prefix is the root's directory: `/docs/start` keeps to `/docs/`
  const directory = url.pathname.endsWith("/") ? url.pathname : url.pathname.slice(0, url.pathname.lastIndexOf("/") + 1)
  return { origin: url.origin, pathPrefix: keepToPath ? directory : "/" }
}

export const inScope = (scope: Scope, url: string): boolean => {
  const parsed = new URL(url)
  return parsed.origin === scope.origin && parsed.pathname.startsWith(scope.pathPrefix)
}
