/**
 * Crawls: an agent learns a whole site from its address. A crawl reads the site's robots.txt and sitemaps,
 * then its pages one at a time, following their links within the site; every page it keeps becomes a `url`
 * source of the agent, indexed by the same serial pipeline as any other.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, type Plan, RequiredScope } from "./Auth.js"
import { Envelope, ListEnvelope, PageParams, Timestamp } from "./Envelope.js"
import {
  ApiError,
  CrawlInProgress,
  InvalidCursor,
  InvalidLimit,
  ParameterInvalid,
  ParameterMissing,
  ResourceMissing,
  UrlNotAllowed
} from "./Errors.js"
import { RefreshSchedule } from "./Agents.js"
import { AgentId, CrawlId } from "./Ids.js"
import { StrictStruct } from "./Payload.js"

/** Pages one crawl may read at most, by plan: a request's `limit` above it is refused. */
export const crawlPageCap: Record<Plan, number> = { free: 50, starter: 500, pro: 5_000, enterprise: 10_000 }
/** A crawl's `limit` when the request gives none (or the plan's cap, when lower). */
export const DEFAULT_CRAWL_LIMIT = 500

export const CrawlStatus = Schema.Literal("queued", "running", "completed", "failed", "canceled")
export type CrawlStatus = typeof CrawlStatus.Type

/** Why an address met was not kept (see the reference below). */
export const SkipReason = Schema.Literal("disallowed", "off_origin", "duplicate", "over_limit", "not_html", "noindex", "known")
export type SkipReason = typeof SkipReason.Type

export const CrawlErrorCode = Schema.Literal("robots_unreadable", "internal_error")
export type CrawlErrorCode = typeof CrawlErrorCode.Type

const count = (description: string) => Schema.Int.annotations({ description })

export const CrawlPages = Schema.Struct({
  discovered: count("Addresses met in all: queued, kept, failed and skipped together"),
  queued: count("Waiting to be read"),
  kept: count("Read and kept: each is a `url` source of the agent"),
  indexed: count("Kept pages whose source is indexed"),
  indexing: count("Kept pages whose source waits for indexing or is being indexed: 0 once every one has settled"),
  failed: count("Pages that could not be read (an error status, no answer), and kept pages whose source failed"),
  skipped: Schema.Struct({
    disallowed: count("Refused by the site's robots.txt"),
    off_origin: count("On another site (or outside `keep_to_path`'s directory), or redirected there"),
    duplicate: count("The same page as one met already (a redirect or a canonical link to it)"),
    over_limit: count("Met once the crawl's `limit` was reached"),
    not_html: count("Not a page: an image, a style sheet, an archive…"),
    noindex: count("The page asks robots not to index it (`<meta name=\"robots\" content=\"noindex\">`)"),
    known: count("Already a `url` source of the agent (an earlier crawl's, say): refreshed from the page read, not kept twice")
  })
})

export const Crawl = Schema.Struct({
  id: CrawlId,
  object: Schema.Literal("crawl"),
  agent_id: AgentId,
  url: Schema.String.annotations({ description: "Where the crawl started" }),
  sitemap_url: Schema.NullOr(Schema.String),
  keep_to_path: Schema.Boolean,
  limit: Schema.Int.annotations({ description: "Pages it reads at most" }),
  status: CrawlStatus,
  pages: CrawlPages,
  error: Schema.NullOr(Schema.Struct({ code: CrawlErrorCode, message: Schema.String })),
  schedule: RefreshSchedule.annotations({
    description: "`daily` or `weekly`: the site is crawled again on that schedule, each run a new crawl; `off`: never"
  }),
  next_run_at: Schema.NullOr(Timestamp).annotations({ description: "When the schedule's next run starts (null: off)" }),
  scheduled_by: Schema.NullOr(CrawlId).annotations({
    description: "The crawl whose schedule started this one (null: asked for through the API)"
  }),
  created_at: Timestamp,
  started_at: Schema.NullOr(Timestamp),
  finished_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "Crawl" })
export type Crawl = typeof Crawl.Type

export const CrawlPage = Schema.Struct({
  object: Schema.Literal("crawl_page"),
  url: Schema.String,
  outcome: Schema.Literal("kept", "skipped", "unreadable"),
  reason: Schema.NullOr(Schema.String).annotations({
    description: "Skipped: the reason (`disallowed`, `off_origin`, …); unreadable: what went wrong; kept: null"
  }),
  source_id: Schema.NullOr(Schema.String).annotations({ description: "Kept: the source it became (src_...)" }),
  created_at: Timestamp
}).annotations({ identifier: "CrawlPage" })
export type CrawlPage = typeof CrawlPage.Type

