/**
 * The ingestion pipeline, one source per job: read its document
 * (`SourceReader.ts`), categorize (an agent's first source
 * sets its categories; later ones put their Q&A into them), generate Q&A,
 * chunk, vectorize, then commit chunks, Q&A, the `indexed` state and the event
 * as one transaction to readers (the chunks written first as a hidden draft). A phase is written once it has lasted a moment
 * (`PhaseWriter.ts`): a poller sees the slow ones, the fast ones cost nothing. Transient
 * failures (timeouts, 5xx, 429, connection trouble, a transient AI error) are
 * retried on the Clock, 3 attempts in all; anything else fails at once.
 * `csv_qa` skips the AI steps: its rows are the Q&A.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type CategoryId, SourceId } from "../../schema/Ids.js"
import type { Category } from "../../schema/Qa.js"
import type { SourcePhase } from "../../schema/Knowledge.js"
import { Ai, type AiError, type CategoryDraft, type DocumentInput } from "../../layers/Ai.js"
import type { Document } from "../../layers/Extractor.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { Database } from "../../layers/Database.js"
import { type ClaimCall, type GiveUpHow, type Job, Outcome } from "../../layers/JobQueue.js"
import { type Tenant, tenantOfRow } from "../../schema/Tenant.js"
import * as Sql from "../db/Sql.js"
import { KnowledgeChanged } from "../events/KnowledgeChanged.js"
import { draftLanguage } from "../languages/DocumentLanguage.js"
import { Outbox } from "../events/Outbox.js"
import { toCategory } from "../qa/CategoryRow.js"
import { SourceQa } from "../qa/SourceQa.js"
import { AgentLanguages, sourceLanguage } from "../languages/AgentLanguages.js"
import { now } from "../Time.js"
import { chunkInSteps } from "./Chunk.js"
import { ChunkDraftsRepo } from "./ChunkDraftsRepo.js"
import { KnowledgeRepo, type SourceProgress, type SourceRow, toSource } from "./KnowledgeRepo.js"
import { makePhaseWriter, phaseSpan, type PhaseWriter } from "./PhaseWriter.js"
import { CrawlReport } from "./CrawlReport.js"
import { IngestFailure, permanent, type ReadDocument, SourceReader } from "./SourceReader.js"
import { SourceOwner } from "./SourceOwner.js"

/** The source was deleted while it was processed: the job ends without a trace. */
class SourceGone extends Data.TaggedError("SourceGone") {}

/** Attempts of one source after transient failures, the first included. */
export const MAX_ATTEMPTS = 3

/**
 * Attempts of the source's job when processing itself dies (a bug, the database away), retried by the queue with
 * its backoff (`JobQueue.retryBackoffMillis`); above `MAX_ATTEMPTS`, since the transient retries count too.
 */
export const JOB_MAX_ATTEMPTS = 5

/** What a person reads when processing died: never the cause itself (a stack, internals), which is logged. */
export const internalErrorMessage = "the source could not be processed: an internal error occurred"

/** What a person reads when every attempt stopped the worker processing the source (its process killed, say). */
export const stoppedMessage = "processing this source stopped its worker at every attempt"

/** Wait before attempt n+1 after a transient failure of attempt n: 10 s, then 40 s. */
export const retryDelayMillis = (attempt: number) => 10_000 * 4 ** (attempt - 1)

/** The phases of work nobody polls (a refresh: the source stays `indexed` as it runs). */
const unwatched: PhaseWriter = { enter: () => Effect.void, take: Effect.succeed({}) }

/** The agent's categories as the claim read them; undefined: not read yet. */
type Known = ReadonlyArray<Category> | undefined

const Payload = Schema.Struct({ sourceId: SourceId })
const decodePayload = Schema.decodeUnknownEither(Payload)

const fromAi = (error: AiError) =>
  new IngestFailure({ code: "ai_failed", message: `AI step failed: ${error.message}`, transient: error.transient })

