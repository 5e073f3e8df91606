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
import { StrictStruct } from "./Payload.js"

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

/** The batch's body: `meta` is null (SPEC.md); the request id is in the `Request-Id` header. */
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

/** The reference of this group, in Markdown: its tag's description in the OpenAPI document and on `/docs`. */
const knowledgeReference = [
  "An agent answers from its knowledge: sources of four types, each read, split into chunks, organised into Q&A",
  "under the agent's categories, and embedded for retrieval.",
  "",
  "**A source** (`src_`, `object: \"knowledge_source\"`): `agent_id`, `type`, `title` (given, else the page's or",
  "file's own), `status` (`pending` → `processing` → `indexed` | `failed`), `phase` (`queued`, `fetching`,",
  "`extracting`, `categorizing`, `generating_qa`, `vectorizing`, `done`), `progress` (0–100), `attempts`,",
  "`next_attempt_at` (set while a transient failure waits for its retry), `error` (a string, as the spec says) with",
  "`error_code` beside it, `source_ref` (the URL, the file id, or `inline`), `size_bytes` (bytes read),",
  "`chunk_count`, `qa_count`, `created_at`, `updated_at`. `error_code` is one of `url_not_allowed`, `not_found`,",
  "`http_error`, `fetch_failed`, `timeout`, `too_large`, `unsupported_type`, `empty_content`, `file_missing`,",
  "`ocr_failed`, `ai_failed`, `csv_invalid`, `audio_too_long`, `transcription_failed` (the last two: audio files,",
  "see the Training group), `internal_error` (processing itself broke at every attempt, see below),",
  "`processing_stopped` (every attempt stopped the worker processing it, see below).",
  "",
  "**Errors of the batch** (the eight variants the spec names, and the rest): `400 parameter_invalid` (`urls[3]`",
  "is not an http(s) URL, or not a string; `urls` empty; an unknown body field), `400 parameter_missing` (`urls`),",
  "`400 too_many_urls` (more than 500, `param: urls`), `400 url_not_allowed` (`urls[i]` loopback, private,",
  "link-local, a local name, or plain `http` with a live key), `400 invalid_idempotency_key` (not a UUID),",
  "`401 missing_authorization` / `invalid_api_key`, `403 key_scope_mismatch`, `404 resource_missing` (no such",
  "agent in this environment), `409 idempotency_request_in_progress`, `413 payload_too_large`,",
  "`415 unsupported_media_type`, `422 idempotency_key_mismatch`, `429 rate_limited`, `500 internal_error`.",
  "",
  "**The pipeline**, the same for single and batch URLs, runs on the job queue (queue `ingest`, key = agent id):",
  "one source at a time per agent, in creation order, also across instances on one PostgreSQL; up to",
  "`INGEST_CONCURRENCY` agents at once per instance. Per source: fetch (GET, `INGEST_FETCH_TIMEOUT_MS`,",
  "`INGEST_MAX_PAGE_BYTES`, HTML, text, Markdown and PDF; every redirect is checked again like the first URL and",
  "the resolved address at connect time, so a public page cannot bounce the fetch inward), or read the file",
  "(PNG/JPEG/WEBP through OCR, images of 4 MB or more downscaled first; PDF, HTML, text and Markdown read",
  "directly; MP3/WAV/M4A/OGG transcribed, see the Training group), extract readable text (Readability on linkedom; PDF through unpdf; pages nested more than 200 deep are read whole, without Readability), categorize (the agent's first",
  "source creates its categories; later ones reuse them), generate Q&A placed in those categories, chunk (about",
  "1,200 characters, by paragraph, each chunk led by its section heading), embed chunks and Q&A, then commit",
  "chunks, Q&A, `indexed` and the event `knowledge.source.indexed` (`source`) in one transaction. A poller sees",
  "`processing` at once and each later phase once it has lasted 100 ms (a source that passes through a phase",
  "faster is not written in it); a failed source keeps the phase it failed in. Transient",
  "failures (timeouts, connection errors, `429`, `5xx`, a transient AI error) are retried on the Clock after",
  "10 s and 40 s, three attempts in all, with `next_attempt_at` shown while waiting; anything else (`404`, an",
  "unsupported type, too large, a refused address, OCR failure) fails at once: `failed`, and",
  "`knowledge.source.failed` with `source` and `error` = `{code, message}`. A job held by a crashed process is",
  "taken over when its lease (`INGEST_LEASE_MS`) lapses, so no source stays `processing`.",
  "What a source brings (HTML, PDF, text, a CSV's rows, an audio file's headers, an image's text) is read outside",
  "the service's process, in a pool of `INGEST_CONCURRENCY` decoder processes, each input under a time limit",
  "(`INGEST_EXTRACT_TIMEOUT_MS`, over it `timeout`) and a memory limit (`INGEST_EXTRACT_MEMORY_MB`, over it",
  "`too_large`). A file that breaks its decoder (a crash in native code, an error a library throws from an event",
  "handler) fails its source alone (`unsupported_type`, or `ocr_failed` for an image, with `error` saying so); the",
  "process is replaced, and the API of every workspace answers as usual meanwhile. An image declaring more than 50",
  "million pixels is refused before it is decoded. An empty page fails with `empty_content`, bytes that are not",
  "text with `unsupported_type`. Processing that breaks",
  "(a bug, the database away) is retried by the queue (5 attempts in all, 5 s, 15 s, 45 s, 2 min 15 s apart): the",
  "source shows `pending`, `error_code: internal_error` and `next_attempt_at` meanwhile, then fails with",
  "`internal_error` and `error` \"the source could not be processed: an internal error occurred\", with its event,",
  "and the agent's next source runs. An attempt counts when it starts: a source whose processing stops the",
  "worker itself (the process killed before the attempt ends, a document a decoder crashes on) is not tried a sixth",
  "time: it fails with `processing_stopped` and `error` \"processing this source stopped its worker at every",
  "attempt\", with its event, and the agent's next source runs.",
  "",
  "**CSV Q&A** are parsed at once with csv-parse (quoted fields, commas and newlines inside quotes, a BOM, an",
  "optional `question,answer[,category]` header row): any bad row refuses the request with",
  "`400 parameter_invalid`, `param: content`, and a message naming every bad row's line (`line 5: …`). Accepted",
  "rows are imported by the same queue without the AI steps: `origin: \"csv\"`, in the named category (created if",
  "the agent lacks it).",
  "",
  "**Retrieval** (`src/knowledge/Retrieval.ts`, used by replies) ranks an agent's chunks and Q&A for a question.",
  "Candidates come from indexes only, so a reply costs the same at 100 sources or 10,000: the text-search (GIN)",
  "indexes give the rows holding every word of the question, or any of its rare words; with pgvector (always on",
  "PGlite, through `@electric-sql/pglite-pgvector`; on a PostgreSQL server when its operator installed the",
  "extension: the service enables it at start when it can) the HNSW index adds the nearest embeddings, even",
  "sharing no word. Without it the text candidates are re-ranked by cosine over their `real[]` embeddings. A",
  "hit's score is absolute, 0 to 1: 0.4 × the embedding cosine + 0.6 × the share of the question's words it",
  "holds, each word weighing its rarity (BM25's idf), with a little asked of the question's word forms and of its",
  "neighbouring words standing near each other. Under 0.3 a hit is not relevant. Enabled glossary terms expand",
  "the question: a term or synonym found in it adds the others.",
  "",
  "**Test retrieval.** `POST /v1/agents/{agent_id}/knowledge/search` runs that retrieval on a question and shows",
  "what it found, ranked, with each hit's score and whether it reaches the replies' relevance threshold: to check",
  "what an agent finds before putting it in front of visitors, and why a reply fell back (no hit was relevant).",
  "It is a read (scope `read:knowledge`): it charges no credit, keeps no message and sends no event.",
  "",
  "**CLI.** `npm run cli -- ingest --agent agt_… --urls urls.txt` (one URL per line; `#` comments) sends one",
  "batch with a secret key (`--key`, default `$API_KEY`; `--url` as for the admin commands) and follows every",
  "source: on a terminal a live progress bar per source, redrawn in place; in a pipe, one line per change. It ends",
  "with a summary and exits 1 if any source failed.",
  "",
  "**Choices** (where the spec leaves one open):",
  "",
  "- Knowledge: the batch answers `201` with `meta: null` as the spec shows (the request id stays in the",
  "  `Request-Id` header). A CSV with a bad row is refused whole at creation (`400`, every bad line named) rather",
  "  than half imported. A URL source's `title` is the page's own unless one was given. `error` stays a string",
  "  (as the spec has it) and `error_code` gives the machine reason; the failed event's `error` is `{code, message}`.",
  "  Source fields `chunk_count` and `qa_count` are added. A file may be uploaded again until it is confirmed.",
  "- Test retrieval is a `POST` (a question stays out of URLs and access logs) but a read: it needs",
  "  `read:knowledge`, like the list of sources, and changes nothing.",
  "- **Freshness.** A `url` source's `refresh` (null for other types): `status` (`queued` while a refresh waits",
  "  or runs), `checked_at`, `changed_at`, `gone_since`. `POST …/knowledge/{id}/refresh` (one source),",
  "  `POST …/knowledge/refresh` (a round of every indexed `url` source now), the agent's",
  "  `knowledge_refresh.schedule` (`daily`, `weekly`: a round, the first a period after it is set, the next a",
  "  period after the last began) and a crawl meeting a page the agent has (`skipped: known`, refreshed from the",
  "  bytes it read) start one; refreshes run in turn with the agent's new sources, a round's pages checked a",
  `  hundred to a job, one request at a time to the site. A conditional GET (\`If-None-Match\`,`,
  "  `If-Modified-Since`): a `304`, or the same extracted text, re-indexes nothing (`checked_at` moves, no event).",
  "  A changed page is indexed again and its passages and generated Q&A replaced in one transaction, so a reply",
  "  sees the old page or the new one; Q&A edited by hand stay. Event `knowledge.source.updated` (`source`). A",
  "  page answering 404 or 410 keeps its knowledge, `gone_since` set (`knowledge.source.gone`), until the agent's",
  "  `gone_grace_days` (default 7) have passed: then it is removed like a deleted source",
  "  (`knowledge.source.removed`); a page that comes back first is read again. A page unreadable this time (a",
  "  timeout, a 5xx) keeps its knowledge until the next refresh. Each refresh counts against the plan's refreshes",
  `  a month (free ${monthlyRefreshCap.free}, starter ${monthlyRefreshCap.starter}, pro ${monthlyRefreshCap.pro}, enterprise no cap): \`402 limit_reached\` on demand; a`,
  "  scheduled round stops at the cap and resumes next time."
].join("\n")

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
