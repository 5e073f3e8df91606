/**
 * Knowledge sources: text, URLs, uploaded files and CSV Q&A fed to an agent.
 * Sources of one agent are processed one at a time, in creation order; each
 * moves `pending` -> `processing` -> `indexed` | `failed` through its phases.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, type Plan, RequiredScope } from "./Auth.js"
import { Deleted, Envelope, ListEnvelope, PageParams, Timestamp } from "./Envelope.js"
import {
  AiUnavailable,
  ApiError,
  FileNotUploaded,
  InvalidCursor,
  InvalidIdempotencyKey,
  InvalidLimit,
  LimitReached,
  ParameterInvalid,
  ParameterMissing,
  PayloadTooLarge,
  ResourceMissing,
  SourceNotRefreshable,
  TooManyUrls,
  UrlNotAllowed
} from "./Errors.js"
import { AgentId, FileId, SourceId } from "./Ids.js"
import { LanguageTag } from "./Languages.js"
import { StrictStruct } from "./Payload.js"
import { reference } from "./Reference.js"

/** Refreshes of `url` sources (on demand and scheduled) per calendar month (UTC) and environment; null: no cap. */
export const monthlyRefreshCap: Record<Plan, number | null> = { free: 1_000, starter: 10_000, pro: 100_000, enterprise: null }

/** URLs per batch call. */
export const MAX_BATCH_URLS = 500
/** `csv_qa` content: 1 MB. */
export const MAX_CSV_BYTES = 1024 * 1024
/** `text` content: 1 MB as well (larger documents go through files). */
export const MAX_TEXT_BYTES = 1024 * 1024

export const SourceType = Schema.Literal("text", "url", "file_id", "csv_qa")
export type SourceType = typeof SourceType.Type

export const SourceStatus = Schema.Literal("pending", "processing", "indexed", "failed")
export type SourceStatus = typeof SourceStatus.Type

export const SourcePhase = Schema.Literal(
  "queued",
  "fetching",
  "extracting",
  "categorizing",
  "generating_qa",
  "vectorizing",
  "done"
)
export type SourcePhase = typeof SourcePhase.Type

/**
 * Machine codes of a failed source, beside the human `error` string. `internal_error`: processing itself broke
 * (a bug, the database away) at every attempt; the source failed after the queue's last attempt, and sending it
 * again may work once the cause is fixed. `processing_stopped`: every attempt stopped the worker processing it
 * (its process killed before the attempt ended, a document a decoder crashes on, say); the source was given up
 * without another attempt, and sending it again as it is will likely end the same way.
 */
export const SourceErrorCode = Schema.Literal(
  "url_not_allowed",
  "not_found",
  "http_error",
  "fetch_failed",
  "timeout",
  "too_large",
  "unsupported_type",
  "empty_content",
  "file_missing",
  "ocr_failed",
  "ai_failed",
  "csv_invalid",
  "audio_too_long",
  "transcription_failed",
  "internal_error",
  "processing_stopped"
).annotations({
  description:
    "Why the source failed. `internal_error`: processing broke at every attempt (not the content's fault); " +
    "send the source again later. `processing_stopped`: every attempt stopped the worker processing it before it " +
    "ended (a document that crashes a decoder, say); it was given up, and the same content will likely fail again"
})
export type SourceErrorCode = typeof SourceErrorCode.Type

export const RefreshStatus = Schema.Literal("idle", "queued")
export type RefreshStatus = typeof RefreshStatus.Type

/** A `url` source's freshness: what its refreshes found. */
export const SourceRefresh = Schema.Struct({
  status: RefreshStatus.annotations({ description: "`queued` while a refresh waits for its turn or runs; `idle` otherwise" }),
  checked_at: Schema.NullOr(Timestamp).annotations({ description: "When a refresh last read the page (null: never refreshed)" }),
  changed_at: Schema.NullOr(Timestamp).annotations({
    description: "When a refresh last found the page changed and re-indexed it (null: unchanged since it was indexed)"
  }),
  gone_since: Schema.NullOr(Timestamp).annotations({
    description:
      "Since when the page answers 404 or 410 (null: it does not); its knowledge is removed once the agent's " +
      "`knowledge_refresh.gone_grace_days` have passed"
  })
}).annotations({ identifier: "KnowledgeSourceRefresh" })
export type SourceRefresh = typeof SourceRefresh.Type

