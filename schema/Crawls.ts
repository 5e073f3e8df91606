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
import { reference } from "./Reference.js"

/** Pages one crawl may read at most, by plan: a request's `limit` above it is refused. */
export const crawlPageCap: Record<Plan, number> = { free: 50, starter: 500, pro: 5_000, enterprise: 10_000 }
/** A crawl's `limit` when the request gives none (or the plan's cap, when lower). */
export const DEFAULT_CRAWL_LIMIT = 500

// What one crawl reads at most of what a site serves, whatever the site: each a bound on the work and memory a
// hostile or broken site can cost (the reference's "Bounds" lists them).
/** robots.txt bytes read (RFC 9309 asks crawlers to read at least 500 KiB); a larger file is unreadable. */
export const maxRobotsBytes = 500 * 1024
/** Rules kept for our robot: every address met is checked against each (a real site's file has a few hundred). */
export const maxRobotsRules = 10_000
/** The longest `Crawl-delay` honoured; a site asking more is read at this pace (a crawl must end). */
export const maxCrawlDelaySeconds = 60
/** The sitemap protocol's own bound on one sitemap's uncompressed size: a larger one is refused, not read. */
export const maxSitemapBytes = 50 * 1024 * 1024
/** Sitemap files read (indexes and children together): a bound on an index of indexes. */
export const maxSitemaps = 100
/** Uncompressed sitemap bytes read in all: two full sitemaps, as many addresses as a crawl meets. */
export const maxSitemapBytesPerCrawl = 2 * maxSitemapBytes
/** Addresses met (queued, read and skipped), each remembered and recorded: ten times the largest plan's page cap. */
export const maxAddressesMet = 100_000

export const CrawlStatus = Schema.Literal("queued", "running", "completed", "failed", "canceled")
export type CrawlStatus = typeof CrawlStatus.Type

/** Why an address met was not kept (see the reference below). */
export const SkipReason = Schema.Literal("disallowed", "off_origin", "duplicate", "over_limit", "not_html", "noindex", "known")
export type SkipReason = typeof SkipReason.Type

/**
 * `robots_unreadable`, `internal_error`: why a `failed` crawl stopped. `discovery_capped`: a `completed` crawl
 * reached one of the bounds on what a crawl reads (sitemaps, addresses met) and stopped discovering there.
 */
export const CrawlErrorCode = Schema.Literal("robots_unreadable", "internal_error", "discovery_capped")
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
  error: Schema.NullOr(Schema.Struct({ code: CrawlErrorCode, message: Schema.String })).annotations({
    description: "Why a `failed` crawl stopped; on a `completed` one, the bound it reached and stopped discovering at (`discovery_capped`)"
  }),
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

/** The group's reference (its tag's description in the OpenAPI document and on `/docs`), with the figures it quotes. */
const crawlsReference = reference("crawls", {
  DEFAULT_CRAWL_LIMIT,
  "crawlPageCap.free": crawlPageCap.free,
  "crawlPageCap.starter": crawlPageCap.starter,
  "crawlPageCap.pro": crawlPageCap.pro,
  "crawlPageCap.enterprise": crawlPageCap.enterprise,
  maxRobotsKiB: maxRobotsBytes / 1024,
  maxRobotsRules: maxRobotsRules.toLocaleString("en-US"),
  maxCrawlDelaySeconds,
  maxSitemapMB: maxSitemapBytes / (1024 * 1024),
  maxSitemaps,
  maxSitemapMBPerCrawl: maxSitemapBytesPerCrawl / (1024 * 1024),
  maxAddressesMet: maxAddressesMet.toLocaleString("en-US")
})

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
