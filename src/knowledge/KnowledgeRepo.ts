/**
 * SQL for knowledge sources: what the API reads and writes, and what the pipeline records as it indexes one. API
 * reads are scoped to one workspace and environment; the pipeline works by source id (its job names it). A
 * source's refresh state is `RefreshRepo.ts`'s; its chunks' vectors, `ChunkVectorsRepo.ts`'s.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Environment } from "../../schema/Auth.js"
import { AgentId, SourceId, WorkspaceId } from "../../schema/Ids.js"
import { LanguageTag } from "../../schema/Languages.js"
import {
  type KnowledgeSource,
  RefreshStatus,
  SourceErrorCode,
  SourcePhase,
  SourceStatus,
  SourceType
} from "../../schema/Knowledge.js"
import type { Tenant } from "../../schema/Tenant.js"
import { decodeAll, decodeOne, execute } from "../db/Sql.js"
import type { PageRequest } from "../http/Pagination.js"
import { iso, isoOrNull } from "../Time.js"
import type { ClaimCall } from "../../layers/JobQueue.js"
import { CategoryRow } from "../qa/CategoryRow.js"
import { readSourceText } from "./SourceTexts.js"
import { processingFields, toProcessing } from "./Processing.js"

export const SourceRow = Schema.Struct({
  seq: Schema.String,
  id: SourceId,
  workspace_id: WorkspaceId,
  environment: Environment,
  agent_id: AgentId,
  type: SourceType,
  title: Schema.String,
  ...processingFields,
  qa_count: Schema.Int,
  /** Detected when the source is read; null before (and for a source written before migration 0048, until re-indexed). */
  language: Schema.NullOr(LanguageTag),
  /** Set when a lesson source owns the row (training): hidden from the knowledge endpoints. */
  lesson_source_id: Schema.NullOr(Schema.String),
  /** The crawl that kept this page, which hears when it settles (`CrawlReport`). */
  crawl_id: Schema.NullOr(Schema.String),
  /** A `url` source's validators from its last read page, for a refresh's conditional GET. */
  etag: Schema.NullOr(Schema.String),
  last_modified: Schema.NullOr(Schema.String),
  refresh_status: RefreshStatus,
  checked_at: Schema.NullOr(Schema.DateFromSelf),
  changed_at: Schema.NullOr(Schema.DateFromSelf),
  gone_since: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type SourceRow = typeof SourceRow.Type