export const KnowledgeSource = Schema.Struct({
  id: SourceId,
  object: Schema.Literal("knowledge_source"),
  agent_id: AgentId,
  type: SourceType,
  title: Schema.String.annotations({ description: "Given, or the page/file title once read" }),
  status: SourceStatus.annotations({ description: "`pending` → `processing` → `indexed` or `failed`" }),
  phase: SourcePhase.annotations({
    description: "The step running: `queued`, `fetching`, `extracting`, `categorizing`, `generating_qa`, `vectorizing`, `done`"
  }),
  progress: Schema.Int.annotations({ description: "0 to 100" }),
  attempts: Schema.Int.annotations({
    description: "Processing attempts so far (transient failures retry, 3 in all; processing that breaks, 5)"
  }),
  next_attempt_at: Schema.NullOr(Timestamp).annotations({
    description: "Set while a transient failure (or processing that broke, `internal_error`) waits for its retry"
  }),
  error: Schema.NullOr(Schema.String).annotations({ description: "Why the source failed (or the last transient failure)" }),
  error_code: Schema.NullOr(SourceErrorCode),
  source_ref: Schema.String.annotations({ description: "The URL, the file id, or `inline` for text and CSV" }),
  size_bytes: Schema.Int.annotations({ description: "Bytes read (the content, the page or the file)" }),
  chunk_count: Schema.Int.annotations({ description: "Passages of about 1,200 characters indexed for retrieval" }),
  qa_count: Schema.Int.annotations({ description: "Q&A drawn from this source (generated, or imported from CSV)" }),
  language: Schema.NullOr(LanguageTag).annotations({
    description:
      "The language its text was detected in when it was read (the agent's `language` where the text was too short " +
      "to tell; English where that is `auto`); its passages and Q&A are indexed with that language's word forms. " +
      "Null until it is read. The tags are listed in the Agents group's reference (Languages)"
  }),
  refresh: Schema.NullOr(SourceRefresh).annotations({ description: "A `url` source's freshness; null for the other types" }),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "KnowledgeSource" })
export type KnowledgeSource = typeof KnowledgeSource.Type

/** `POST …/knowledge/refresh`: a round over every `url` source of the agent, begun. */
export const KnowledgeRefreshRound = Schema.Struct({
  object: Schema.Literal("knowledge_refresh_round"),
  agent_id: AgentId,
  started_at: Timestamp.annotations({
    description: "When the round began (a round already under way when asked for is the one answered)"
  })
}).annotations({ identifier: "KnowledgeRefreshRound" })
export type KnowledgeRefreshRound = typeof KnowledgeRefreshRound.Type

const Title = Schema.Trim.pipe(Schema.maxLength(500, { message: () => "title must be at most 500 characters" }))

/**
 * One shape for the four types: which fields each needs is checked by the
 * program, so a missing one is `parameter_missing` naming it.
 */
export const CreateSource = StrictStruct({
  type: SourceType,
  title: Schema.optional(Title).annotations({ description: "`text`: required; otherwise optional" }),
  content: Schema.optional(Schema.String).annotations({
    description: "`text`: the document (1 MB); `csv_qa`: CSV `question,answer[,category]` (1 MB, `413` beyond)"
  }),
  url: Schema.optional(Schema.String).annotations({ description: "`url`: http(s) page, text or PDF" }),
  file_id: Schema.optional(FileId).annotations({ description: "`file_id`: an `uploaded` file" })
}).annotations({ identifier: "CreateKnowledgeSource" })
export type CreateSource = typeof CreateSource.Type

