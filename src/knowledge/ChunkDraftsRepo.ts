/**
 * A source's chunks written as a draft (`knowledge_chunk_drafts`, migration 0035): in short steps that each hold
 * the database a moment, hidden from retrieval (`visibleChunk`) until the source's final transaction publishes
 * them all at once. A big document's thousands of chunks cost seconds of index writes (HNSW, GIN); in one
 * transaction they held PGlite's only session, and every other workspace's statement waited behind them.
 *
 * Steps are sized by how long the last one took (`stepTarget`), so each stays short on a slow machine as on a
 * fast one, and one step runs at a time in the whole service: a reader waits behind one step at most, however
 * many sources are indexed at once. A draft given up is marked `discarded` (still hidden, written no more), then
 * its chunks are deleted in steps of the same kind, then its row. The source's extracted text goes with the draft,
 * in pieces (`writeText`; read by `SourceTexts.ts`): one value of megabytes held the database for seconds too.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { SourceId } from "../../schema/Ids.js"
import type { LanguageTag } from "../../schema/Languages.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { makeBulkInsert } from "../db/BulkInsert.js"
import { decodeAll, execute, transaction } from "../db/Sql.js"
import type { NewChunk, SourceRow } from "./KnowledgeRepo.js"

/** The draft is no longer written: discarded (its attempt superseded, its source failed or deleted). */
export class DraftGone extends Data.TaggedError("DraftGone") {}

/** Which state of the source may open a draft: its attempt still the current one, or (a refresh) still indexed. */
export type DraftFence = { readonly attempt: number } | "indexed"

/** Retrieval's condition on a row of `knowledge_chunks`: in no draft still listed (unpublished or discarded). */
export const visibleChunk = "(draft is null or draft <> all(array(select id from knowledge_chunk_drafts)))"

/**
 * Characters of one piece of a source's extracted text (`knowledge_source_texts`, migration 0039): each piece is
 * written, read and deleted by a statement of its own, short like a step of chunks.
 */
export const textPieceChars = 128 * 1024

/** How long one step may hold the database, about. */
const stepTarget = 40
/** Rows of a step: the first, and the bounds the sizing keeps to. */
const firstStep = 8
const maxStep = 500

/** What a step writes of a chunk (`tsv` is generated, `search_tsv` filled by a trigger from `language`). */
const chunkColumns = {
  id: "text",
  source_id: "text",
  agent_id: "text",
  workspace_id: "text",
  environment: "text",
  position: "int4",
  content: "text",
  embedding: "float4[]",
  draft: "text",
  language: "text"
} as const

const Id = Schema.Struct({ id: Schema.String })