export const toSource = (row: SourceRow): KnowledgeSource => ({
  id: row.id,
  object: "knowledge_source",
  agent_id: row.agent_id,
  type: row.type,
  title: row.title,
  ...toProcessing(row),
  qa_count: row.qa_count,
  language: row.language,
  refresh:
    row.type === "url"
      ? {
          status: row.refresh_status,
          checked_at: isoOrNull(row.checked_at),
          changed_at: isoOrNull(row.changed_at),
          gone_since: isoOrNull(row.gone_since)
        }
      : null,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

/**
 * What the ingestion queue's claim started for a job (`ingest_jobs_claim`, migration 0030), as JSON: the source's
 * row (its timestamps as ISO text, `seq` and `size_bytes` as text) and its agent's categories, in order.
 */
const Started = Schema.Struct({
  source: Schema.Struct({
    ...SourceRow.fields,
    next_attempt_at: Schema.NullOr(Schema.Date),
    checked_at: Schema.NullOr(Schema.Date),
    changed_at: Schema.NullOr(Schema.Date),
    gone_since: Schema.NullOr(Schema.Date),
    created_at: Schema.Date,
    updated_at: Schema.Date
  }),
  categories: Schema.Array(Schema.Struct({ ...CategoryRow.fields, created_at: Schema.Date, updated_at: Schema.Date }))
})
export type Started = { readonly source: SourceRow; readonly categories: ReadonlyArray<CategoryRow> }
const decodeStarted = Schema.decodeUnknown(Started)

const Input = Schema.Struct({ content: Schema.NullOr(Schema.String) })
const KeptPage = Schema.Struct({ page_type: Schema.String, page_body: Schema.Uint8ArrayFromSelf })
const IndexedText = Schema.Struct({ id: SourceId, title: Schema.String, extracted_text: Schema.NullOr(Schema.String) })
const SourceTitle = Schema.Struct({ id: SourceId, title: Schema.String })

// `seq` and `size_bytes` are bigints, read as text; queries order by the column, not the alias
export const sourceColumns = `knowledge_sources.seq::text as seq, id, workspace_id, environment, agent_id, type, title, status, phase,
  progress, attempts, next_attempt_at, error, error_code, source_ref, size_bytes::text as size_bytes, chunk_count,
  qa_count, language, lesson_source_id, crawl_id, etag, last_modified, refresh_status, checked_at, changed_at, gone_since,
  created_at, updated_at`

export interface NewSource {
  readonly id: SourceId
  readonly agentId: AgentId
  readonly type: SourceType
  readonly title: string
  readonly sourceRef: string
  readonly sizeBytes: number
  readonly content: string | null
  readonly at: Date
  /** The lesson source owning it, for a training source. */
  readonly lessonSourceId?: string
  /** The crawl that kept it, and the page as the crawl read it (the pipeline reads these bytes, not the web). */
  readonly crawl?: {
    readonly crawlId: string
    readonly contentType: string
    readonly body: Uint8Array
    readonly etag?: string | undefined
    readonly lastModified?: string | undefined
  }
}

/** What the pipeline may change on a source as it goes. */
export interface SourceProgress {
  readonly status?: SourceStatus
  readonly phase?: SourcePhase
  readonly progress?: number
  readonly attempts?: number
  readonly next_attempt_at?: Date | null
  readonly error?: string | null
  readonly error_code?: SourceErrorCode | null
  readonly title?: string
  readonly size_bytes?: number
  /** Written before migration 0039 only: a text is now written in pieces with its draft (`ChunkDraftsRepo.ts`). */
  readonly extracted_text?: null
  readonly chunk_count?: number
  readonly qa_count?: number
  readonly language?: LanguageTag
  readonly started_at?: Date
  readonly finished_at?: Date
  readonly etag?: string | null
  readonly last_modified?: string | null
}

export interface NewChunk {
  readonly id: string
  readonly position: number
  readonly content: string
  readonly embedding: ReadonlyArray<number>
}

export class KnowledgeRepo extends Effect.Service<KnowledgeRepo>()("Knowledge/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(sourceColumns)

    const insert = (tenant: Tenant, sources: ReadonlyArray<NewSource>) =>
      sources.length === 0
        ? Effect.succeed([])
        : decodeAll(SourceRow, sql`
            insert into knowledge_sources ${sql.insert(
              sources.map((s) => ({
                id: s.id,
                workspace_id: tenant.workspaceId,
                environment: tenant.environment,
                agent_id: s.agentId,
                type: s.type,
                title: s.title,
                status: "pending",
                phase: "queued",
                source_ref: s.sourceRef,
                size_bytes: s.sizeBytes,
                content: s.content,
                lesson_source_id: s.lessonSourceId ?? null,
                crawl_id: s.crawl?.crawlId ?? null,
                page_type: s.crawl?.contentType ?? null,
                etag: s.crawl?.etag ?? null,
                last_modified: s.crawl?.lastModified ?? null,
                page_body: s.crawl === undefined ? null : Buffer.from(s.crawl.body.buffer, s.crawl.body.byteOffset, s.crawl.body.byteLength),
                created_at: s.at,
                updated_at: s.at
              }))
            )}
            returning ${cols}`).pipe(
            // one multi-row insert returns rows in insertion order on both databases; keep it explicit
            Effect.map((rows) => [...rows].sort((a, b) => Number(a.seq) - Number(b.seq)))
          )

    const find = (tenant: Tenant, agentId: AgentId, id: SourceId) =>
      decodeOne(SourceRow, sql`
        select ${cols} from knowledge_sources
        where id = ${id} and agent_id = ${agentId}
          and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and deleted_at is null
          and lesson_source_id is null`)

    /** Like `find`, lesson-owned rows included (replies name what they drew on). */
    const findAny = (tenant: Tenant, agentId: AgentId, id: SourceId) =>
      decodeOne(SourceRow, sql`
        select ${cols} from knowledge_sources
        where id = ${id} and agent_id = ${agentId}
          and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and deleted_at is null`)

    /** The titles of these sources of an agent, lesson-owned ones included, in one read (what a search hit names). */
    const titles = (tenant: Tenant, agentId: AgentId, ids: ReadonlyArray<SourceId>) =>
      ids.length === 0
        ? Effect.succeed(new Map<SourceId, string>())
        : decodeAll(SourceTitle, sql`
            select id, title from knowledge_sources
            where id in ${sql.in(ids)} and agent_id = ${agentId}
              and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and deleted_at is null`).pipe(
            Effect.map((rows) => new Map(rows.map((row) => [row.id, row.title])))
          )

    /** The pipeline's read, by id alone: a deleted source is none (its job just ends). */
    const byId = (id: SourceId) =>
      decodeOne(SourceRow, sql`select ${cols} from knowledge_sources where id = ${id} and deleted_at is null`)

    /** The page a crawl read for this source, until the source is indexed; none for any other source. */
    const keptPageOf = (id: SourceId) =>
      decodeOne(KeptPage, sql`
        select page_type, page_body from knowledge_sources where id = ${id} and page_body is not null`).pipe(
        Effect.map(Option.map((row) => ({ contentType: row.page_type, body: row.page_body })))
      )

    const inputOf = (id: SourceId) =>
      decodeOne(Input, sql`select content from knowledge_sources where id = ${id}`).pipe(
        Effect.map(Option.flatMap((row) => Option.fromNullable(row.content)))
      )

    const page = (tenant: Tenant, agentId: AgentId, status: Option.Option<string>, page: PageRequest) =>
      decodeAll(SourceRow, sql`
        select ${cols} from knowledge_sources
        where agent_id = ${agentId} and workspace_id = ${tenant.workspaceId}
          and environment = ${tenant.environment} and deleted_at is null and lesson_source_id is null
          ${Option.isSome(status) ? sql`and status = ${status.value}` : sql.literal("")}
          ${Option.isSome(page.after) ? sql`and knowledge_sources.seq < ${page.after.value}::bigint` : sql.literal("")}
        order by knowledge_sources.seq desc
        limit ${page.limit + 1}`)

    const update = (id: SourceId, changes: SourceProgress, at: Date) =>
      decodeOne(SourceRow, sql`
        update knowledge_sources set ${sql.update({ ...changes, updated_at: at })}
        where id = ${id} and deleted_at is null
        returning ${cols}`)

    /**
     * The pipeline's first write of an attempt: the source, unless deleted or settled, is `processing` from its
     * first phase with one more attempt counted; none when there is nothing to process (its job just ends).
     */
    const start = (id: SourceId, at: Date) =>
      decodeOne(SourceRow, sql`
        update knowledge_sources set status = 'processing', phase = 'fetching', progress = 5, attempts = attempts + 1,
          next_attempt_at = null, started_at = ${at}, updated_at = ${at}
        where id = ${id} and deleted_at is null and status not in ('indexed', 'failed')
        returning ${cols}`)

    /**
     * The ingestion queue's claim as one call (`ingest_jobs_claim`, migrations 0030 and 0034): the ended jobs settled, the
     * next ones claimed, and each one's source started as `start` starts it, with what its handler needs
     * (`startedBy`). Whether its commit may skip the WAL flush is the caller's (`call.async`; see the pipeline's).
     */
    const claimAndStart = (call: ClaimCall<unknown>) => sql`
      ingest_jobs_claim(${call.ended.map((job) => job.id)}::bigint[], ${call.ended.map((job) => job.claim)}::integer[],
        ${call.queue}, ${call.at}, ${call.until}, ${call.perKey}::integer, ${call.perGroup}::integer,
        ${call.limit}::integer, ${call.async})`

    /** What `claimAndStart` started for a job (its `alongside`): none when its source had nothing to process. */
    const startedBy = (alongside: Option.Option<unknown>): Effect.Effect<Option.Option<Started>> =>
      Option.match(alongside, {
        onNone: () => Effect.succeedNone,
        onSome: (json) => Effect.map(Effect.orDie(decodeStarted(json)), Option.some)
      })

    /**
     * A start handed back unrun (its job released on shutdown): the source waits `queued` again, its attempt
     * uncounted, unless something moved it since.
     */
    const unstart = (source: SourceRow) =>
      execute(sql`
        update knowledge_sources set status = 'pending', phase = 'queued', progress = 0, attempts = attempts - 1
        where id = ${source.id} and status = 'processing' and attempts = ${source.attempts}`)

    /**
     * The last write of an attempt that succeeded, fenced by that attempt: none when the source was deleted
     * meanwhile, or another attempt took it over (its job's lease lost), so its result is written once. The
     * document's own title (a page's `<title>`) replaces `title.from` only while the source still has it: a
     * rename made meanwhile wins.
     */
    const complete = (
      id: SourceId,
      attempt: number,
      changes: SourceProgress,
      title: { readonly from: string; readonly to: string } | undefined,
      at: Date
    ) =>
      decodeOne(SourceRow, sql`
        update knowledge_sources set ${sql.update({ ...changes, updated_at: at })}, page_body = null, page_type = null
          ${title === undefined ? sql.literal("") : sql`, title = case when title = ${title.from} then ${title.to} else title end`}
        where id = ${id} and deleted_at is null and status = 'processing' and attempts = ${attempt}
        returning ${cols}`)

    /**
     * Its drafts first (a draft's row locked by a step being written waits for it, and no step follows), then every
     * chunk, drafts' included.
     */
    const softDelete = (id: SourceId, at: Date) =>
      execute(
        sql.withTransaction(
          Effect.all([
            sql`delete from knowledge_chunk_drafts where source_id = ${id}`,
            sql`delete from knowledge_chunks where source_id = ${id}`,
            sql`delete from knowledge_source_texts where source_id = ${id}`,
            sql`update knowledge_sources set deleted_at = ${at}, updated_at = ${at}, content = null, extracted_text = null
                where id = ${id}`
          ], { discard: true })
        )
      )

    /** Each indexed source's extracted text, oldest first (Q&A regeneration reads them); those with none left out. */
    const indexedTexts = (tenant: Tenant, agentId: AgentId) =>
      Effect.flatMap(
        decodeAll(IndexedText, sql`
          select id, title, extracted_text from knowledge_sources
          where agent_id = ${agentId} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
            and deleted_at is null and status = 'indexed'
          order by knowledge_sources.seq`),
        (rows) =>
          Effect.map(
            Effect.forEach(rows, (r) =>
              Effect.map(
                r.extracted_text === null ? readSourceText(sql, r.id) : Effect.succeed(Option.some(r.extracted_text)),
                Option.map((text) => ({ sourceId: r.id, title: r.title, text }))
              )
            ),
            (found) => found.flatMap(Option.toArray)
          )
      )

    return {
      insert, find, findAny, titles, byId, keptPageOf, inputOf, page, update, start, claimAndStart, startedBy, unstart, complete,
      softDelete, indexedTexts
    } as const
  })
}) {}