export const CreateBatch = StrictStruct({
  urls: Schema.Array(Schema.String).annotations({ description: `Up to ${MAX_BATCH_URLS} URLs, processed in order` })
}).annotations({ identifier: "CreateKnowledgeBatch" })
export type CreateBatch = typeof CreateBatch.Type

export const Batch = Schema.Struct({
  count: Schema.Int,
  sources: Schema.Array(KnowledgeSource)
}).annotations({ identifier: "KnowledgeBatch" })
export type Batch = typeof Batch.Type

/** The batch's body: `meta` is null (the contract says so); the request id is in the `Request-Id` header. */
export const BatchEnvelope = Schema.Struct({ data: Batch, meta: Schema.Null })

export const SourceListParams = Schema.Struct({
  ...PageParams.fields,
  status: Schema.optional(SourceStatus)
})
export type SourceListParams = typeof SourceListParams.Type

export const BatchHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(Schema.String.annotations({ description: "UUID form" }))
})

/** A retrieval test's query: a question as a visitor would ask it. */
export const MAX_SEARCH_QUERY_CHARS = 1000
/** Hits a retrieval test may ask for, and how many it gets by default (as many as a reply draws on). */
export const MAX_SEARCH_LIMIT = 20
export const DEFAULT_SEARCH_LIMIT = 5

export const SearchKnowledge = StrictStruct({
  query: Schema.propertySignature(
    Schema.Trim.pipe(
      Schema.minLength(1, { message: () => "query must not be empty" }),
      Schema.maxLength(MAX_SEARCH_QUERY_CHARS, { message: () => `query must be at most ${MAX_SEARCH_QUERY_CHARS} characters` })
    ).annotations({ jsonSchema: { type: "string", minLength: 1, maxLength: MAX_SEARCH_QUERY_CHARS } })
  ).annotations({ description: `The question, as a visitor would ask it (trimmed; 1 to ${MAX_SEARCH_QUERY_CHARS} characters)` }),
  limit: Schema.optional(
    Schema.Int.pipe(
      Schema.between(1, MAX_SEARCH_LIMIT, { message: () => `limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}` })
    ).annotations({
      description: `Hits to return, best first: 1 to ${MAX_SEARCH_LIMIT}, default ${DEFAULT_SEARCH_LIMIT}`,
      default: DEFAULT_SEARCH_LIMIT
    })
  )
}).annotations({ identifier: "SearchKnowledge" })
export type SearchKnowledge = typeof SearchKnowledge.Type

export const KnowledgeHit = Schema.Struct({
  kind: Schema.Literal("chunk", "qa").annotations({
    description: "`chunk`: a passage of a knowledge source; `qa`: a Q&A item"
  }),
  id: Schema.String.annotations({ description: "The passage's id (`chk_…`) or the Q&A item's (`qa_…`)" }),
  source_id: Schema.NullOr(Schema.String).annotations({
    description: "The knowledge source it came from (`src_…`); null for a Q&A item written by hand"
  }),
  source_title: Schema.NullOr(Schema.String).annotations({ description: "That source's title; null when `source_id` is" }),
  score: Schema.Number.annotations({ description: "Retrieval's score, 0 to 1; hits are ranked by it, best first" }),
  relevant: Schema.Boolean.annotations({
    description: "`score` is at least `threshold`: a reply would draw on this hit"
  }),
  text: Schema.String.annotations({ description: "The passage's text, or the Q&A item's answer" }),
  question: Schema.NullOr(Schema.String).annotations({ description: "The Q&A item's question; null for a passage" })
}).annotations({ identifier: "KnowledgeHit" })
export type KnowledgeHit = typeof KnowledgeHit.Type

