/**
 * Keeping `url` sources fresh. A refresh reads the page again with a conditional GET (the `ETag` and
 * `Last-Modified` it last answered with): a `304`, or a page whose text is the text indexed, re-indexes nothing.
 * A changed page is indexed again as the pipeline indexes a new one, and its passages and generated Q&A are
 * replaced in one transaction with the source's new state and `knowledge.source.updated`, so a reply sees the old
 * page or the new one, never a mix; Q&A edited by hand (now `manual`) stay. A page answering 404 or 410 is
 * `gone_since` then (`knowledge.source.gone`), and once the agent's `gone_grace_days` have passed a refresh
 * removes its knowledge (`knowledge.source.removed`); a page that comes back before is simply read again.
 *
 * A refresh is a job on the ingestion queue keyed by the agent, so it runs in turn with the agent's new sources.
 * What starts one: `POST …/knowledge/{id}/refresh`, the agent's schedule (a sweep on the Clock, waking when the
 * earliest round is due, queues its due agents' sources, a batch at a time), and a gone page's grace ending (a timer job on a queue of its own: a job
 * waiting on the ingestion queue would hold the agent's later sources behind it). Each counts against the plan's
 * refreshes a month; a page that cannot be read this time keeps its knowledge and waits for the next refresh.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type DueAgent, RefreshRounds } from "../agents/RefreshRounds.js"
import type { CallerShape } from "../../schema/Auth.js"
import { LimitReached, ResourceMissing, SourceNotRefreshable } from "../../schema/Errors.js"
import { type AgentId, SourceId } from "../../schema/Ids.js"
import { type Tenant, tenantOf, tenantOfRow } from "../../schema/Tenant.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { afterCommit, type Job, JobQueue, Outcome, withAfterCommit } from "../../layers/JobQueue.js"
import * as Sql from "../db/Sql.js"
import { KnowledgeChanged } from "../events/KnowledgeChanged.js"
import { Outbox } from "../events/Outbox.js"
import { SourceQa } from "../qa/SourceQa.js"
import { iso, now } from "../Time.js"
import { Usage } from "../usage/Usage.js"
import { ChunkDraftsRepo } from "./ChunkDraftsRepo.js"
import { INGEST_QUEUE, Knowledge } from "./Knowledge.js"
import { KnowledgeRepo, type SourceRow, toSource } from "./KnowledgeRepo.js"
import { RefreshRepo } from "./RefreshRepo.js"
import { Pipeline } from "./Pipeline.js"
import { fromFetch, fromKeptPage, type IngestFailure, SourceReader, type Validators, validatorsOf } from "./SourceReader.js"

/** The queue of gone pages' grace timers: each, when due, queues its source's refresh. */
export const REFRESH_TIMER_QUEUE = "refresh-timer"

/**
 * The longest the schedules' sweep sleeps: it wakes when the earliest round is due, and at least this often to see
 * schedules set since (by any process); a period is a day at least, so every round still starts on time.
 */
export const SWEEP_AT_MOST_EVERY_MILLIS = 60 * 60 * 1000

/** Sources a round reads per agent and sweep; the rest follow at the next sweeps. */
export const ROUND_BATCH = 500

/** Pages one refresh job of a round checks: one claim, one read and one write of the unchanged ones for them all. */
export const REFRESH_BATCH = 100

/** Agents one sweep takes on. */
const SWEEP_AGENTS = 20

const DAY_MILLIS = 24 * 60 * 60 * 1000

/** The payload of a refresh job on the ingestion queue (a new source's job has no `refresh`): one source, */
export const RefreshJob = Schema.Struct({
  sourceId: SourceId,
  refresh: Schema.Literal(true),
  /** A crawl read the page for this refresh: its bytes wait on the source. */
  read: Schema.optional(Schema.Literal(true))
})
/** or a round's batch of sources. */
export const RefreshBatchJob = Schema.Struct({
  sourceIds: Schema.Array(SourceId).pipe(Schema.maxItems(REFRESH_BATCH)),
  refresh: Schema.Literal(true)
})
const decodeRefreshJob = Schema.decodeUnknownOption(Schema.Union(RefreshJob, RefreshBatchJob))