export const CreateCrawl = StrictStruct({
  url: Schema.optional(Schema.String).annotations({ description: "The site's page to start from: its origin is the crawl's" }),
  sitemap_url: Schema.optional(Schema.NullOr(Schema.String)).annotations({
    description: "A sitemap of the same site to read besides those robots.txt names (and `/sitemap.xml`)"
  }),
  keep_to_path: Schema.optional(Schema.Boolean).annotations({
    description: "Keep to the start page's directory (`/docs/` of `/docs/start`); default false: the whole site"
  }),
  limit: Schema.optional(Schema.Int).annotations({
    description: `Pages to read at most, 1 to the plan's cap; default ${DEFAULT_CRAWL_LIMIT} (or the cap, when lower)`
  }),
  schedule: Schema.optional(RefreshSchedule).annotations({
    description: "Crawl the site again `daily` or `weekly`, the first run a period after this one is asked for; default `off`"
  })
}).annotations({ identifier: "CreateCrawl" })
export type CreateCrawl = typeof CreateCrawl.Type

export const UpdateCrawl = StrictStruct({
  schedule: RefreshSchedule.annotations({ description: "`daily`, `weekly` (the next run a period from now) or `off`" })
}).annotations({ identifier: "UpdateCrawl" })
export type UpdateCrawl = typeof UpdateCrawl.Type

export const CrawlListParams = Schema.Struct({ ...PageParams.fields, status: Schema.optional(CrawlStatus) })
export type CrawlListParams = typeof CrawlListParams.Type

export const CrawlPageListParams = Schema.Struct({
  ...PageParams.fields,
  outcome: Schema.optional(Schema.Literal("kept", "skipped", "unreadable"))
})
export type CrawlPageListParams = typeof CrawlPageListParams.Type

const agentPath = HttpApiSchema.param("agent_id", AgentId)
const crawlPath = HttpApiSchema.param("crawl_id", CrawlId)
const missing = ApiError(ResourceMissing)

/** The reference of this group, in Markdown: its tag's description in the OpenAPI document and on `/docs`. */
const crawlsReference = [
  "A crawl learns a whole website for an agent from one address: its pages become the agent's `url` sources.",
  "",
  "```sh",
  "curl -s http://127.0.0.1:3000/v1/agents/agt_…/crawls -H \"Authorization: Bearer $KEY\" \\",
  "     -H 'Content-Type: application/json' -d '{\"url\":\"https://help.example.com/\",\"limit\":200}'",
  "```",
  "",
  "- **What it reads.** The site's `robots.txt` first, for our user agent `AssistantPlatformBot` (its `User-Agent`",
  "  is `AssistantPlatformBot/1.0 (…)`): its `Disallow`/`Allow` rules and `Crawl-delay` are obeyed. A robots.txt",
  "  that answers 5xx or not at all stops the crawl (`failed`, `error.code: robots_unreadable`), as RFC 9309 asks;",
  "  a 4xx means no rules. Then the sitemaps robots.txt names, `sitemap_url` and `/sitemap.xml` (sitemap indexes",
  "  and gzip-encoded sitemaps too, of the same site, 100 files at most), then the pages: the start page, the",
  "  sitemaps' pages and the links of each page read, in the order met.",
  "- **What it keeps.** Pages of the start page's origin (and directory, with `keep_to_path`), each once: an",
  "  address is spelled one way (no fragment, no tracking parameters such as `utm_*`, its query sorted), a",
  "  redirect is followed within the site only, a page naming another as its `<link rel=\"canonical\">` met",
  "  already is a duplicate, a page marked `noindex` is not kept (its links are followed). HTML pages, PDFs and",
  "  plain text are kept; images and other files are not.",
  "- **Politeness.** One request at a time per site, across every crawl of every workspace (a second crawl of the",
  "  same site waits for the first), `Crawl-delay` seconds apart (60 at most).",
  `- **Limit.** \`limit\` pages are read at most (kept or not), ${DEFAULT_CRAWL_LIMIT} by default; each plan caps it:`,
  `  free ${crawlPageCap.free}, starter ${crawlPageCap.starter}, pro ${crawlPageCap.pro}, enterprise`,
  `  ${crawlPageCap.enterprise}. Above the cap, \`400 parameter_invalid\` (\`param: limit\`). Addresses met past it`,
  "  are skipped `over_limit`.",
  "- **Sources.** Each page kept becomes a `url` source of the agent at once (its title the page's own), carrying",
  "  the bytes the crawl read, so the page is not fetched again; sources are indexed one at a time per agent, in",
  "  order, as a batch's are, with their own `knowledge.source.indexed` / `knowledge.source.failed` events.",
  "- **Progress.** `status` is `queued`, `running`, then `completed` (every page it keeps is a source, queued for",
  "  indexing), `failed` or `canceled`. `pages` counts `discovered`, `queued` (waiting to be read), `kept`,",
  "  `indexed`, `indexing` and `failed` (these go on moving after `completed`, as the sources settle: a crawl's",
  "  pages are all indexed or failed once it is `completed` with `indexing` 0), and",
  "  `skipped` by reason: `disallowed`, `off_origin`, `duplicate`, `over_limit`, `not_html`, `noindex`, `known`. Every",
  "  address met is listed with what became of it at `GET …/crawls/{crawl_id}/pages` (`outcome`: `kept`,",
  "  `skipped` with its `reason`, `unreadable` with what went wrong).",
  "- **One at a time per site.** An agent's second crawl of a site whose crawl is `queued` or `running` is",
  "  `409 crawl_in_progress`.",
  "- **Cancel.** `POST …/cancel` stops a `queued` or `running` crawl before its next page (`canceled`); the",
  "  sources it made stay. A crawl that ended is answered as it is.",
  "- **Events.** `crawl.completed` (`crawl`) when the walk ends, `crawl.failed` (`crawl`, `error`) when it cannot",
  "  go on; both in the transaction that records the crawl's end.",
  "- **Crawling again.** A page the agent already has as a `url` source (from an earlier crawl, or added by URL) is",
  "  not kept twice: it is skipped `known` and refreshed from the bytes this crawl read (see the Knowledge group's",
  "  refresh), so a site crawled again finds its new pages and brings the known ones up to date.",
  "- **Schedule.** A crawl with `schedule` `daily` or `weekly` (at creation, or `PATCH` it later; `off` stops it)",
  "  crawls its site again a period after it was asked for, then every period: each run is a new crawl with the",
  "  same `url`, `sitemap_url`, `keep_to_path` and `limit` (within the plan's cap then), `scheduled_by` the crawl",
  "  holding the schedule, so it finds the site's new pages and refreshes the known ones. A run that finds the",
  "  agent's crawl of the site still under way is skipped; the next one keeps its time (`next_run_at`).",
  "- **Restarts.** A crawl is a job: a crawl under way when the service stops is run again from its start by the",
  "  next process, keeping no page twice and counting none twice (pages it had read are read again)."
].join("\n")

