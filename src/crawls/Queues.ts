/** The crawls area's queues, and the timer of a crawl's next scheduled run. */
import * as Effect from "effect/Effect"
import type { CrawlId } from "../../schema/Ids.js"
import type { JobQueueShape } from "../../layers/JobQueue.js"

/** The queue of crawl jobs; the key is the site's origin, so a site is crawled by one crawl at a time. */
export const CRAWL_QUEUE = "crawl"

/** The queue of scheduled runs' timers: each, when due, starts its crawl's run (a queue of its own, unkeyed). */
export const CRAWL_SCHEDULE_QUEUE = "crawl-schedule"

/**
 * The timer of a crawl's run due at `at`, in the caller's transaction. A run starts only while the crawl's
 * `next_run_at` is still `at`: a schedule set anew since leaves the timers set before without effect.
 */
export const scheduleRun = (queue: JobQueueShape, crawlId: CrawlId, at: Date) =>
  Effect.asVoid(queue.enqueue({ queue: CRAWL_SCHEDULE_QUEUE, payload: { crawlId, at: at.toISOString() }, runAt: at }))
