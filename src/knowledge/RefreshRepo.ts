/**
 * SQL for a source's refresh state: queued, checked, replaced or gone (`Freshness.ts` runs refreshes). Each end of a
 * refresh makes the source idle again and lets go of a crawl's page kept for it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AgentId, SourceId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { decodeAll, decodeOne, execute } from "../db/Sql.js"
import { type SourceProgress, SourceRow, sourceColumns } from "./KnowledgeRepo.js"
import { readSourceText } from "./SourceTexts.js"

const ExtractedText = Schema.Struct({ extracted_text: Schema.NullOr(Schema.String) })

export class RefreshRepo extends Effect.Service<RefreshRepo>()("Knowledge/RefreshRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(sourceColumns)
    // every end of a refresh: idle again, and a crawl's page read for it let go
    const refreshDone = { refresh_status: "idle", page_body: null, page_type: null } as const
    // what a refresh reads again: an indexed page of a knowledge endpoint (a lesson's sources are its course's)
    const refreshable = sql.literal(
      "type = 'url' and status = 'indexed' and deleted_at is null and lesson_source_id is null"
    )

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

    return {
      queueRefresh, queueRefreshWith, knownPage, queueRound, byIds, refreshChecked, refreshCheckedAll, refreshEnded,
      unchangedText, replaced, markGone
    } as const
  })
}) {}