export class CrawlsGroup extends HttpApiGroup.make("crawls")
  .add(
    HttpApiEndpoint.post("create")`/v1/agents/${agentPath}/crawls`
      .setPayload(CreateCrawl)
      .addSuccess(Envelope(Crawl), { status: 201 })
      .addError(missing)
      .addError(ApiError(ParameterInvalid))
      .addError(ApiError(ParameterMissing))
      .addError(ApiError(UrlNotAllowed))
      .addError(ApiError(CrawlInProgress))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Body `url` (the URL policy of sources: `url_not_allowed`), optional `sitemap_url` (same site), " +
          "`keep_to_path`, `limit`, `schedule`; `201`, the crawl `queued`; `409 crawl_in_progress` while the agent's crawl of " +
          "the same site is queued or running"
      )
      .annotate(OpenApi.Summary, "Crawl a website: its pages become the agent's sources")
  )
  .add(
    HttpApiEndpoint.get("list")`/v1/agents/${agentPath}/crawls`
      .setUrlParams(CrawlListParams)
      .addSuccess(ListEnvelope(Crawl))
      .addError(missing)
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:knowledge")
      .annotate(OpenApi.Summary, "List an agent's crawls, newest first; filter `status`")
  )
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/agents/${agentPath}/crawls/${crawlPath}`
      .addSuccess(Envelope(Crawl))
      .addError(missing)
      .annotate(RequiredScope, "read:knowledge")
      .annotate(OpenApi.Summary, "Retrieve a crawl and its progress")
  )
  .add(
    HttpApiEndpoint.patch("update")`/v1/agents/${agentPath}/crawls/${crawlPath}`
      .setPayload(UpdateCrawl)
      .addSuccess(Envelope(Crawl))
      .addError(missing)
      .addError(ApiError(ParameterInvalid))
      .addError(ApiError(ParameterMissing))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Body `schedule`: `daily` or `weekly` crawls the site again a period from now, then every period (each run a " +
          "new crawl, `scheduled_by` this one); `off` stops it. Any crawl may hold a schedule, whatever its status"
      )
      .annotate(OpenApi.Summary, "Set a crawl's schedule: crawl the site again daily, weekly, or never")
  )
  .add(
    HttpApiEndpoint.post("cancel")`/v1/agents/${agentPath}/crawls/${crawlPath}/cancel`
      .addSuccess(Envelope(Crawl))
      .addError(missing)
      .annotate(RequiredScope, "write:knowledge")
      .annotate(OpenApi.Summary, "Cancel a queued or running crawl; one that ended is answered as it is")
  )
  .add(
    HttpApiEndpoint.get("pages")`/v1/agents/${agentPath}/crawls/${crawlPath}/pages`
      .setUrlParams(CrawlPageListParams)
      .addSuccess(ListEnvelope(CrawlPage))
      .addError(missing)
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:knowledge")
      .annotate(OpenApi.Summary, "Every address a crawl met and what became of it, newest first; filter `outcome`")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, crawlsReference)
  .annotate(OpenApi.Title, "Crawls") {}
