/**
 * The crawls area as the composition root uses it: its programs (over the knowledge area's sources), its API
 * group, its crawl workers, and the pipeline's `CrawlReport` port it serves.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { queueWorker } from "../Background.js"
import { AppConfig, defaultWorkspaceShare } from "../Config.js"
import { CrawlReport } from "../knowledge/CrawlReport.js"
import { now } from "../Time.js"
import { CRAWL_MAX_ATTEMPTS, CrawlJob } from "./CrawlJob.js"
import { Crawls } from "./Crawls.js"
import { CrawlSchedule } from "./CrawlSchedule.js"
import { CrawlsRepo } from "./CrawlsRepo.js"
import { CrawlsHttp } from "./Http.js"
import { CRAWL_QUEUE, CRAWL_SCHEDULE_QUEUE } from "./Queues.js"

export const Live = Layer.mergeAll(Crawls.Default, CrawlJob.Default, CrawlSchedule.Default)

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = CrawlsHttp
export const ApiServices = [Authentication, IdGenerator, Crawls] as const

/** A crawl's kept page settled: the crawl counts it, in the pipeline's transaction. */
export const CrawlReportLive = Layer.effect(
  CrawlReport,
  Effect.map(CrawlsRepo, (repo) => ({
    settled: (crawlId: string, indexed: boolean) => Effect.flatMap(now, (at) => repo.settled(crawlId, indexed, at))
  }))
).pipe(Layer.provide(CrawlsRepo.Default))

/**
 * Crawls of different sites side by side, `crawlConcurrency` at once; a site's crawls one at a time (the job's
 * key is its origin), so a crawl never sends a site two requests at once and no crawl holds every slot while
 * other sites wait, as long as more than one is allowed.
 */
export const crawlConcurrency = 2

export const Workers = Layer.unwrapEffect(
  Effect.gen(function* () {
    const job = yield* CrawlJob
    const schedule = yield* CrawlSchedule
    const config = yield* AppConfig
    return Layer.merge(
      queueWorker({
        queue: CRAWL_QUEUE,
        concurrency: crawlConcurrency,
        // a workspace's crawls of slow sites hold its share, not every slot
        perGroup: config.crawlWorkspaceShare ?? defaultWorkspaceShare(crawlConcurrency),
        pollMillis: config.ingest.pollMillis,
        maxAttempts: CRAWL_MAX_ATTEMPTS,
        onGiveUp: job.giveUp,
        handle: job.handle
      }),
      // scheduled runs: each timer starts its crawl's run and sets the next one
      queueWorker({ queue: CRAWL_SCHEDULE_QUEUE, concurrency: 1, pollMillis: config.ingest.pollMillis, handle: schedule.due })
    )
  })
)
