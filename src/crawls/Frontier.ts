/**
 * A crawl's frontier: every address it meets, in one spelling (`PageUrl`), is
 * either queued to be read, once, or skipped with the reason a person is shown
 * (off the site, disallowed by robots.txt, already met, over the page limit,
 * not a page). Pure: the crawl's job feeds it what it discovers and keeps its
 * decisions; reading pages is the job's.
 */
import { inScope, normalise, type Scope } from "./PageUrl.js"
import { isAllowed, type Robots } from "./Robots.js"

export type SkipReason = "off_origin" | "disallowed" | "duplicate" | "over_limit" | "not_html"

export type Decision =
  | { readonly _tag: "Queued"; readonly url: string }
  | { readonly _tag: "Skipped"; readonly url: string; readonly reason: SkipReason }

/** Path endings of what is never a page: images, media, archives, fonts, styles, scripts. */
const notPage =
  /\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?|mp3|wav|ogg|mp4|webm|mov|avi|zip|gz|tgz|rar|7z|tar|exe|dmg|woff2?|ttf|otf|eot|css|js|mjs|map|json|xml)$/i

export interface Frontier {
  /**
   * Decides what becomes of an address met on the site (`from`: the page or sitemap it was found in); undefined
   * when it was met before (a menu links every page to every page: that is no news) or is no web address.
   */
  readonly offer: (href: string, from?: string) => Decision | undefined
  /**
   * A page read answered as another address (a redirect's target, its canonical link): whether that address is
   * new. When it is not, the page is a `duplicate` of one met already, and the job skips it with that reason.
   */
  readonly alias: (url: string) => boolean
  /** The next queued address, in the order met; undefined when none waits. */
  readonly next: () => string | undefined
  readonly queued: () => number
}

/**
 * `limit`: the pages a crawl may queue (the request's, capped by the plan); addresses met past it are skipped
 * `over_limit`, each once.
 */
export const makeFrontier = (scope: Scope, robots: Robots, limit: number): Frontier => {
  const met = new Set<string>()
  const waiting: Array<string> = []
  let taken = 0
  let accepted = 0
  const offer = (href: string, from?: string): Decision | undefined => {
    const url = normalise(href, from)
    // not an http(s) address (`mailto:`, `javascript:`): nothing a crawl could read, nothing worth reporting
    if (url === undefined || met.has(url)) return undefined
    met.add(url)
    if (!inScope(scope, url)) return { _tag: "Skipped", url, reason: "off_origin" }
    if (notPage.test(new URL(url).pathname)) return { _tag: "Skipped", url, reason: "not_html" }
    if (!isAllowed(robots, url)) return { _tag: "Skipped", url, reason: "disallowed" }
    if (accepted >= limit) return { _tag: "Skipped", url, reason: "over_limit" }
    accepted++
    waiting.push(url)
    return { _tag: "Queued", url }
  }
  return {
    offer,
    alias: (href) => {
      const url = normalise(href)
      if (url === undefined || met.has(url)) return false
      met.add(url)
      return true
    },
    next: () => (taken < waiting.length ? waiting[taken++] : undefined),
    queued: () => waiting.length - taken
  }
}
