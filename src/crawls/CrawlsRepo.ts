/**
 * SQL for crawls and the addresses they met. API reads are scoped to one workspace and environment; the crawl's
 * job and the pipeline's reports work by crawl id. Counters move by deltas in one statement, so two writers
 * (the walk, the pipeline settling a source) never lose each other's counts.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Environment } from "../../schema/Auth.js"
import { RefreshSchedule } from "../../schema/Agents.js"
import { type Crawl, CrawlErrorCode, type CrawlPage, CrawlStatus, type SkipReason } from "../../schema/Crawls.js"
import { AgentId, CrawlId, WorkspaceId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { decodeAll, decodeOne, execute } from "../db/Sql.js"
import type { PageRequest } from "../http/Pagination.js"
import { iso, isoOrNull } from "../Time.js"

export const CrawlRow = Schema.Struct({
  seq: Schema.String,
  id: CrawlId,
  workspace_id: WorkspaceId,
  environment: Environment,
  agent_id: AgentId,
  url: Schema.String,
  origin: Schema.String,
  sitemap_url: Schema.NullOr(Schema.String),
  keep_to_path: Schema.Boolean,
  page_limit: Schema.Int,
  status: CrawlStatus,
  pages_queued: Schema.Int,
  pages_kept: Schema.Int,
  pages_indexed: Schema.Int,
  pages_unindexed: Schema.Int,
  pages_unreadable: Schema.Int,
  skipped_disallowed: Schema.Int,
  skipped_off_origin: Schema.Int,
  skipped_duplicate: Schema.Int,
  skipped_over_limit: Schema.Int,
  skipped_not_html: Schema.Int,
  skipped_noindex: Schema.Int,
  skipped_known: Schema.Int,
  error_code: Schema.NullOr(CrawlErrorCode),
  error: Schema.NullOr(Schema.String),
  schedule: RefreshSchedule,
  next_run_at: Schema.NullOr(Schema.DateFromSelf),
  scheduled_by: Schema.NullOr(CrawlId),
  created_at: Schema.DateFromSelf,
  started_at: Schema.NullOr(Schema.DateFromSelf),
  finished_at: Schema.NullOr(Schema.DateFromSelf)
})
export type CrawlRow = typeof CrawlRow.Type

const columns = `seq::text as seq, id, workspace_id, environment, agent_id, url, origin, sitemap_url, keep_to_path,
  page_limit, status, pages_queued, pages_kept, pages_indexed, pages_unindexed, pages_unreadable, skipped_disallowed,
  skipped_off_origin, skipped_duplicate, skipped_over_limit, skipped_not_html, skipped_noindex, skipped_known, error_code, error,
  schedule, next_run_at, scheduled_by, created_at, started_at, finished_at`

export const toCrawl = (row: CrawlRow): Crawl => {
  const skipped = {
    disallowed: row.skipped_disallowed,
    off_origin: row.skipped_off_origin,
    duplicate: row.skipped_duplicate,
    over_limit: row.skipped_over_limit,
    not_html: row.skipped_not_html,
    noindex: row.skipped_noindex,
    known: row.skipped_known
  }
  const skippedAll = Object.values(skipped).reduce((a, b) => a + b, 0)
  return {
    id: row.id,
    object: "crawl",
    agent_id: row.agent_id,
    url: row.url,
    sitemap_url: row.sitemap_url,
    keep_to_path: row.keep_to_path,
    limit: row.page_limit,
    status: row.status,
    pages: {
      discovered: row.pages_queued + row.pages_kept + row.pages_unreadable + skippedAll,
      queued: row.pages_queued,
      kept: row.pages_kept,
      indexed: row.pages_indexed,
      indexing: row.pages_kept - row.pages_indexed - row.pages_unindexed,
      failed: row.pages_unreadable + row.pages_unindexed,
      skipped
    },
    error: row.error_code === null ? null : { code: row.error_code, message: row.error ?? "" },
    schedule: row.schedule,
    next_run_at: isoOrNull(row.next_run_at),
    scheduled_by: row.scheduled_by,
    created_at: iso(row.created_at),
    started_at: isoOrNull(row.started_at),
    finished_at: isoOrNull(row.finished_at)
  }
}

const PageRow = Schema.Struct({
  seq: Schema.String,
  url: Schema.String,
  outcome: Schema.Literal("kept", "skipped", "unreadable"),
  reason: Schema.NullOr(Schema.String),
  source_id: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf
})

export const toCrawlPage = (row: typeof PageRow.Type): CrawlPage => ({
  object: "crawl_page",
  url: row.url,
  outcome: row.outcome,
  reason: row.reason,
  source_id: row.source_id,
  created_at: iso(row.created_at)
})

export interface NewCrawl {
  readonly id: CrawlId
  readonly agentId: AgentId
  readonly url: string
  readonly origin: string
  readonly sitemapUrl: string | null
  readonly keepToPath: boolean
  readonly limit: number
  readonly at: Date
  readonly schedule: RefreshSchedule
  readonly nextRunAt: Date | null
  readonly scheduledBy: CrawlId | null
}

/** An address met, and what became of it. */
export interface MetAddress {
  readonly url: string
  readonly outcome: "kept" | "skipped" | "unreadable"
  /** A skip's reason, or what made the page unreadable. */
  readonly reason: string | null
  readonly sourceId: string | null
}

