/**
 * A crawl's walk over one site: robots.txt first (an unreadable one, a 5xx or
 * no answer, forbids the crawl, as RFC 9309 asks), then the sitemaps it names
 * (or `/sitemap.xml`), their indexes and gzip-encoded children, then pages,
 * each read once, its links offered to the frontier (`Frontier.ts`). One
 * request at a time, `Crawl-delay` apart (on the Clock). What it finds goes to
 * the caller's `Visitor` as it goes: each page to keep, with the bytes read,
 * so that it is never fetched twice; each address skipped, with its reason.
 * Keeping pages (as sources) and recording progress are the caller's. What a
 * site serves is bounded: robots.txt's size and rules, the sitemaps read and
 * their bytes, the addresses met; a crawl past one of these stops discovering
 * and says which (`Completed.capped`). Sitemaps are read in a decoder process.
 */
import * as Effect from "effect/Effect"
import { Extractor } from "../../layers/Extractor.js"
import { Fetcher, type GetResponse } from "../../layers/Fetcher.js"
import { AppConfig } from "../Config.js"
import {
  maxAddressesMet,
  maxCrawlDelaySeconds,
  maxRobotsBytes,
  maxRobotsRules,
  maxSitemapBytes,
  maxSitemapBytesPerCrawl,
  maxSitemaps
} from "../../schema/Crawls.js"
import { type Decision, makeFrontier, type SkipReason } from "./Frontier.js"
import { inScope, normalise, scopeOf } from "./PageUrl.js"
import { allowAll, parseRobots, type Robots } from "./Robots.js"

/** Our product token in robots.txt, and the start of our `User-Agent`. */
export const robotToken = "AssistantPlatformBot"
export const crawlerUserAgent = `${robotToken}/1.0 (+https://github.com/assistant-platform; knowledge crawler)`

const sitemapBytesCapped = `the site's sitemaps hold more than ${maxSitemapBytesPerCrawl / (1024 * 1024)} MB, the most a crawl reads: the rest were not read`

export interface CrawlRequest {
  /** Where the crawl starts: a page, whose origin it keeps to. */
  readonly root: string
  /** Keep to the root's directory (`/docs/` for `/docs/start`), not the whole origin. */
  readonly keepToPath: boolean
  /** A sitemap to read besides those robots.txt names. */
  readonly sitemap?: string | undefined
  /** Pages read at most, kept or not (sitemaps and robots.txt aside): addresses met past it are `over_limit`. */
  readonly limit: number
  /** A live environment's crawl: plain `http:` pages are refused. */
  readonly httpsOnly: boolean
}

/** A page the crawl keeps: where it answered, and what it answered. */
export interface CrawledPage {
  readonly url: string
  /** The address asked for: `url` unless a redirect led there. */
  readonly requested: string
  readonly contentType: string
  readonly body: Uint8Array
  /** Its validators, for a later refresh's conditional GET. */
  readonly etag?: string | undefined
  readonly lastModified?: string | undefined
}

export type CrawlSkip = SkipReason | "noindex"

/**
 * What the walk tells its caller as it goes. `queued`: the addresses waiting to be read after this one. A
 * failure of the caller's (the crawl canceled, say) stops the walk with it.
 */
export interface Visitor<E, R> {
  readonly page: (page: CrawledPage, queued: number) => Effect.Effect<void, E, R>
  readonly skipped: (url: string, reason: CrawlSkip) => Effect.Effect<void, E, R>
  /** A page that could not be read (a failed fetch, an error status), with why. */
  readonly failed: (url: string, message: string, queued: number) => Effect.Effect<void, E, R>
}

export type CrawlOutcome =
  /** `capped`: the bound the crawl reached, after which it stopped discovering, as a person reads it; none if none. */
  | { readonly _tag: "Completed"; readonly kept: number; readonly capped?: string | undefined }
  | { readonly _tag: "Refused"; readonly message: string }

const describe = (result: GetResponse | { readonly _tag: "Failure"; readonly message: string }) =>
  result._tag === "Failure" ? result.message : `the page answered ${result.status}`

const isPage = (contentType: string) => contentType === "text/html" || contentType === "application/xhtml+xml"
/** Documents a crawl keeps besides HTML: the pipeline reads them as it reads an uploaded file. */
const isDocument = (contentType: string) => contentType === "application/pdf" || contentType === "text/plain"

