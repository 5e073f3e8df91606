/**
 * The port through which the pipeline tells the crawls area that a page one of its crawls kept has settled, in
 * the transaction that settles it, so a crawl's counts of indexed and failed pages never drift from its sources.
 * The knowledge area names it; the crawls area serves it (its `Area.ts`).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

export interface CrawlReportShape {
  /** Inside the transaction that marked the crawl's source indexed (`indexed`) or failed. */
  readonly settled: (crawlId: string, indexed: boolean) => Effect.Effect<void>
}

export class CrawlReport extends Context.Tag("Knowledge/CrawlReport")<CrawlReport, CrawlReportShape>() {}
