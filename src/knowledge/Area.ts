/**
 * The knowledge area as the composition root uses it: its programs (the pipeline over the `SourceOwner` port,
 * which the training area serves), its API group, its ingestion workers, and the Q&A area's `SourceTexts` port.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Authentication } from "../../schema/Auth.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import * as JobQueue from "../../layers/JobQueue.js"
import { background, queueWorker } from "../Background.js"
import { AppConfig, defaultWorkspaceShare } from "../Config.js"
import { SourceTexts } from "../qa/SourceTexts.js"
import { Embeddings } from "./Embeddings.js"
import { Freshness, REFRESH_TIMER_QUEUE } from "./Freshness.js"
import { KnowledgeHttp } from "./Http.js"
import { INGEST_QUEUE, Knowledge } from "./Knowledge.js"
import { KnowledgeRepo } from "./KnowledgeRepo.js"
import { JOB_MAX_ATTEMPTS, Pipeline } from "./Pipeline.js"
import { Reindex, REINDEX_QUEUE } from "./Reindex.js"
import { Retrieval } from "./Retrieval.js"
import { KnowledgeSearch } from "./Search.js"
import { VectorIndex } from "./VectorIndex.js"
import * as WordStatistics from "./WordStatistics.js"
import { supervise } from "../../layers/Supervise.js"

export const Live = Layer.mergeAll(
  Knowledge.Default,
  Freshness.Default,
  KnowledgeSearch.Default,
  Pipeline.Default,
  Retrieval.Default,
  VectorIndex.Default,
  Embeddings.Default,
  Reindex.Default
)

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = KnowledgeHttp
export const ApiServices = [Authentication, IdGenerator, Knowledge, KnowledgeSearch, Freshness] as const

/** The Q&A area reads indexed texts through its own port; the knowledge repository serves it. */
export const SourceTextsLive = Layer.effect(
  SourceTexts,
  Effect.map(KnowledgeRepo, (repo) => ({ indexedTexts: repo.indexedTexts }))
).pipe(Layer.provide(KnowledgeRepo.Default))

/**
 * One source at a time per agent (the job key), up to `ingest.concurrency` agents at once, at most the workspace's
 * share of them for one workspace (the job's group).
 */
const IngestWorkers = Layer.unwrapEffect(
  Effect.gen(function* () {
    const pipeline = yield* Pipeline
    const freshness = yield* Freshness
    const config = yield* AppConfig
    return queueWorker({
      queue: INGEST_QUEUE,
      concurrency: config.ingest.concurrency,
      // one workspace's agents of slow pages hold its share of the slots, not all of them
      perGroup: config.ingest.workspaceShare ?? defaultWorkspaceShare(config.ingest.concurrency),
      leaseMillis: config.ingest.leaseMillis,
      pollMillis: config.ingest.pollMillis,
      // processing that dies shows on the source while it waits, and fails it (`internal_error`) at the last
      maxAttempts: JOB_MAX_ATTEMPTS,
      onRetry: pipeline.retrying,
      // a refresh's sources go back to idle; a new source fails
      onGiveUp: (job: JobQueue.Job, reason: string, how: JobQueue.GiveUpHow) =>
        Option.getOrElse(freshness.refreshGivenUp(job, reason), () => pipeline.giveUp(job, reason, how)),
      // a job whose source ended (or is gone) needs only its settle: the next claim's statement carries it
      finish: JobQueue.settleByNextClaim,
      // where the store speaks SQL, that claim also starts each source it takes (`ingest_jobs_claim`)
      claimCall: pipeline.claimAndStart,
      handBack: pipeline.handBack,
      // a source's refresh, or a new source's processing
      handle: (job: JobQueue.Job) =>
        Effect.map(
          Option.getOrElse(freshness.refreshOf(job), () => pipeline.handle(job)),
          (outcome) => (outcome._tag === "Done" ? JobQueue.Outcome.finish(null) : outcome)
        )
    })
  })
)

/**
 * Re-embedding into the configured provider's space (`Embeddings.ts`): its queue is that space's, so only
 * processes configured alike take it; one job at a time.
 */
const ReembedWorker = Layer.unwrapEffect(
  Effect.gen(function* () {
    const embeddings = yield* Embeddings
    const config = yield* AppConfig
    return queueWorker({
      queue: embeddings.queue,
      concurrency: 1,
      pollMillis: config.ingest.pollMillis,
      onRetry: embeddings.retrying,
      onGiveUp: embeddings.giveUp,
      handle: embeddings.handle
    })
  })
)

/**
 * Freshness (`Freshness.ts`): the gone pages' grace timers, and the sweep that starts the agents' scheduled refresh
 * rounds on the Clock.
 */
const FreshnessWorkers = Layer.unwrapEffect(
  Effect.gen(function* () {
    const freshness = yield* Freshness
    const config = yield* AppConfig
    return Layer.merge(
      queueWorker({ queue: REFRESH_TIMER_QUEUE, concurrency: 1, pollMillis: config.ingest.pollMillis, handle: freshness.timerDue }),
      background(supervise("refresh-schedules", freshness.schedules))
    )
  })
)

/** Re-indexing the text search of rows written before languages were kept (`Reindex.ts`): one job at a time. */
const ReindexWorker = Layer.unwrapEffect(
  Effect.gen(function* () {
    const reindex = yield* Reindex
    const config = yield* AppConfig
    return queueWorker({
      queue: REINDEX_QUEUE,
      concurrency: 1,
      pollMillis: config.ingest.pollMillis,
      onRetry: reindex.retrying,
      onGiveUp: reindex.giveUp,
      handle: reindex.handle
    })
  })
)

export const Workers = Layer.mergeAll(IngestWorkers, ReembedWorker, ReindexWorker, FreshnessWorkers, WordStatistics.Workers)

/**
 * At start, after the migrations: the stored vectors' space against the configured provider's (`Embeddings.ts`),
 * and the text-search re-indexing a migration left queued (`Reindex.ts`).
 */
export const checkEmbeddings = Effect.zipRight(
  Effect.flatMap(Embeddings, (embeddings) => embeddings.check),
  Effect.flatMap(Reindex, (reindex) => reindex.check)
)
