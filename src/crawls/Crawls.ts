/**
 * Crawls through the API: start one (the crawl and its job in one transaction), list, poll, set its schedule,
 * cancel, and list the addresses it met. The walk itself is the job's (`CrawlJob.ts`); a schedule's runs are
 * `CrawlSchedule.ts`'s.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { CallerShape } from "../../schema/Auth.js"
import {
  type CrawlListParams,
  type CrawlPageListParams,
  crawlPageCap,
  type CreateCrawl,
  DEFAULT_CRAWL_LIMIT,
  type UpdateCrawl
} from "../../schema/Crawls.js"
import { CrawlInProgress, ParameterInvalid, ParameterMissing, ResourceMissing } from "../../schema/Errors.js"
import { type AgentId, CrawlId } from "../../schema/Ids.js"
import { type Tenant, tenantOf } from "../../schema/Tenant.js"
import { JobQueue, withAfterCommit } from "../../layers/JobQueue.js"
import { Agents, firstRun } from "../agents/Agents.js"
import { AppConfig } from "../Config.js"
import * as Sql from "../db/Sql.js"
import { Paginator, toPage } from "../http/Pagination.js"
import { agentExists } from "../knowledge/Guard.js"
import { mint } from "../Mint.js"
import { checkUrl } from "../net/UrlPolicy.js"
import { now } from "../Time.js"
import { Workspaces } from "../workspaces/Workspaces.js"
import { CrawlsRepo, toCrawl, toCrawlPage } from "./CrawlsRepo.js"
import { CRAWL_QUEUE, scheduleRun } from "./Queues.js"
import { normalise } from "./PageUrl.js"

export class Crawls extends Effect.Service<Crawls>()("Crawls/Crawls", {
  effect: Effect.gen(function* () {
    const transaction = Sql.transaction(yield* SqlClient.SqlClient)
    const repo = yield* CrawlsRepo
    const agents = yield* Agents
    const workspaces = yield* Workspaces
    const queue = yield* JobQueue
    const config = yield* AppConfig
    const pages = yield* Paginator

    const checked = (caller: CallerShape, raw: string, param: string) =>
      Effect.flatMap(checkUrl(raw, { environment: caller.environment, allowPrivate: config.allowPrivateUrls, param }), (url) => {
        const spelled = normalise(url.href)
        return spelled === undefined
          ? Effect.fail(new ParameterInvalid({ message: `${param} is not a web page's address`, param }))
          : Effect.succeed(new URL(spelled))
      })

    /** The request's `limit`, within 1 and the plan's cap; the default is capped too. */
    const limitFor = (tenant: Tenant, asked: number | undefined) =>
      Effect.gen(function* () {
        const workspace = yield* workspaces.find(tenant.workspaceId)
        const cap = Option.isSome(workspace) ? crawlPageCap[workspace.value.plan] : crawlPageCap.free
        if (asked === undefined) return Math.min(DEFAULT_CRAWL_LIMIT, cap)
        if (asked < 1 || asked > cap) {
          const plan = Option.isSome(workspace) ? workspace.value.plan : "free"
          return yield* new ParameterInvalid({ message: `limit must be 1 to ${cap} (the ${plan} plan's cap)`, param: "limit" })
        }
        return asked
      })

    const create = Effect.fn("Crawls.create")(function* (caller: CallerShape, agentId: AgentId, input: CreateCrawl) {
      const tenant = tenantOf(caller)
      yield* agentExists(agents, tenant, agentId)
      if (input.url === undefined) return yield* new ParameterMissing({ message: "Missing required parameter: url", param: "url" })
      const url = yield* checked(caller, input.url, "url")
      const sitemap = input.sitemap_url == null ? null : yield* checked(caller, input.sitemap_url, "sitemap_url")
      if (sitemap !== null && sitemap.origin !== url.origin) {
        return yield* new ParameterInvalid({ message: `sitemap_url must be on the site of url (${url.origin})`, param: "sitemap_url" })
      }
      const limit = yield* limitFor(tenant, input.limit)
      const id = yield* mint(CrawlId, "crl")
      const at = yield* now
      const schedule = input.schedule ?? "off"
      const nextRunAt = firstRun(schedule, at)
      const row = yield* transaction(
        Effect.gen(function* () {
          const inserted = yield* repo.insert(tenant, {
            id,
            agentId,
            url: url.href,
            origin: url.origin,
            sitemapUrl: sitemap?.href ?? null,
            keepToPath: input.keep_to_path ?? false,
            limit,
            at,
            schedule,
            nextRunAt,
            scheduledBy: null
          })
          if (Option.isNone(inserted)) {
            return yield* new CrawlInProgress({
              message: `The agent's crawl of ${url.origin} is queued or running; cancel it or wait for its end`,
              param: "url"
            })
          }
          yield* queue.enqueue({ queue: CRAWL_QUEUE, key: url.origin, group: tenant.workspaceId, payload: { crawlId: id } })
          if (nextRunAt !== null) yield* scheduleRun(queue, id, nextRunAt)
          return inserted.value
        })
      ).pipe(withAfterCommit)
      return toCrawl(row)
    })

    const found = (tenant: Tenant, agentId: AgentId, id: CrawlId) =>
      Effect.flatMap(repo.find(tenant, agentId, id), (row) =>
        Option.match(row, {
          onNone: () => Effect.fail(new ResourceMissing({ message: `No such crawl: '${id}'`, param: "crawl_id" })),
          onSome: Effect.succeed
        })
      )

    const list = Effect.fn("Crawls.list")(function* (caller: CallerShape, agentId: AgentId, params: CrawlListParams) {
      const tenant = tenantOf(caller)
      const page = yield* pages.parse(`agents/${agentId}/crawls`, params, { status: params.status })
      yield* agentExists(agents, tenant, agentId)
      const rows = yield* repo.page(tenant, agentId, Option.fromNullable(params.status), page)
      const { pagination, rows: kept } = toPage(rows, page)
      return { crawls: kept.map(toCrawl), pagination }
    })

    const retrieve = Effect.fn("Crawls.retrieve")(function* (caller: CallerShape, agentId: AgentId, id: CrawlId) {
      return toCrawl(yield* found(tenantOf(caller), agentId, id))
    })

    /** A crawl's schedule set anew: its next run a period from now (a run timed before no longer starts). */
    const update = Effect.fn("Crawls.update")(function* (caller: CallerShape, agentId: AgentId, id: CrawlId, input: UpdateCrawl) {
      const tenant = tenantOf(caller)
      yield* found(tenant, agentId, id)
      const at = yield* now
      const nextRunAt = firstRun(input.schedule, at)
      const row = yield* transaction(
        Effect.gen(function* () {
          const row = yield* repo.schedule(id, input.schedule, nextRunAt, at)
          if (nextRunAt !== null) yield* scheduleRun(queue, id, nextRunAt)
          return row
        })
      ).pipe(withAfterCommit)
      // a crawl is never deleted: the one just found is there to update
      return toCrawl(Option.getOrThrow(row))
    })

    /** A queued or running crawl stops before its next page; one that ended is answered as it is. */
    const cancel = Effect.fn("Crawls.cancel")(function* (caller: CallerShape, agentId: AgentId, id: CrawlId) {
      const crawl = yield* found(tenantOf(caller), agentId, id)
      // a crawl is never deleted: the one just found is there to update
      return toCrawl(Option.getOrElse(yield* repo.cancel(id, yield* now), () => crawl))
    })

    const pagesOf = Effect.fn("Crawls.pages")(function* (caller: CallerShape, agentId: AgentId, id: CrawlId, params: CrawlPageListParams) {
      const page = yield* pages.parse(`crawls/${id}/pages`, params, { outcome: params.outcome })
      yield* found(tenantOf(caller), agentId, id)
      const rows = yield* repo.pagesOf(id, Option.fromNullable(params.outcome), page)
      const { pagination, rows: kept } = toPage(rows, page)
      return { pages: kept.map(toCrawlPage), pagination }
    })

    return { create, list, retrieve, update, cancel, pagesOf } as const
  }),
  dependencies: [CrawlsRepo.Default, Agents.Default]
}) {}