export class Pipeline extends Effect.Service<Pipeline>()("Knowledge/Pipeline", {
  effect: Effect.gen(function* () {
    const transaction = Sql.transaction(yield* SqlClient.SqlClient)
    const repo = yield* KnowledgeRepo
    const qa = yield* SourceQa
    const ai = yield* Ai
    const outbox = yield* Outbox
    const ids = yield* IdGenerator
    const reader = yield* SourceReader
    const database = yield* Database
    const owner = yield* SourceOwner
    const crawls = yield* CrawlReport
    const drafts = yield* ChunkDraftsRepo
    const knowledgeChanged = yield* KnowledgeChanged
    const languages = yield* AgentLanguages

    /** The document as the AI reads it, with the language its drafts are written in. */
    const drafting = (source: SourceRow, doc: Document) =>
      Effect.map(languages.settingOf(source.agent_id), (agentLanguage) => ({
        title: doc.title,
        text: doc.text,
        language: draftLanguage(doc, agentLanguage)
      }))

    const step = (source: SourceRow, changes: SourceProgress) =>
      Effect.flatMap(now, (at) => repo.update(source.id, changes, at)).pipe(
        Effect.flatMap((row) => (Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(new SourceGone()))),
        phaseSpan("progress")
      )

    const phase = (phases: PhaseWriter, name: SourcePhase, progress: number) => phases.enter({ phase: name, progress })

    /** The agent's categories: those its claim read (`known`), else read now; its first document creates them. */
    const categoriesFor = (source: SourceRow, tenant: Tenant, doc: DocumentInput, known: Known) =>
      Effect.gen(function* () {
        const existing = known !== undefined && known.length > 0 ? known : yield* qa.categoriesOf(tenant, source.agent_id)
        if (existing.length > 0) return existing
        const drafts = yield* Effect.mapError(ai.categorize(doc), fromAi)
        return yield* qa.createCategories(tenant, source.agent_id, drafts)
      })

    const embed = (texts: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const out: Array<ReadonlyArray<number>> = []
        for (let i = 0; i < texts.length; i += 64) {
          out.push(...(yield* Effect.mapError(ai.embed(texts.slice(i, i + 64)), fromAi)))
        }
        return out
      })

    interface Item {
      readonly question: string
      readonly answer: string
      readonly category: string | null
    }

    /** Category ids by name, case-insensitively; names the agent lacks are created (CSV) or dropped (generated). */
    const placeIn = (categories: ReadonlyArray<Category>, name: string | null): CategoryId | null => {
      if (name === null) return null
      const wanted = name.trim().toLowerCase()
      return categories.find((c) => c.name.toLowerCase() === wanted)?.id ?? null
    }

    /** Everything up to the commit: the document (if any), chunks with vectors, Q&A with vectors. */
    const build = (source: SourceRow, tenant: Tenant, phases: PhaseWriter, known: Known) =>
      Effect.gen(function* () {
        if (source.type !== "csv_qa") return yield* indexDocument(source, tenant, phases, known, yield* reader.readDocument(source, tenant, phases))
        const items = yield* reader.csvRows(source, phases)
        yield* phase(phases, "categorizing", 40)
        const named = [...new Set(items.flatMap((i) => (i.category === null ? [] : [i.category])))]
        const existing = known ?? (yield* qa.categoriesOf(tenant, source.agent_id))
        const missing = named.filter((n) => placeIn(existing, n) === null)
        const categories =
          missing.length === 0
            ? existing
            : yield* qa.createCategories(tenant, source.agent_id, missing.map((name) => ({ name, description: "" })))
        yield* phase(phases, "generating_qa", 60)
        return yield* vectorize(source, phases, null, items, categories, "csv")
      })

    /** A document read (or read again by a refresh) to what its commit writes: categories, Q&A, chunks, vectors. */
    const indexDocument = (source: SourceRow, tenant: Tenant, phases: PhaseWriter, known: Known, doc: ReadDocument) =>
      Effect.gen(function* () {
        if (doc.text.trim() === "") return yield* permanent("empty_content", "no readable text was found")
        yield* phase(phases, "categorizing", 40)
        const input = yield* drafting(source, doc)
        const categories = yield* categoriesFor(source, tenant, input, known).pipe(phaseSpan("categorize"))
        yield* phase(phases, "generating_qa", 60)
        const drafts: ReadonlyArray<CategoryDraft> = categories.map((c) => ({ name: c.name, description: c.description }))
        const items = yield* Effect.mapError(ai.generateQa(input, drafts), fromAi).pipe(phaseSpan("qa"))
        return yield* vectorize(source, phases, doc, items, categories, "generated")
      })

    const vectorize = (
      source: SourceRow,
      phases: PhaseWriter,
      doc: ReadDocument | null,
      items: ReadonlyArray<Item>,
      categories: ReadonlyArray<Category>,
      origin: "generated" | "csv"
    ) =>
      Effect.gen(function* () {
        yield* phase(phases, "vectorizing", 80)
        const text = doc === null ? null : `${doc.title}\n\n${doc.text}`
        const chunks = text === null ? [] : yield* chunkInSteps(text).pipe(phaseSpan("chunk"))
        const vectors = yield* embed([...chunks, ...items.map((i) => `${i.question}\n${i.answer}`)]).pipe(phaseSpan("embed"))
        // the source's language, which its passages and Q&A are indexed in
        const read = text ?? items.map((i) => `${i.question}\n${i.answer}`).join("\n")
        const language = sourceLanguage(read, yield* languages.settingOf(source.agent_id))
        return {
          language,
          title: doc?.title ?? source.title,
          text: doc?.text ?? null,
          validators: doc?.validators,
          chunks: chunks.map((content, position) => ({ content, position, embedding: vectors[position]! })),
          qa: items.map((item, i) => ({
            question: item.question,
            answer: item.answer,
            categoryId: placeIn(categories, item.category),
            origin,
            sourceId: source.id,
            embedding: vectors[chunks.length + i]!
          }))
        }
      })

    /**
     * The job's source, made `processing` for this attempt: by the claim that took the job (`ingest_jobs_claim`,
     * with the agent's categories), or here where the queue's store made no such claim (memory). None: nothing to
     * process (deleted, or already settled).
     */
    const startOf = (job: Job, sourceId: SourceId): Effect.Effect<Option.Option<{ source: SourceRow; known: Known }>> =>
      job.alongside === undefined
        ? Effect.flatMap(now, (at) => repo.start(sourceId, at)).pipe(
            Effect.map(Option.map((source) => ({ source, known: undefined }))),
            phaseSpan("progress")
          )
        : Effect.map(repo.startedBy(job.alongside), Option.map(({ categories, source }) => ({ source, known: categories.map(toCategory) })))

    /** The queue's `handBack`: a job released unrun on shutdown leaves the source its claim started waiting again. */
    const handBack = (job: Job): Effect.Effect<void> =>
      job.alongside === undefined
        ? Effect.void
        : Effect.flatMap(repo.startedBy(job.alongside), Option.match({ onNone: () => Effect.void, onSome: ({ source }) => repo.unstart(source) }))


    /**
     * Chunks, Q&A, the final state (with what the phases left `unwritten`) and the event: all or nothing as readers
     * see it, and nothing for a source deleted meanwhile or taken over by another attempt. The chunks and the
     * extracted text (in pieces) go first, in short steps, into a draft hidden from retrieval (`ChunkDraftsRepo.ts`);
     * the last transaction publishes it with the rest. Chunks and Q&A are only ever written here, with `indexed`, so
     * the source has none before.
     */
    const commit = (source: SourceRow, built: Effect.Effect.Success<ReturnType<typeof build>>, unwritten: SourceProgress) =>
      Effect.gen(function* () {
        const chunks = yield* Effect.forEach(built.chunks, (c) => Effect.map(ids.make("chk"), (id) => ({ id, ...c })))
        const draft = yield* drafts.open(source, { attempt: source.attempts })
        const written = Effect.zipRight(
          drafts.write(source, draft, chunks, built.language),
          built.text === null ? Effect.void : drafts.writeText(source, draft, built.text)
        ).pipe(phaseSpan("write"))
        const published = transaction(
          Effect.gen(function* () {
            const tenant = tenantOfRow(source)
            const at = yield* now
            const title = built.title === source.title ? undefined : { from: source.title, to: built.title }
            const completed = yield* repo.complete(source.id, source.attempts, {
              ...unwritten,
              status: "indexed",
              phase: "done",
              progress: 100,
              error: null,
              error_code: null,
              next_attempt_at: null,
              chunk_count: chunks.length,
              qa_count: built.qa.length,
              language: built.language,
              finished_at: at,
              // the text is in the draft's pieces; a value written before them goes
              ...(built.text === null ? {} : { extracted_text: null }),
              ...(built.validators === undefined ? {} : built.validators)
            }, title, at).pipe(phaseSpan("progress"))
            if (Option.isNone(completed)) return yield* new SourceGone()
            const row = completed.value
            yield* drafts.publish(row.id, draft)
            yield* qa.insert(tenant, source.agent_id, built.qa)
            yield* knowledgeChanged.changed(tenant, source.agent_id)
            // a lesson's source reports through its owner (`course.lesson.source.indexed`)
            if (row.lesson_source_id !== null) yield* owner.indexed(row)
            else yield* outbox.emit({ ...tenant, type: "knowledge.source.indexed", data: { source: toSource(row) } })
            if (row.crawl_id !== null) yield* crawls.settled(row.crawl_id, true)
          })
        ).pipe(phaseSpan("write"))
        yield* Effect.zipRight(written, published).pipe(
          // not published: the draft's chunks go (a crash, or a shutdown, leaves them hidden for the next attempt)
          Effect.onError((cause) => (Cause.isInterruptedOnly(cause) ? Effect.void : Effect.ignore(drafts.discard(source.id, draft))))
        )
      }).pipe(Effect.catchTag("DraftGone", () => new SourceGone()))

    /** The failed state (in the phase it failed in, with what the phases left `unwritten`) and the event. */
    const fail = (source: SourceRow, failure: IngestFailure, unwritten: SourceProgress = {}) =>
      transaction(
        Effect.gen(function* () {
          const row = yield* step(source, {
            ...unwritten,
            status: "failed",
            error: failure.message,
            error_code: failure.code,
            next_attempt_at: null,
            finished_at: yield* now
          })
          const error = { code: failure.code, message: failure.message }
          if (row.lesson_source_id !== null) yield* owner.failed(row, error)
          else yield* outbox.emit({ ...tenantOfRow(source), type: "knowledge.source.failed", data: { source: toSource(row), error } })
          if (row.crawl_id !== null) yield* crawls.settled(row.crawl_id, false)
        })
      ).pipe(
        // the chunks an attempt that died left in a draft: never to be shown
        Effect.tap(() => Effect.ignore(drafts.discardAll(source.id)))
      )

    const handle = Effect.fn("Pipeline.handle")(function* (job: Job) {
      const payload = decodePayload(job.payload)
      if (Either.isLeft(payload)) return Outcome.failed("the job names no source")
      const started = yield* startOf(job, payload.right.sourceId)
      if (Option.isNone(started)) return Outcome.done
      const { known, source } = started.value
      const attempt = source.attempts
      const phases = yield* makePhaseWriter((changes) => step(source, changes))
      const result = yield* Effect.gen(function* () {
        const built = yield* build(source, tenantOfRow(source), phases, known)
        yield* commit(source, built, yield* phases.take)
      }).pipe(Effect.either)
      if (Either.isRight(result)) return Outcome.done
      // a retry starts over from `queued`; a failure keeps the phase it failed in
      const unwritten = yield* phases.take
      const failure = result.left
      if (failure._tag === "SourceGone") return Outcome.done
      if (failure._tag !== "IngestFailure") return yield* Effect.die(failure)
      if (failure.transient && attempt < MAX_ATTEMPTS) {
        const at = new Date((yield* now).getTime() + retryDelayMillis(attempt))
        yield* Effect.ignore(
          step(source, {
            status: "pending",
            phase: "queued",
            progress: 0,
            next_attempt_at: at,
            error: failure.message,
            error_code: failure.code
          })
        )
        return Outcome.retryAt(at, failure.message)
      }
      // not recorded (the database away): the handler dies and the queue runs it again, never leaving it `processing`
      yield* fail(source, failure, unwritten).pipe(Effect.catchTag("SourceGone", () => Effect.void))
      return Outcome.done
    }, Effect.scoped)

    /** The source of a job, while it still waits for an end (absent: deleted, settled, or no source named). */
    const unsettledOf = (job: Job) =>
      Effect.gen(function* () {
        const payload = decodePayload(job.payload)
        if (Either.isLeft(payload)) return Option.none<SourceRow>()
        const found = yield* repo.byId(payload.right.sourceId)
        return Option.filter(found, (s) => s.status !== "indexed" && s.status !== "failed")
      })

    /**
     * The queue's `onRetry`: processing died (a bug, the database away), and the queue runs it again at `at`; a
     * poller sees why it waits. The cause itself is in the queue's log line, not here.
     */
    const retrying = (job: Job, _reason: string, at: Date): Effect.Effect<void> =>
      Effect.gen(function* () {
        const found = yield* unsettledOf(job)
        if (Option.isNone(found)) return
        yield* step(found.value, {
          status: "pending",
          phase: "queued",
          progress: 0,
          next_attempt_at: at,
          error: `${internalErrorMessage}; it will be tried again`,
          error_code: "internal_error"
        })
      }).pipe(Effect.catchTag("SourceGone", () => Effect.void))

    /**
     * The queue's `onGiveUp`, in the transaction that settles the job failed: processing died at the last attempt
     * ("failed"), or every attempt stopped its worker before it ended ("stopped": the source is left `processing`
     * by an attempt whose process was killed); the source fails as any other failure does (its event, or its
     * owner's), so the agent's next source runs. A write that fails dies: the queue tries again.
     */
    const giveUp = (job: Job, _reason: string, how: GiveUpHow): Effect.Effect<void> =>
      Effect.gen(function* () {
        const found = yield* unsettledOf(job)
        if (Option.isNone(found)) return
        const failure =
          how === "stopped" ? permanent("processing_stopped", stoppedMessage) : permanent("internal_error", internalErrorMessage)
        yield* fail(found.value, failure)
      }).pipe(Effect.catchTag("SourceGone", () => Effect.void))

    /** A refresh's reading of a page (`Freshness.ts`): indexed as a new one is, against the agent's categories. */
    const index = (source: SourceRow, doc: ReadDocument) => indexDocument(source, tenantOfRow(source), unwatched, undefined, doc)

    /**
     * The claim records an attempt that may kill this process (a decoder's crash). A PostgreSQL server keeps a
     * commit whatever becomes of this process, so the claim commits as the queue's other bookkeeping does; PGlite
     * runs inside it, where a commit not yet flushed dies with it: the attempt would never count, and the job would
     * kill every process after. There the claim waits for the flush.
     */
    const claimAndStart = (call: ClaimCall<unknown>) =>
      repo.claimAndStart(database.kind === "pglite" ? { ...call, async: false } : call)

    return { handle, retrying, giveUp, handBack, claimAndStart, index } as const
  }),
  dependencies: [KnowledgeRepo.Default, SourceReader.Default, SourceQa.Default, ChunkDraftsRepo.Default, AgentLanguages.Default]
}) {}
