/**
 * SQL for knowledge sources and their chunks. API reads are scoped to one
 * workspace and environment; the pipeline works by source id (its job names it).
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
import { realArrayLiteral } from "../db/Columns.js"
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
const ChunkText = Schema.Struct({ id: Schema.String, content: Schema.String })
const Present = Schema.Struct({ present: Schema.Boolean })
const Count = Schema.Struct({ n: Schema.Number })
const IndexedText = Schema.Struct({ id: SourceId, title: Schema.String, extracted_text: Schema.NullOr(Schema.String) })
const ExtractedText = Schema.Struct({ extracted_text: Schema.NullOr(Schema.String) })
const SourceTitle = Schema.Struct({ id: SourceId, title: Schema.String })

// `seq` and `size_bytes` are bigints, read as text; queries order by the column, not the alias
const columns = `knowledge_sources.seq::text as seq, id, workspace_id, environment, agent_id, type, title, status, phase,
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

const vectorLiteral = (vector: ReadonlyArray<number>) => realArrayLiteral(vector.map((x) => (Number.isFinite(x) ? x : 0)))

export class KnowledgeRepo extends Effect.Service<KnowledgeRepo>()("Knowledge/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)
    // every end of a refresh: idle again, and a crawl's page read for it let go
    const refreshDone = { refresh_status: "idle", page_body: null, page_type: null } as const
    // what a refresh reads again: an indexed page of a knowledge endpoint (a lesson's sources are its course's)
    const refreshable = sql.literal(
      "type = 'url' and status = 'indexed' and deleted_at is null and lesson_source_id is null"
    )

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
     * A refresh asked for: the source, an indexed `url` one of a knowledge endpoint, waits `queued` (none when it is
     * not such a source, or a refresh is already queued).
     */
    const queueRefresh = (id: SourceId, at: Date) =>
      decodeOne(SourceRow, sql`
        update knowledge_sources set refresh_status = 'queued', updated_at = ${at}
        where id = ${id} and ${refreshable} and refresh_status = 'idle'
        returning ${cols}`)

    /**
     * A refresh round's next batch: the agent's next `limit` sources after `seq` `after` (in `seq` order, through
     * `knowledge_sources_page`), the refreshable ones among them made `queued` (`queued`: their ids), with the last
     * `seq` reached and how many were read: fewer than `limit`, the round has read its last source.
     */
    const queueRound = (agentId: AgentId, after: string, limit: number) =>
      decodeAll(Schema.Struct({ seq: Schema.String, queued: Schema.NullOr(SourceId) }), sql`
        with batch as (
          select id, seq from knowledge_sources
          where agent_id = ${agentId} and deleted_at is null and seq > ${after}::bigint
          order by seq limit ${limit}
        ), queued as (
          update knowledge_sources s set refresh_status = 'queued'
          from batch where s.id = batch.id and ${refreshable} and s.refresh_status = 'idle'
          returning s.id
        )
        select batch.seq::text as seq, queued.id as queued
        from batch left join queued on queued.id = batch.id order by batch.seq`).pipe(
        Effect.map((rows) => ({
          queued: rows.flatMap((r) => (r.queued === null ? [] : [r.queued])),
          reached: rows.length === 0 ? after : rows[rows.length - 1]!.seq,
          read: rows.length
        }))
      )

    /** The sources a refresh batch checks, by id alone (deleted ones left out). */
    const byIds = (ids: ReadonlyArray<SourceId>) =>
      ids.length === 0
        ? Effect.succeed([])
        : decodeAll(SourceRow, sql`select ${cols} from knowledge_sources where id in ${sql.in(ids)} and deleted_at is null order by seq`)

    /** A refresh that re-indexed nothing: the page read (its validators kept), the source idle again. */
    const refreshChecked = (id: SourceId, at: Date, validators: Partial<Pick<SourceRow, "etag" | "last_modified">> = {}) =>
      execute(sql`
        update knowledge_sources set ${sql.update({ ...validators, ...refreshDone, checked_at: at, gone_since: null })}
        where id = ${id} and deleted_at is null`)

    /** `refreshChecked` for the pages of a batch that answered `304`, in one statement. */
    const refreshCheckedAll = (ids: ReadonlyArray<SourceId>, at: Date) =>
      ids.length === 0
        ? Effect.void
        : execute(sql`
            update knowledge_sources set ${sql.update({ ...refreshDone, checked_at: at, gone_since: null })}
            where id in ${sql.in(ids)} and deleted_at is null`)

    /**
     * Refreshes that found nothing to do (the source no longer indexed), could not read the page this time, or were
     * given up: idle again, their knowledge as it was; tried at `at`, so a scheduled round moves on.
     */
    const refreshEnded = (ids: ReadonlyArray<SourceId>, at: Date) =>
      ids.length === 0
        ? Effect.void
        : execute(sql`
            update knowledge_sources set ${sql.update({ ...refreshDone, checked_at: at })}
            where id in ${sql.in(ids)} and deleted_at is null`)

    /**
     * The source's extracted text: its pieces (`ChunkDraftsRepo.ts`), or as written before them, in one value; none
     * when it has none.
     */
    const textOf = (id: SourceId) =>
      Effect.flatMap(
        decodeAll(ExtractedText, sql`select extracted_text from knowledge_sources where id = ${id}`),
        ([row]) => (row?.extracted_text == null ? readSourceText(sql, id) : Effect.succeed(Option.some(row.extracted_text)))
      )

    /**
     * A refresh that read the page's text again: when it is the text indexed, recorded as `refreshChecked` does;
     * whether it was the same. A refresh of the source runs alone, so its text does not change between the two.
     */
    const unchangedText = (id: SourceId, text: string, at: Date, validators: Pick<SourceRow, "etag" | "last_modified">) =>
      Effect.gen(function* () {
        const indexed = yield* textOf(id)
        if (Option.isNone(indexed) || indexed.value !== text) return false
        const rows = yield* decodeAll(Schema.Struct({ id: SourceId }), sql`
          update knowledge_sources set ${sql.update({ ...validators, ...refreshDone, checked_at: at, gone_since: null })}
          where id = ${id} and deleted_at is null
          returning id`)
        return rows.length === 1
      })

    /** A changed page's new state, fenced on the source still indexed; none when it is not. */
    const replaced = (id: SourceId, changes: SourceProgress & { readonly changed_at: Date; readonly checked_at: Date }, at: Date) =>
      decodeOne(SourceRow, sql`
        update knowledge_sources
        set ${sql.update({ ...changes, ...refreshDone, gone_since: null, updated_at: at })}
        where id = ${id} and deleted_at is null and status = 'indexed'
        returning ${cols}`)

    /** A page that answers 404 or 410: gone since now, unless it already was. */
    const markGone = (id: SourceId, at: Date) =>
      decodeOne(SourceRow, sql`
        update knowledge_sources
        set gone_since = coalesce(gone_since, ${at}), checked_at = ${at}, refresh_status = 'idle', page_body = null,
          page_type = null, updated_at = ${at}
        where id = ${id} and deleted_at is null
        returning ${cols}`)

    /** The agent's `url` source of this address, if it has one (through `knowledge_sources_by_url`). */
    /** The agent's `url` source of a page known by any of `urls` (a redirect's two addresses), the first's before. */
    const knownPage = (tenant: Tenant, agentId: AgentId, urls: ReadonlyArray<string>) =>
      decodeOne(Schema.Struct({ id: SourceId }), sql`
        select id from knowledge_sources
        where agent_id = ${agentId} and source_ref = any(${urls}::text[]) and type = 'url' and deleted_at is null
          and lesson_source_id is null and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
        order by array_position(${urls}::text[], source_ref)
        limit 1`).pipe(Effect.map(Option.map((r) => r.id)))

    /**
     * A refresh from a page a crawl read: the bytes kept on the source for its refresh to read, and the source
     * `queued`, unless it is not refreshable or a refresh is already queued (none).
     */
    const queueRefreshWith = (id: SourceId, page: { readonly contentType: string; readonly body: Uint8Array }, at: Date) =>
      decodeOne(SourceRow, sql`
        update knowledge_sources set refresh_status = 'queued', page_type = ${page.contentType}, page_body = ${page.body},
          updated_at = ${at}
        where id = ${id} and ${refreshable} and refresh_status = 'idle'
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

    // re-embedding (Embeddings.ts) walks every chunk, of every workspace, by primary key

    /** At most `limit` chunks after `cursor` (null: from the first), in id order: their text to embed again. */
    const chunksAfter = (cursor: string | null, limit: number) =>
      decodeAll(ChunkText, sql`
        select id, content from knowledge_chunks ${cursor === null ? sql.literal("") : sql`where id > ${cursor}`}
        order by id limit ${limit}`)

    /** New vectors of chunks: a chunk's text never changes (a changed page replaces its chunks), a gone one is skipped. */
    const setChunkEmbeddings = (rows: ReadonlyArray<{ readonly id: string; readonly embedding: ReadonlyArray<number> }>) =>
      rows.length === 0
        ? Effect.void
        : execute(sql`
            update knowledge_chunks c set embedding = r.embedding::real[]
            from jsonb_to_recordset(${JSON.stringify(rows.map((r) => ({ id: r.id, embedding: vectorLiteral(r.embedding) })))}::text::jsonb)
              as r(id text, embedding text)
            where c.id = r.id`)

    const anyChunk = Effect.map(
      decodeAll(Present, sql`select exists (select 1 from knowledge_chunks) as present`),
      (rows) => rows[0]?.present ?? false
    )

    const countChunks = Effect.map(decodeAll(Count, sql`select count(*)::int as n from knowledge_chunks`), (rows) => rows[0]?.n ?? 0)

    return {
      insert, find, findAny, titles, byId, keptPageOf, inputOf, page, update, start, claimAndStart, startedBy, unstart, complete,
      queueRefresh, queueRefreshWith, knownPage, queueRound, byIds, refreshChecked, refreshCheckedAll, refreshEnded, unchangedText, replaced, markGone, softDelete,
      indexedTexts, chunksAfter, setChunkEmbeddings, anyChunk, countChunks
    } as const
  })
}) {}