const TimerJob = Schema.Struct({ sourceId: SourceId })
const decodeTimerJob = Schema.decodeUnknownOption(TimerJob)

export class Freshness extends Effect.Service<Freshness>()("Knowledge/Freshness", {
  effect: Effect.gen(function* () {
    const transaction = Sql.transaction(yield* SqlClient.SqlClient)
    const pipeline = yield* Pipeline
    const reader = yield* SourceReader
    const knowledge = yield* Knowledge
    const repo = yield* KnowledgeRepo
    const refreshes = yield* RefreshRepo
    const drafts = yield* ChunkDraftsRepo
    const qa = yield* SourceQa
    const rounds = yield* RefreshRounds
    const outbox = yield* Outbox
    const knowledgeChanged = yield* KnowledgeChanged
    const jobs = yield* JobQueue
    const usage = yield* Usage
    const ids = yield* IdGenerator
    // opened by a round asked for in this process: its sweep queues the round's next batches without waiting
    const wake = yield* Effect.makeLatch(false)

    const enqueueRefresh = (
      source: { readonly id: SourceId; readonly agent_id: AgentId; readonly workspace_id: string },
      read = false
    ) =>
      jobs.enqueue({
        queue: INGEST_QUEUE,
        key: source.agent_id,
        group: source.workspace_id,
        payload: { sourceId: source.id, refresh: true, ...(read ? { read: true } : {}) }
      })

    /** `POST …/knowledge/{id}/refresh`: queued (once: a refresh already queued is the one), counted against the plan. */
    const request = Effect.fn("Freshness.request")(function* (caller: CallerShape, agentId: AgentId, id: SourceId) {
      const tenant = tenantOf(caller)
      const found = yield* repo.find(tenant, agentId, id)
      if (Option.isNone(found)) return yield* new ResourceMissing({ message: `No such knowledge source: '${id}'`, param: "source_id" })
      const source = found.value
      if (source.type !== "url" || source.status !== "indexed") {
        return yield* new SourceNotRefreshable({
          message:
            source.type !== "url"
              ? `Only url sources can be refreshed; this one is of type ${source.type}.`
              : `Only an indexed source can be refreshed; this one is ${source.status}.`,
          param: "source_id"
        })
      }
      return yield* transaction(
        Effect.gen(function* () {
          const queued = yield* refreshes.queueRefresh(id, yield* now)
          if (Option.isNone(queued)) return toSource(source)
          const { cap, granted, plan } = yield* usage.reserveRefreshes(tenant, 1)
          if (granted === 0) {
            return yield* new LimitReached({ message: `The ${plan} plan allows ${cap} refreshes per month; this month's are used up.` })
          }
          yield* enqueueRefresh(queued.value)
          return toSource(queued.value)
        })
      )
    })

    /** The page read again: when its text changed, indexed anew and swapped in whole. */
    const replace = (
      source: SourceRow,
      read: Either.Either<{ readonly kind: "html" | "text" | "pdf"; readonly body: Uint8Array }, IngestFailure>,
      validators: Validators,
      at: Date
    ) =>
      Effect.gen(function* () {
        const page = yield* read
        const doc = yield* reader.readPage(source, page)
        if (yield* refreshes.unchangedText(source.id, doc.text, at, validators)) return
        const built = yield* pipeline.index(source, doc)
        const chunks = yield* Effect.forEach(built.chunks, (c) => Effect.map(ids.make("chk"), (id) => ({ id, ...c })))
        // the new chunks and text written hidden, in short steps; the old ones hidden as the new are shown, deleted after
        const draft = yield* drafts.open(source, "indexed")
        const swapped = transaction(
          Effect.gen(function* () {
            const tenant = tenantOfRow(source)
            const row = yield* refreshes.replaced(
              source.id,
              {
                ...validators,
                extracted_text: null,
                chunk_count: chunks.length,
                qa_count: built.qa.length,
                language: built.language,
                size_bytes: page.body.length,
                checked_at: at,
                changed_at: at
              },
              at
            )
            if (Option.isNone(row)) return false
            yield* drafts.publish(source.id, draft)
            yield* qa.removeOf(tenant, source.id)
            yield* qa.insert(tenant, source.agent_id, built.qa)
            yield* knowledgeChanged.changed(tenant, source.agent_id)
            yield* outbox.emit({ ...tenant, type: "knowledge.source.updated", data: { source: toSource(row.value) } })
            return true
          })
        )
        const written = Effect.zipRight(drafts.write(source, draft, chunks, built.language), drafts.writeText(source, draft, built.text ?? ""))
        const published = yield* Effect.zipRight(written, swapped).pipe(
          Effect.onError((cause) => (Cause.isInterruptedOnly(cause) ? Effect.void : Effect.ignore(drafts.discard(source.id, draft))))
        )
        if (published) yield* drafts.purge(source.id)
        else yield* drafts.discard(source.id, draft)
      }).pipe(Effect.catchTag("DraftGone", () => Effect.void))

    /** A page answering 404 or 410: gone (its grace timer set), or past its grace, its knowledge removed. */
    const gone = (source: SourceRow, at: Date) =>
      Effect.gen(function* () {
        const graceMillis = (yield* rounds.goneGraceDays(source.agent_id)) * DAY_MILLIS
        const tenant = tenantOfRow(source)
        if (source.gone_since !== null && at.getTime() >= source.gone_since.getTime() + graceMillis) {
          return yield* transaction(
            Effect.gen(function* () {
              yield* knowledge.drop(tenant, source.id, at)
              yield* outbox.emit({ ...tenant, type: "knowledge.source.removed", data: { source: toSource(source) } })
            })
          )
        }
        yield* transaction(
          Effect.gen(function* () {
            const row = yield* refreshes.markGone(source.id, at)
            // already gone: reported once, its timer set then
            if (Option.isNone(row) || source.gone_since !== null) return
            yield* outbox.emit({ ...tenant, type: "knowledge.source.gone", data: { source: toSource(row.value) } })
            yield* jobs.enqueue({
              queue: REFRESH_TIMER_QUEUE,
              payload: { sourceId: source.id },
              runAt: new Date(at.getTime() + graceMillis)
            })
          })
        )
      })

    const canRefresh = (source: SourceRow) => source.type === "url" && source.status === "indexed" && source.lesson_source_id === null

    /** A re-read that failed keeps the page's knowledge; the next refresh reads it again. */
    const settle = (source: SourceRow, replacing: Effect.Effect<void, IngestFailure>, at: Date) =>
      Effect.catchAll(replacing, (failure) =>
        Effect.zipRight(
          Effect.logWarning("a refresh could not read its page", { sourceId: source.id, reason: failure.message }),
          refreshes.refreshEnded([source.id], at)
        )
      )

    /**
     * The page asked for again with its validators: true when it answered `304` (the caller records it, alone or
     * with its batch); anything else is settled here (gone, changed, the same text, unreadable).
     */
    const check = (source: SourceRow, at: Date) =>
      Effect.gen(function* () {
        const known: Validators = { etag: source.etag, last_modified: source.last_modified }
        const fetched = yield* reader.fetchPage(source, known)
        if (fetched._tag === "Response" && fetched.status === 304) return true
        if (fetched._tag === "Response" && (fetched.status === 404 || fetched.status === 410)) yield* gone(source, at)
        else yield* settle(source, replace(source, fromFetch(fetched), validatorsOf(fetched) ?? known, at), at)
        return false
      })

    /** The refresh job of one source. */
    const refresh = (sourceId: SourceId, read: boolean) =>
      Effect.gen(function* () {
        const found = yield* repo.byId(sourceId)
        if (Option.isNone(found)) return
        const source = found.value
        const at = yield* now
        if (!canRefresh(source)) return yield* refreshes.refreshEnded([source.id], at)
        // a crawl that met the page read it for this refresh
        const kept = read ? yield* repo.keptPageOf(source.id) : Option.none()
        if (Option.isSome(kept)) {
          const known: Validators = { etag: source.etag, last_modified: source.last_modified }
          return yield* settle(source, replace(source, fromKeptPage(kept.value.contentType, kept.value.body), known, at), at)
        }
        if (yield* check(source, at)) yield* refreshes.refreshChecked(source.id, at)
      })

    /**
     * A round's batch: its sources read in one statement and checked one after another (one request at a time to
     * the site, as a crawl); the pages that answered `304` recorded together at the end.
     */
    const refreshBatch = (ids: ReadonlyArray<SourceId>) =>
      Effect.gen(function* () {
        const at = yield* now
        const notModified: Array<SourceId> = []
        for (const source of yield* refreshes.byIds(ids)) {
          if (!canRefresh(source)) yield* refreshes.refreshEnded([source.id], at)
          else if (yield* check(source, at)) notModified.push(source.id)
        }
        yield* refreshes.refreshCheckedAll(notModified, at)
      })

    /**
     * A crawl met a page the agent already has: its refresh is queued with the bytes the crawl read (nothing when a
     * refresh is queued already, or the month's refreshes are used up). In the crawl's transaction.
     */
    const refreshFromPage = (tenant: Tenant, sourceId: SourceId, page: { readonly contentType: string; readonly body: Uint8Array }) =>
      Effect.gen(function* () {
        const { granted } = yield* usage.reserveRefreshes(tenant, 1)
        if (granted === 0) return
        const queued = yield* refreshes.queueRefreshWith(sourceId, page, yield* now)
        if (Option.isNone(queued)) return yield* usage.releaseRefreshes(tenant, 1)
        yield* enqueueRefresh(queued.value, true)
      })

    /** The ingestion worker's hand-off: the job's refresh, when it is one. */
    const refreshOf = (job: Job): Option.Option<Effect.Effect<Outcome>> =>
      Option.map(decodeRefreshJob(job.payload), (payload) =>
        Effect.as("sourceIds" in payload ? refreshBatch(payload.sourceIds) : refresh(payload.sourceId, payload.read === true), Outcome.done)
      )

    /**
     * The ingestion worker's give-up, for a refresh job: its last attempt died (or killed its process), so its
     * sources are idle again with what was learnt from them, and the next refresh reads them again; a source left
     * `queued` would never be refreshed again. None for a job that is not a refresh.
     */
    const refreshGivenUp = (job: Job, reason: string): Option.Option<Effect.Effect<void>> =>
      Option.map(decodeRefreshJob(job.payload), (payload) => {
        const ids = "sourceIds" in payload ? payload.sourceIds : [payload.sourceId]
        return Effect.zipRight(
          Effect.logWarning("a refresh was given up; its pages keep their knowledge", { sourceIds: ids, reason }),
          Effect.flatMap(now, (at) => refreshes.refreshEnded(ids, at))
        )
      })

    /** A gone page's grace ended: its refresh is queued (it removes the knowledge if the page is still gone). */
    const timerDue = (job: Job) =>
      Effect.gen(function* () {
        const payload = decodeTimerJob(job.payload)
        if (Option.isNone(payload)) return Outcome.failed("the job names no source")
        yield* transaction(
          Effect.gen(function* () {
            const queued = yield* refreshes.queueRefresh(payload.value.sourceId, yield* now)
            if (Option.isSome(queued)) yield* enqueueRefresh(queued.value)
          })
        )
        return Outcome.done
      })

    /**
     * One agent's due round, a batch further: its next sources read (as many as the plan's month allows), the
     * refreshable ones queued as refresh jobs of `REFRESH_BATCH`. The plan's reservation (none granted: the
     * month's refreshes are used up, and the round ended).
     */
    const round = (agent: DueAgent, at: Date) =>
      Effect.gen(function* () {
        const tenant = tenantOfRow(agent)
        const reserved = yield* usage.reserveRefreshes(tenant, ROUND_BATCH)
        const granted = reserved.granted
        const batch = granted === 0 ? { queued: [], reached: agent.refresh_round_after, read: 0 } : yield* refreshes.queueRound(agent.id, agent.refresh_round_after, granted)
        if (batch.queued.length < granted) yield* usage.releaseRefreshes(tenant, granted - batch.queued.length)
        for (let i = 0; i < batch.queued.length; i += REFRESH_BATCH) {
          yield* jobs.enqueue({
            queue: INGEST_QUEUE,
            key: agent.id,
            group: tenant.workspaceId,
            payload: { sourceIds: batch.queued.slice(i, i + REFRESH_BATCH), refresh: true }
          })
        }
        // a round ends when it has read the agent's last source, or when the month's refreshes are used up
        if (batch.read < ROUND_BATCH) yield* rounds.ended(agent, at)
        else yield* rounds.reached(agent.id, batch.reached)
        return reserved
      })

    /**
     * `POST …/knowledge/refresh`: a round of every `url` source of the agent now (the round due already, if one
     * is: it is the round), its first batch queued here, the rest by the sweep; a schedule's next round follows a
     * period after it.
     */
    const requestRound = Effect.fn("Freshness.requestRound")(function* (caller: CallerShape, agentId: AgentId) {
      const tenant = tenantOf(caller)
      const at = yield* now
      return yield* transaction(
        Effect.gen(function* () {
          const agent = yield* rounds.startNow(tenant, agentId, at)
          if (Option.isNone(agent)) return yield* new ResourceMissing({ message: `No such agent: '${agentId}'`, param: "agent_id" })
          const { cap, granted, plan } = yield* round(agent.value, at)
          if (granted === 0) {
            return yield* new LimitReached({ message: `The ${plan} plan allows ${cap} refreshes per month; this month's are used up.` })
          }
          // the sweep queues the round's next batches now, not at its next wake
          yield* afterCommit(wake.open)
          return { object: "knowledge_refresh_round", agent_id: agentId, started_at: iso(agent.value.refresh_next_at) } as const
        })
      )
    })

    /** The schedules' sweep: every agent whose round is due gets its next batch queued. */
    const sweep = Effect.gen(function* () {
      const at = yield* now
      yield* transaction(
        Effect.gen(function* () {
          for (const agent of yield* rounds.due(at, SWEEP_AGENTS)) yield* round(agent, at)
        })
      ).pipe(withAfterCommit)
    })

    /** The sweep, for ever: again when the earliest round is due, after the longest sleep, or when woken. */
    const schedules: Effect.Effect<never> = Effect.forever(
      Effect.gen(function* () {
        yield* wake.close
        yield* sweep
        const at = (yield* now).getTime()
        const due = yield* rounds.nextDue()
        const wait = Option.match(due, {
          onNone: () => SWEEP_AT_MOST_EVERY_MILLIS,
          onSome: (d) => Math.min(Math.max(d.getTime() - at, 1000), SWEEP_AT_MOST_EVERY_MILLIS)
        })
        yield* Effect.raceFirst(Effect.sleep(wait), wake.await)
      })
    )

    return { request, requestRound, refreshOf, refreshGivenUp, refreshFromPage, knownPage: refreshes.knownPage, timerDue, schedules } as const
  }),
  dependencies: [Usage.Default, KnowledgeRepo.Default, RefreshRepo.Default, ChunkDraftsRepo.Default, Pipeline.Default, SourceReader.Default, Knowledge.Default, RefreshRounds.Default, SourceQa.Default]
}) {}
