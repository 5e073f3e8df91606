/**
 * A crawl's frontier: every address it meets, in one spelling (`PageUrl`), is
 * either queued to be read, once, or skipped with the reason a person is shown
 * (off the site, disallowed by robots.txt, already met, over the page limit,
 * not a page). Pure: the crawl's job feeds it what it discovers and keeps its
 * decisions; reading pages is the job's. It remembers a bounded number of
 * addresses: once full, it stops discovering (and says so).
 */
import { maxAddressesMet } from "../../schema/Crawls.js"
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
   * A page read names another address as its own (its canonical link): whether that address is new. When it is
   * not, the page is a `duplicate` of one met already, and the job skips it with that reason.
   */
  readonly alias: (url: string) => boolean
  /**
   * A page read answered from another address (a redirect's target): whether that page is yet to be read, a new
   * address or one queued and not read yet. Queued, it leaves the queue: this read was its read, so the page is
   * seen under both addresses and a link naming either is not fetched again. Else it is a `duplicate`.
   */
  readonly redirected: (url: string) => boolean
  /** The next queued address, in the order met; undefined when none waits. */
  readonly next: () => string | undefined
  readonly queued: () => number
  /** The frontier met `maxAddresses` and stopped discovering: addresses met since were neither queued nor recorded. */
  readonly full: () => boolean
}

/**
 * A site can link as many addresses as it likes (a page of 20,000 links on every page): past `maxAddresses` the
 * frontier stops discovering, and the crawl reads what it queued and says why.
 * `limit`: the pages a crawl may queue (the request's, capped by the plan); addresses met past it are skipped
 * `over_limit`, each once.
 */
export const makeFrontier = (scope: Scope, robots: Robots, limit: number, maxAddresses = maxAddressesMet): Frontier => {
  const met = new Set<string>()
  const waiting: Array<string> = []
  // queued and not read yet; an address a redirect reached leaves it, and `next` passes over it
  const unread = new Set<string>()
  let taken = 0
  let accepted = 0
  let full = false
  const offer = (href: string, from?: string): Decision | undefined => {
    const url = normalise(href, from)
    // not an http(s) address (`mailto:`, `javascript:`): nothing a crawl could read, nothing worth reporting
    if (url === undefined || met.has(url)) return undefined
    if (met.size >= maxAddresses) {
      full = true
      return undefined
    }
    met.add(url)
    if (!inScope(scope, url)) return { _tag: "Skipped", url, reason: "off_origin" }
    if (notPage.test(new URL(url).pathname)) return { _tag: "Skipped", url, reason: "not_html" }
    if (!isAllowed(robots, url)) return { _tag: "Skipped", url, reason: "disallowed" }
    if (accepted >= limit) return { _tag: "Skipped", url, reason: "over_limit" }
    accepted++
    waiting.push(url)
    unread.add(url)
    return { _tag: "Queued", url }
  }
  // a page read is one of the pages read (`limit` counts them), bounded: it is remembered even when full
  const alias = (href: string): boolean => {
    const url = normalise(href)
    if (url === undefined || met.has(url)) return false
    met.add(url)
    return true
  }
  const next = (): string | undefined => {
    while (taken < waiting.length) {
      const url = waiting[taken++]!
      if (unread.delete(url)) return url
    }
    return undefined
  }
  return {
    offer,
    alias,
    redirected: (href) => {
      const url = normalise(href)
      return url !== undefined && (unread.delete(url) || alias(url))
    },
    next,
    queued: () => unread.size,
    full: () => full
  }
}