export class ChunkDraftsRepo extends Effect.Service<ChunkDraftsRepo>()("Knowledge/ChunkDraftsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* IdGenerator
    const bulkInsert = yield* makeBulkInsert
    const inTransaction = transaction(sql)
    // one step at a time in the service
    const steps = yield* Effect.makeSemaphore(1)

    /**
     * Runs `step(rows)` over `total` rows in steps sized to `stepTarget`: each step's rows from the last one's
     * time per row (doubling at most, halving at least).
     */
    const stepped = <E>(total: number, step: (from: number, count: number) => Effect.Effect<number, E>) =>
      Effect.gen(function* () {
        let size = firstStep
        let done = 0
        // bounded: every step writes one row at least
        while (done < total) {
          const count = Math.min(size, total - done)
          const started = yield* Clock.currentTimeMillis
          const written = yield* steps.withPermits(1)(step(done, count))
          const took = (yield* Clock.currentTimeMillis) - started
          done += Math.max(written, 1)
          const fitting = took <= 0 ? size * 2 : Math.floor((count * stepTarget) / took)
          size = Math.max(1, Math.min(maxStep, size * 2, Math.max(Math.floor(size / 2), fitting)))
        }
      })

    /**
     * A new draft for `source`, unless `fence` no longer holds (a newer attempt took it over, it was deleted: none).
     * Any other draft of the source (an attempt that died) is discarded and purged first.
     */
    const open = (source: SourceRow, fence: DraftFence) =>
      Effect.gen(function* () {
        const id = yield* ids.make("drf")
        const at = new Date(yield* Clock.currentTimeMillis)
        const holds =
          fence === "indexed" ? sql`status = 'indexed'` : sql`status = 'processing' and attempts = ${fence.attempt}`
        const opened = yield* inTransaction(
          Effect.gen(function* () {
            const rows = yield* decodeAll(Id, sql`
              insert into knowledge_chunk_drafts (id, source_id, created_at)
              select ${id}, id, ${at} from knowledge_sources where id = ${source.id} and deleted_at is null and ${holds}
              returning id`)
            if (rows.length > 0) yield* discardOthers(source.id, id)
            return rows.length > 0
          })
        )
        if (!opened) return yield* new DraftGone()
        yield* purge(source.id)
        return id
      })

    /** The source's drafts but `keep` given up: hidden still, written no more. */
    const discardOthers = (sourceId: SourceId, keep: string | null) =>
      execute(sql`
        update knowledge_chunk_drafts set discarded = true
        where source_id = ${sourceId} and not discarded ${keep === null ? sql`` : sql`and id <> ${keep}`}`)

    /** Every draft of the source given up (its source failed), and their chunks deleted. */
    const discardAll = (sourceId: SourceId) => Effect.zipRight(discardOthers(sourceId, null), purge(sourceId))

    /** This draft given up (its attempt failed or was superseded), and its chunks deleted. */
    const discard = (sourceId: SourceId, draft: string) =>
      Effect.zipRight(execute(sql`update knowledge_chunk_drafts set discarded = true where id = ${draft}`), purge(sourceId))

    /**
     * The chunks and text pieces of the source's discarded drafts, deleted in steps; then the drafts, which hide
     * nothing more.
     */
    const purge = (sourceId: SourceId) =>
      Effect.gen(function* () {
        const discarded = sql`select id from knowledge_chunk_drafts where source_id = ${sourceId} and discarded`
        // bounded: every round deletes rows or ends; a discarded draft gains none
        for (let round = 0; round < 100_000; round++) {
          const deleted = yield* steps.withPermits(1)(
            decodeAll(Id, sql`
              delete from knowledge_chunks where id in (
                select id from knowledge_chunks where source_id = ${sourceId} and draft in (${discarded}) limit 200)
              returning id`)
          )
          if (deleted.length === 0) break
        }
        for (let round = 0; round < 100_000; round++) {
          const deleted = yield* steps.withPermits(1)(
            decodeAll(Id, sql`
              delete from knowledge_source_texts where (draft, position) in (
                select draft, position from knowledge_source_texts
                where source_id = ${sourceId} and draft in (${discarded}) limit 1)
              returning draft as id`)
          )
          if (deleted.length === 0) break
        }
        yield* execute(sql`
          delete from knowledge_chunk_drafts d where d.source_id = ${sourceId} and d.discarded
            and not exists (select 1 from knowledge_chunks c where c.source_id = d.source_id and c.draft = d.id)
            and not exists (select 1 from knowledge_source_texts t where t.source_id = d.source_id and t.draft = d.id)`)
      })

    /** The draft still written: its row locked against a discard until the step's rows are in; else `DraftGone`. */
    const stillOpen = (draft: string) =>
      Effect.flatMap(
        decodeAll(Id, sql`select id from knowledge_chunk_drafts where id = ${draft} and not discarded for share`),
        (live) => (live.length === 0 ? new DraftGone() : Effect.void)
      )

    /** `chunks` into the draft, in steps; `DraftGone` when it was discarded meanwhile. */
    const write = (source: SourceRow, draft: string, chunks: ReadonlyArray<NewChunk>, language: LanguageTag) =>
      stepped(chunks.length, (from, count) =>
        inTransaction(
          Effect.gen(function* () {
            yield* stillOpen(draft)
            yield* bulkInsert(
              "knowledge_chunks",
              chunkColumns,
              chunks.slice(from, from + count).map((c) => ({
                id: c.id,
                source_id: source.id,
                agent_id: source.agent_id,
                workspace_id: source.workspace_id,
                environment: source.environment,
                position: c.position,
                content: c.content,
                embedding: c.embedding.map((x) => (Number.isFinite(x) ? x : 0)),
                draft,
                language
              }))
            )
            return count
          })
        )
      )

    /** The source's extracted text into the draft, a piece (`textPieceChars`) a step; `DraftGone` as `write`. */
    const writeText = (source: SourceRow, draft: string, text: string) =>
      Effect.forEach(
        Array.from({ length: Math.ceil(text.length / textPieceChars) }, (_, position) => position),
        (position) =>
          steps.withPermits(1)(
            inTransaction(
              Effect.zipRight(
                stillOpen(draft),
                execute(sql`
                  insert into knowledge_source_texts (draft, position, source_id, piece)
                  values (${draft}, ${position}, ${source.id},
                    ${text.slice(position * textPieceChars, (position + 1) * textPieceChars)})`)
              )
            )
          ),
        { discard: true }
      )

    /**
     * Inside the source's final transaction: the draft's chunks and text shown and the source's others hidden at
     * once (a changed page's old chunks and text: their drafts listed again, discarded; chunks written before drafts existed
     * deleted here). `DraftGone` when the draft was discarded meanwhile. `purge` deletes the hidden ones after.
     */
    const publish = (sourceId: SourceId, draft: string) =>
      Effect.gen(function* () {
        const at = new Date(yield* Clock.currentTimeMillis)
        const published = yield* decodeAll(Id, sql`
          delete from knowledge_chunk_drafts where id = ${draft} and not discarded returning id`)
        if (published.length === 0) return yield* new DraftGone()
        yield* execute(sql`
          insert into knowledge_chunk_drafts (id, source_id, discarded, created_at)
          select draft, ${sourceId}, true, ${at}::timestamptz from (
            select draft from knowledge_chunks where source_id = ${sourceId} and draft is not null and draft <> ${draft}
            union
            select draft from knowledge_source_texts where source_id = ${sourceId} and draft <> ${draft}
          ) as others
          on conflict (id) do update set discarded = true`)
        yield* execute(sql`delete from knowledge_chunks where source_id = ${sourceId} and draft is null`)
      })

    return { open, write, writeText, publish, purge, discard, discardAll } as const
  })
}) {}