export const KnowledgeSearch = Schema.Struct({
  object: Schema.Literal("knowledge_search"),
  agent_id: AgentId,
  query: Schema.String.annotations({ description: "The query as searched (trimmed)" }),
  threshold: Schema.Number.annotations({
    description: "The relevance threshold of replies: a reply draws only on hits scoring at least this"
  }),
  hits: Schema.Array(KnowledgeHit).annotations({ description: "Best first, at most `limit`; empty when the agent knows nothing yet" })
}).annotations({ identifier: "KnowledgeSearch" })
export type KnowledgeSearch = typeof KnowledgeSearch.Type

const agentPath = HttpApiSchema.param("agent_id", AgentId)
const sourcePath = HttpApiSchema.param("source_id", SourceId)
const missing = ApiError(ResourceMissing)

/** The group's reference (its tag's description in the OpenAPI document and on `/docs`), with the figures it quotes. */
const knowledgeReference = reference("knowledge", {
  "monthlyRefreshCap.free": monthlyRefreshCap.free,
  "monthlyRefreshCap.starter": monthlyRefreshCap.starter,
  "monthlyRefreshCap.pro": monthlyRefreshCap.pro
})

export class KnowledgeGroup extends HttpApiGroup.make("knowledge")
  .add(
    HttpApiEndpoint.post("create")`/v1/agents/${agentPath}/knowledge`
      .setPayload(CreateSource)
      .addSuccess(Envelope(KnowledgeSource), { status: 201 })
      .addError(missing)
      .addError(ApiError(ParameterInvalid))
      .addError(ApiError(ParameterMissing))
      .addError(ApiError(UrlNotAllowed))
      .addError(ApiError(FileNotUploaded))
      .addError(ApiError(PayloadTooLarge))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Body `type` and, by type: `text`: `title`, `content` (1 MB); `url`: `url` (the URL policy of " +
          "webhooks: `url_not_allowed`); `file_id`: `file_id` of an `uploaded` file (`409 file_not_uploaded` " +
          "otherwise); `csv_qa`: `content`, CSV `question,answer[,category]`, at most 1 MB (`413`), checked at " +
          "once (below). Optional `title` for the others. `201`, the source `pending`"
      )
      .annotate(OpenApi.Summary, "Add a knowledge source (text, url, file_id or csv_qa); processed in the background")
  )
  .add(
    HttpApiEndpoint.post("batch")`/v1/agents/${agentPath}/knowledge/batch`
      .setHeaders(BatchHeaders)
      .setPayload(CreateBatch)
      .addSuccess(BatchEnvelope, { status: 201 })
      .addError(missing)
      .addError(ApiError(TooManyUrls))
      .addError(ApiError(UrlNotAllowed))
      .addError(ApiError(InvalidIdempotencyKey))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Body `urls` (1 to 500); `201` with `data.count`, `data.sources` and `meta: null` (as the spec shows; the " +
          "request id is in the `Request-Id` header); `Idempotency-Key`, when sent, must be a UUID"
      )
      .annotate(OpenApi.Summary, "Add up to 500 URLs at once; processed one at a time per agent, in order")
  )
  .add(
    HttpApiEndpoint.post("search")`/v1/agents/${agentPath}/knowledge/search`
      .setPayload(SearchKnowledge)
      .addSuccess(Envelope(KnowledgeSearch))
      .addError(missing)
      .addError(ApiError(ParameterInvalid))
      .addError(ApiError(ParameterMissing))
      .addError(ApiError(AiUnavailable))
      .annotate(RequiredScope, "read:knowledge")
      .annotate(
        OpenApi.Description,
        `Body \`query\` (trimmed, 1 to ${MAX_SEARCH_QUERY_CHARS} characters) and \`limit\` (1 to ${MAX_SEARCH_LIMIT}, default ` +
          `${DEFAULT_SEARCH_LIMIT}). Runs the retrieval replies use (the agent's passages and Q&A, its enabled glossary ` +
          "synonyms expanding the question) and answers the hits best first, each with its `score` and `relevant` " +
          "(the score reaches `threshold`, the relevance threshold of replies). A reply draws only on relevant hits; " +
          "with none, it is the fallback answer and an `escalation` event. Use it to check what an agent finds for a " +
          "question, or why a reply fell back. A read: no credit is charged, no message kept, no event sent. " +
          "`503 ai_unavailable` when the embedding provider does not answer, as for a reply"
      )
      .annotate(OpenApi.Summary, "Test retrieval: what the agent finds for a question, ranked, with scores")
  )
  .add(
    HttpApiEndpoint.get("list")`/v1/agents/${agentPath}/knowledge`
      .setUrlParams(SourceListParams)
      .addSuccess(ListEnvelope(KnowledgeSource))
      .addError(missing)
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:knowledge")
      .annotate(
        OpenApi.Description,
        "Paginated, newest first; `status` filter (`pending`, `processing`, `indexed`, `failed`)"
      )
      .annotate(OpenApi.Summary, "List an agent's sources, newest first, optionally by `status`")
  )
  .add(
    HttpApiEndpoint.post("refreshAll")`/v1/agents/${agentPath}/knowledge/refresh`
      .addSuccess(Envelope(KnowledgeRefreshRound), { status: 202 })
      .addError(missing)
      .addError(ApiError(LimitReached))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Begins a round that refreshes every indexed `url` source of the agent, as a scheduled round does, in turn " +
          "with its other sources: `202` with when it began. Asking again while a round is under way answers that " +
          "round. Each source's `refresh` shows its part (`queued`, then `checked_at`); what changed is told by " +
          "`knowledge.source.updated`, `gone` and `removed`, as for one source. With a `knowledge_refresh.schedule`, " +
          "the next scheduled round follows a period after this one. `402 limit_reached` when the plan's " +
          "refreshes this month are used up (a round that meets the cap stops there)"
      )
      .annotate(OpenApi.Summary, "Refresh every url source of an agent now")
  )
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/agents/${agentPath}/knowledge/${sourcePath}`
      .addSuccess(Envelope(KnowledgeSource))
      .addError(missing)
      .annotate(RequiredScope, "read:knowledge")
      .annotate(OpenApi.Description, "The polling read")
      .annotate(OpenApi.Summary, "Retrieve a source (poll it to follow its phase and progress)")
  )
  .add(
    HttpApiEndpoint.post("refresh")`/v1/agents/${agentPath}/knowledge/${sourcePath}/refresh`
      .addSuccess(Envelope(KnowledgeSource), { status: 202 })
      .addError(missing)
      .addError(ApiError(SourceNotRefreshable))
      .addError(ApiError(LimitReached))
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Reads an indexed `url` source's page again, in turn with the agent's other sources: `202`, the source with " +
          "`refresh.status: queued` (asking again while it waits queues nothing more). A conditional GET: a `304`, " +
          "or the same text, re-indexes nothing; a changed page's passages and generated Q&A are replaced at once " +
          "(`knowledge.source.updated`), hand-edited Q&A kept; a page answering 404 or 410 is `gone_since` " +
          "(`knowledge.source.gone`) and its knowledge is removed after the agent's grace (`knowledge.source.removed`). " +
          "`409 source_not_refreshable` for another type or a source not indexed; `402 limit_reached` when the " +
          "plan's refreshes this month are used up"
      )
      .annotate(OpenApi.Summary, "Refresh a url source: read its page again and re-index it if it changed")
  )
  .add(
    HttpApiEndpoint.del("delete")`/v1/agents/${agentPath}/knowledge/${sourcePath}`
      .addSuccess(Envelope(Deleted(SourceId, "knowledge_source")))
      .addError(missing)
      .annotate(RequiredScope, "write:knowledge")
      .annotate(
        OpenApi.Description,
        "Removes the source, its chunks and its generated and CSV Q&A; a job still queued for it ends without " +
          "effect"
      )
      .annotate(OpenApi.Summary, "Delete a source with its chunks and its generated and CSV Q&A")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, knowledgeReference)
  .annotate(OpenApi.Title, "Knowledge") {}