export const crawl = <E, R>(request: CrawlRequest, visitor: Visitor<E, R>) =>
  Effect.gen(function* () {
    const fetcher = yield* Fetcher
    const extractor = yield* Extractor
    const config = yield* AppConfig
    const scope = scopeOf(request.root, request.keepToPath)
    const get = (url: string, maxBytes: number) =>
      fetcher.get({
        url,
        headers: { "user-agent": crawlerUserAgent },
        timeoutMillis: config.ingest.fetchTimeoutMillis,
        maxBytes,
        allowPrivate: config.allowPrivateUrls,
        httpsOnly: request.httpsOnly,
        keepOrigin: true
      })

    const robotsAnswer = yield* get(`${scope.origin}/robots.txt`, maxRobotsBytes)
    let robots: Robots
    if (robotsAnswer._tag === "Response" && robotsAnswer.status >= 200 && robotsAnswer.status < 300) {
      robots = parseRobots(new TextDecoder().decode(robotsAnswer.body), robotToken, scope.origin)
    } else if (robotsAnswer._tag === "Response" && robotsAnswer.status >= 400 && robotsAnswer.status < 500) {
      robots = allowAll
    } else {
      return { _tag: "Refused", message: `robots.txt could not be read (${describe(robotsAnswer)}): the site is not crawled` } satisfies CrawlOutcome
    }
    if (robots.tooManyRules) {
      const message = `robots.txt has more than ${maxRobotsRules.toLocaleString("en-US")} rules for this robot, more than a crawl obeys: the site is not crawled`
      return { _tag: "Refused", message } satisfies CrawlOutcome
    }
    const delaySeconds = Math.min(robots.crawlDelaySeconds ?? 0, maxCrawlDelaySeconds)
    // one request at a time, each the site's delay after the one before (robots.txt's the first)
    const polite = <A, E, R2>(self: Effect.Effect<A, E, R2>) =>
      delaySeconds === 0 ? self : Effect.zipRight(Effect.sleep(`${delaySeconds} seconds`), self)

    const frontier = makeFrontier(scope, robots, request.limit)
    const decided = (decision: Decision | undefined) =>
      decision?._tag === "Skipped" ? visitor.skipped(decision.url, decision.reason) : Effect.void
    yield* decided(frontier.offer(request.root))

    // the first bound the crawl reached, for the person reading it
    let capped: string | undefined
    const cap = (message: string) => {
      capped ??= message
    }

    const frontierFull = () => {
      if (frontier.full()) {
        cap(`the crawl met ${maxAddressesMet.toLocaleString("en-US")} addresses, the most one crawl meets: addresses met after were not followed`)
      }
    }

    // sitemaps: of this origin only (the protocol's rule), each read once, at most `maxSitemaps` and
    // `maxSitemapBytesPerCrawl` in all, read in a decoder process (50 MB is more than the main thread may spend)
    const sitemaps = [...robots.sitemaps, request.sitemap ?? `${scope.origin}/sitemap.xml`]
    const readSitemaps = new Set<string>()
    let sitemapBytesRead = 0
    while (sitemaps.length > 0 && capped === undefined) {
      const url = normalise(sitemaps.shift()!)
      if (url === undefined || readSitemaps.has(url) || new URL(url).origin !== scope.origin) continue
      if (readSitemaps.size >= maxSitemaps) {
        cap(`the site names more than ${maxSitemaps} sitemaps, the most a crawl reads: the others were not read`)
        break
      }
      const budget = maxSitemapBytesPerCrawl - sitemapBytesRead
      if (budget <= 0) {
        cap(sitemapBytesCapped)
        break
      }
      readSitemaps.add(url)
      const answer = yield* polite(get(url, maxSitemapBytes))
      if (answer._tag !== "Response" || answer.status < 200 || answer.status >= 300) continue
      const parsed = yield* Effect.either(extractor.sitemap(answer.body, { maxBytes: Math.min(budget, maxSitemapBytes), maxEntries: maxAddressesMet }))
      // a sitemap that cannot be read (or breaks its reader) is one source of addresses less, not the crawl's end
      if (parsed._tag === "Left") continue
      if (parsed.right._tag === "Unreadable") {
        if (parsed.right.tooLarge && budget < maxSitemapBytes) {
          cap(sitemapBytesCapped)
        }
        continue
      }
      const sitemap = parsed.right.sitemap
      sitemapBytesRead += sitemap.bytes
      sitemaps.push(...sitemap.sitemaps)
      for (const page of sitemap.pages) yield* decided(frontier.offer(page))
      frontierFull()
      if (sitemap.truncated) cap(`a sitemap lists more than ${maxAddressesMet.toLocaleString("en-US")} addresses, the most a crawl meets: the rest were not read`)
    }

    let kept = 0
    for (let url = frontier.next(); url !== undefined; url = frontier.next()) {
      const answer = yield* polite(get(url, config.ingest.maxPageBytes))
      if (answer._tag === "Failure" && answer.reason === "off_origin") {
        yield* visitor.skipped(url, "off_origin")
        continue
      }
      if (answer._tag === "Failure" || answer.status < 200 || answer.status >= 300) {
        yield* visitor.failed(url, describe(answer), frontier.queued())
        continue
      }
      // a redirect within the origin: the page is where it answered, which must be in the crawl's scope and new
      const at = normalise(answer.url) ?? url
      if (at !== url) {
        if (!inScope(scope, at)) {
          yield* visitor.skipped(url, "off_origin")
          continue
        }
        if (!frontier.redirected(at)) {
          yield* visitor.skipped(url, "duplicate")
          continue
        }
      }
      if (!isPage(answer.contentType)) {
        if (isDocument(answer.contentType)) {
          kept++
          yield* visitor.page(
            { url: at, requested: url, contentType: answer.contentType, body: answer.body, etag: answer.etag, lastModified: answer.lastModified },
            frontier.queued()
          )
        } else {
          yield* visitor.skipped(url, "not_html")
        }
        continue
      }
      const read = yield* Effect.either(extractor.links({ bytes: answer.body, url: at, robot: robotToken }))
      if (read._tag === "Left") {
        yield* visitor.failed(url, read.left.message, frontier.queued())
        continue
      }
      const { links, canonical, noindex } = read.right
      for (const link of links) yield* decided(frontier.offer(link, at))
      frontierFull()
      if (noindex) {
        yield* visitor.skipped(url, "noindex")
        continue
      }
      // a page naming another as its canonical one, met already: the same page twice
      const named = canonical === undefined ? undefined : normalise(canonical)
      if (named !== undefined && named !== at && inScope(scope, named) && !frontier.alias(named)) {
        yield* visitor.skipped(url, "duplicate")
        continue
      }
      kept++
      yield* visitor.page(
            { url: at, requested: url, contentType: answer.contentType, body: answer.body, etag: answer.etag, lastModified: answer.lastModified },
            frontier.queued()
          )
    }
    frontierFull()
    return { _tag: "Completed", kept, capped } satisfies CrawlOutcome
  })
