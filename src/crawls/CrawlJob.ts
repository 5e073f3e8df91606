/**
 * A crawl's job: the walk (`Crawler.ts`) with a visitor that records what it meets. Each page kept becomes a
 * `url` source of the agent, carrying the bytes read, with its ingestion job, in the transaction that records
 * the page and counts it; skipped addresses are recorded in batches at each page read. An address recorded
 * already (by a run before a restart) is neither kept nor counted again. A cancel shows in the counters' write
 * and stops the walk there. The end, with its event, is one transaction.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { CrawlErrorCode, SkipReason } from "../../schema/Crawls.js"
import { CrawlId, SourceId } from "../../schema/Ids.js"
import { tenantOfRow } from "../../schema/Tenant.js"
import { type GiveUpHow, type Job, Outcome, withAfterCommit } from "../../layers/JobQueue.js"
import * as Sql from "../db/Sql.js"
import { Outbox } from "../events/Outbox.js"
import { Freshness } from "../knowledge/Freshness.js"
import { Knowledge } from "../knowledge/Knowledge.js"
import { mint } from "../Mint.js"
import { now } from "../Time.js"
import { type CrawledPage, type CrawlSkip, crawl } from "./Crawler.js"
import { type CountDelta, type CrawlRow, CrawlsRepo, type MetAddress, toCrawl } from "./CrawlsRepo.js"

/** Attempts of a crawl's job when the walk itself dies (a bug, the database away). */
export const CRAWL_MAX_ATTEMPTS = 3

/** What a person reads when the crawl could not go on: never the cause itself, which is logged. */
export const crawlInternalMessage = "the crawl could not go on: an internal error occurred"

/** Skipped addresses held before they are written, when no page read comes to carry them. */
const skipBatch = 1_000

/** The crawl was canceled (or is gone): the walk stops where it is. */
class Stopped extends Data.TaggedError("Stopped") {}

const Payload = Schema.Struct({ crawlId: CrawlId })
const decodePayload = Schema.decodeUnknownEither(Payload)