/** What a crawl's counters gain (skips by reason), and the addresses waiting now. */
export interface CountDelta {
  readonly kept: number
  readonly unreadable: number
  readonly skipped: Readonly<Partial<Record<SkipReason, number>>>
  readonly queued: number
}

const Url = Schema.Struct({ url: Schema.String })
const Status = Schema.Struct({ status: CrawlStatus })

export class CrawlsRepo extends Effect.Service<CrawlsRepo>()("Crawls/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    /** None when the agent's crawl of this origin is queued or running already (`crawls_active`). */
    const insert = (tenant: Tenant, crawl: NewCrawl) =>
      decodeOne(CrawlRow, sql`
        insert into crawls ${sql.insert({
          id: crawl.id,
          workspace_id: tenant.workspaceId,
          environment: tenant.environment,
          agent_id: crawl.agentId,
          url: crawl.url,
          origin: crawl.origin,
          sitemap_url: crawl.sitemapUrl,
          keep_to_path: crawl.keepToPath,
          page_limit: crawl.limit,
          status: "queued",
          schedule: crawl.schedule,
          next_run_at: crawl.nextRunAt,
          scheduled_by: crawl.scheduledBy,
          created_at: crawl.at,
          updated_at: crawl.at
        })}
        on conflict (agent_id, origin) where status in ('queued', 'running') do nothing
        returning ${cols}`)

    const find = (tenant: Tenant, agentId: AgentId, id: CrawlId) =>
      decodeOne(CrawlRow, sql`
        select ${cols} from crawls
        where id = ${id} and agent_id = ${agentId} and workspace_id = ${tenant.workspaceId}
          and environment = ${tenant.environment}`)

    const byId = (id: CrawlId) => decodeOne(CrawlRow, sql`select ${cols} from crawls where id = ${id}`)

    /** The crawl locked until the caller's transaction ends (a schedule's run: one process starts it). */
    const lockById = (id: CrawlId) => decodeOne(CrawlRow, sql`select ${cols} from crawls where id = ${id} for update`)

    /** A crawl's schedule and the instant of its next run (null: off); the row after. */
    const schedule = (id: CrawlId, schedule: RefreshSchedule, nextRunAt: Date | null, at: Date) =>
      decodeOne(CrawlRow, sql`
        update crawls set schedule = ${schedule}, next_run_at = ${nextRunAt}, updated_at = ${at}
        where id = ${id}
        returning ${cols}`)

    const page = (tenant: Tenant, agentId: AgentId, status: Option.Option<string>, page: PageRequest) =>
      decodeAll(CrawlRow, sql`
        select ${cols} from crawls
        where agent_id = ${agentId} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          ${Option.isSome(status) ? sql`and status = ${status.value}` : sql.literal("")}
          ${Option.isSome(page.after) ? sql`and seq < ${page.after.value}::bigint` : sql.literal("")}
        order by seq desc
        limit ${page.limit + 1}`)

    const pagesOf = (id: CrawlId, outcome: Option.Option<string>, page: PageRequest) =>
      decodeAll(PageRow, sql`
        select seq::text as seq, url, outcome, reason, source_id, created_at from crawl_pages
        where crawl_id = ${id}
          ${Option.isSome(outcome) ? sql`and outcome = ${outcome.value}` : sql.literal("")}
          ${Option.isSome(page.after) ? sql`and seq < ${page.after.value}::bigint` : sql.literal("")}
        order by seq desc
        limit ${page.limit + 1}`)

    /** The crawl's job begins (again, after a restart): none when it ended meanwhile (canceled). */
    const start = (id: CrawlId, at: Date) =>
      decodeOne(CrawlRow, sql`
        update crawls set status = 'running', started_at = coalesce(started_at, ${at}), updated_at = ${at}
        where id = ${id} and status in ('queued', 'running')
        returning ${cols}`)

    /**
     * Records addresses met, each once per crawl: the ones recorded now (an address met already, by a run before
     * a restart, is not), to count and, for a kept page, to make its source.
     */
    const record = (id: CrawlId, met: ReadonlyArray<MetAddress>, at: Date) =>
      met.length === 0
        ? Effect.succeed([] as ReadonlyArray<typeof Url.Type>)
        : decodeAll(Url, sql`
            insert into crawl_pages (crawl_id, url, outcome, reason, source_id, created_at)
            select ${id}, m.url, m.outcome, m.reason, m.source_id, ${at}
            from unnest(${met.map((m) => m.url)}::text[], ${met.map((m) => m.outcome)}::text[],
              ${met.map((m) => m.reason)}::text[], ${met.map((m) => m.sourceId)}::text[])
              as m(url, outcome, reason, source_id)
            on conflict (crawl_id, url) do nothing
            returning url`)

    /** Adds to the counters; the crawl's status after it (a cancel shows here), none for a crawl gone. */
    const count = (id: CrawlId, delta: CountDelta, at: Date) =>
      decodeOne(Status, sql`
        update crawls set
          pages_kept = pages_kept + ${delta.kept},
          pages_unreadable = pages_unreadable + ${delta.unreadable},
          skipped_disallowed = skipped_disallowed + ${delta.skipped.disallowed ?? 0},
          skipped_off_origin = skipped_off_origin + ${delta.skipped.off_origin ?? 0},
          skipped_duplicate = skipped_duplicate + ${delta.skipped.duplicate ?? 0},
          skipped_over_limit = skipped_over_limit + ${delta.skipped.over_limit ?? 0},
          skipped_not_html = skipped_not_html + ${delta.skipped.not_html ?? 0},
          skipped_noindex = skipped_noindex + ${delta.skipped.noindex ?? 0},
          skipped_known = skipped_known + ${delta.skipped.known ?? 0},
          pages_queued = ${delta.queued},
          updated_at = ${at}
        where id = ${id}
        returning status`).pipe(Effect.map(Option.map((row) => row.status)))

    /** The crawl's end, unless it ended already (canceled meanwhile): the row as ended, or none. */
    const finish = (
      id: CrawlId,
      end: { readonly status: "completed" | "failed"; readonly error: { readonly code: CrawlErrorCode; readonly message: string } | null },
      at: Date
    ) =>
      decodeOne(CrawlRow, sql`
        update crawls set status = ${end.status}, error_code = ${end.error?.code ?? null}, error = ${end.error?.message ?? null},
          pages_queued = 0, finished_at = ${at}, updated_at = ${at}
        where id = ${id} and status in ('queued', 'running')
        returning ${cols}`)

    /** Cancels a queued or running crawl; the row as it is after (unchanged when it had ended). */
    const cancel = (id: CrawlId, at: Date) =>
      decodeOne(CrawlRow, sql`
        update crawls set status = case when status in ('queued', 'running') then 'canceled' else status end,
          pages_queued = case when status in ('queued', 'running') then 0 else pages_queued end,
          finished_at = case when status in ('queued', 'running') then ${at} else finished_at end,
          updated_at = case when status in ('queued', 'running') then ${at} else updated_at end
        where id = ${id}
        returning ${cols}`)

    /** A kept page's source settled: one more indexed, or one more failed. */
    const settled = (id: string, indexed: boolean, at: Date) =>
      indexed
        ? execute(sql`update crawls set pages_indexed = pages_indexed + 1, updated_at = ${at} where id = ${id}`)
        : execute(sql`update crawls set pages_unindexed = pages_unindexed + 1, updated_at = ${at} where id = ${id}`)

    return { insert, find, byId, lockById, schedule, page, pagesOf, start, record, count, finish, cancel, settled } as const
  })
}) {}