export class CrawlJob extends Effect.Service<CrawlJob>()("Crawls/CrawlJob", {
  effect: Effect.gen(function* () {
    const transaction = Sql.transaction(yield* SqlClient.SqlClient)
    const repo = yield* CrawlsRepo
    const knowledge = yield* Knowledge
    const freshness = yield* Freshness
    const outbox = yield* Outbox

    /**
     * The crawl's end and its event, unless it ended meanwhile (canceled). `discovery_capped` completes it (with
     * what it left out); any other error fails it.
     */
    const end = (row: CrawlRow, error: { readonly code: CrawlErrorCode; readonly message: string } | null) =>
      transaction(
        Effect.gen(function* () {
          const completed = error === null || error.code === "discovery_capped"
          const ended = yield* repo.finish(row.id, { status: completed ? "completed" : "failed", error }, yield* now)
          if (Option.isNone(ended)) return
          const crawl = toCrawl(ended.value)
          yield* outbox.emit(
            completed || error === null
              ? { ...tenantOfRow(row), type: "crawl.completed", data: { crawl } }
              : { ...tenantOfRow(row), type: "crawl.failed", data: { crawl, error } }
          )
        })
      )

    const walk = (row: CrawlRow) =>
      Effect.gen(function* () {
        const tenant = tenantOfRow(row)
        let pending: Array<MetAddress> = []
        // the addresses waiting, as the last page read left them
        let waiting = 0

        /**
         * Records what waits and one page read (if any), counts what was new, and sees a cancel. A page read is
         * kept as a new source (`keep`), or refreshes the agent's source of that address (`refresh`).
         */
        const write = (
          page: MetAddress | undefined,
          queued: number,
          keep?: CrawledPage,
          refresh?: { readonly sourceId: SourceId; readonly page: CrawledPage }
        ) =>
          transaction(
            Effect.gen(function* () {
              waiting = queued
              const at = yield* now
              const met = page === undefined ? pending : [...pending, page]
              pending = []
              const fresh = new Set((yield* repo.record(row.id, met, at)).map((r) => r.url))
              const delta: { kept: number; unreadable: number; skipped: Partial<Record<SkipReason, number>>; queued: number } = {
                kept: 0,
                unreadable: 0,
                skipped: {},
                queued
              }
              for (const m of met) {
                if (!fresh.has(m.url)) continue
                if (m.outcome === "kept") delta.kept++
                else if (m.outcome === "unreadable") delta.unreadable++
                else delta.skipped[m.reason as SkipReason] = (delta.skipped[m.reason as SkipReason] ?? 0) + 1
              }
              if (keep !== undefined && page !== undefined && page.sourceId !== null && fresh.has(page.url)) {
                yield* knowledge.insertWithJobs(tenant, row.agent_id, [{
                  id: SourceId.make(page.sourceId),
                  agentId: row.agent_id,
                  type: "url",
                  title: keep.url,
                  sourceRef: keep.url,
                  sizeBytes: keep.body.length,
                  content: null,
                  at,
                  crawl: { crawlId: row.id, contentType: keep.contentType, body: keep.body, etag: keep.etag, lastModified: keep.lastModified }
                }])
              }
              if (refresh !== undefined && page !== undefined && fresh.has(page.url)) {
                yield* freshness.refreshFromPage(tenant, refresh.sourceId, refresh.page)
              }
              const status = yield* repo.count(row.id, delta satisfies CountDelta, at)
              if (Option.isNone(status) || status.value !== "running") return yield* new Stopped()
            })
          ).pipe(withAfterCommit)

        const outcome = yield* crawl(
          { root: row.url, keepToPath: row.keep_to_path, sitemap: row.sitemap_url ?? undefined, limit: row.page_limit, httpsOnly: row.environment === "live" },
          {
            // a page the agent already has is refreshed from what was read, never kept twice
            page: (page, queued) =>
              Effect.flatMap(
                // a page reached by a redirect is the agent's under either address
                freshness.knownPage(tenant, row.agent_id, page.requested === page.url ? [page.url] : [page.url, page.requested]),
                Option.match({
                  onNone: () =>
                    Effect.flatMap(mint(SourceId, "src"), (sourceId) =>
                      write({ url: page.url, outcome: "kept", reason: null, sourceId }, queued, page)
                    ),
                  onSome: (sourceId) =>
                    write({ url: page.url, outcome: "skipped", reason: "known", sourceId: null }, queued, undefined, { sourceId, page })
                })
              ),
            failed: (url, message, queued) => write({ url, outcome: "unreadable", reason: message, sourceId: null }, queued),
            skipped: (url: string, reason: CrawlSkip) =>
              Effect.suspend(() => {
                pending.push({ url, outcome: "skipped", reason, sourceId: null })
                return pending.length >= skipBatch ? write(undefined, waiting) : Effect.void
              })
          }
        )
        if (outcome._tag === "Refused") return yield* end(row, { code: "robots_unreadable", message: outcome.message })
        yield* write(undefined, 0)
        // a crawl that reached a bound completes, and says which, so a person knows the site was not read whole
        yield* end(row, outcome.capped === undefined ? null : { code: "discovery_capped", message: outcome.capped })
      }).pipe(Effect.catchTag("Stopped", () => Effect.void))

    const handle = (job: Job) =>
      Effect.gen(function* () {
        const payload = decodePayload(job.payload)
        if (Either.isLeft(payload)) return Outcome.failed("the job names no crawl")
        const started = yield* repo.start(payload.right.crawlId, yield* now)
        if (Option.isSome(started)) yield* walk(started.value)
        return Outcome.done
      })

    /** The queue's `onGiveUp`: the walk died at its last attempt, or its attempts stopped their process. */
    const giveUp = (job: Job, _reason: string, _how: GiveUpHow): Effect.Effect<void> =>
      Effect.gen(function* () {
        const payload = decodePayload(job.payload)
        if (Either.isLeft(payload)) return
        const row = yield* repo.byId(payload.right.crawlId)
        if (Option.isSome(row)) yield* end(row.value, { code: "internal_error", message: crawlInternalMessage })
      })

    return { handle, giveUp } as const
  }),
  dependencies: [CrawlsRepo.Default]
}) {}
