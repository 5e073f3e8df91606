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
import { Authentication, RequiredScope } from "./Auth.js"
import { Deleted, Envelope, ListEnvelope, PageParams, Timestamp } from "./Envelope.js"
import {
  ApiError,
  FileNotUploaded,
  InvalidCursor,
  InvalidIdempotencyKey,
  InvalidLimit,
  ParameterInvalid,
  ParameterMissing,
  PayloadTooLarge,
  ResourceMissing,
  TooManyUrls,
  UrlNotAllowed
} from "./Errors.js"
import { AgentId, FileId, SourceId } from "./Ids.js"
import { StrictStruct } from "./Payload.js"

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
 * again may work once the cause is fixed.
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
  "internal_error"
).annotations({
  description:
    "Why the source failed. `internal_error`: processing broke at every attempt (not the content's fault); " +
    "send the source again later"
})
export type SourceErrorCode = typeof SourceErrorCode.Type

export const KnowledgeSource = Schema.Struct({
  id: SourceId,
  object: Schema.Literal("knowledge_source"),
  agent_id: AgentId,
  type: SourceType,
  title: Schema.String.annotations({ description: "Given, or the page/file title once read" }),
  status: SourceStatus,
  phase: SourcePhase,
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
  chunk_count: Schema.Int,
  qa_count: Schema.Int,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "KnowledgeSource" })
export type KnowledgeSource = typeof KnowledgeSource.Type

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

const agentPath = HttpApiSchema.param("agent_id", AgentId)
const sourcePath = HttpApiSchema.param("source_id", SourceId)
const missing = ApiError(ResourceMissing)

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
      .annotate(OpenApi.Summary, "Add up to 500 URLs at once; processed one at a time per agent, in order")
  )
  .add(
    HttpApiEndpoint.get("list")`/v1/agents/${agentPath}/knowledge`
      .setUrlParams(SourceListParams)
      .addSuccess(ListEnvelope(KnowledgeSource))
      .addError(missing)
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:knowledge")
      .annotate(OpenApi.Summary, "List an agent's sources, newest first, optionally by `status`")
  )
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/agents/${agentPath}/knowledge/${sourcePath}`
      .addSuccess(Envelope(KnowledgeSource))
      .addError(missing)
      .annotate(RequiredScope, "read:knowledge")
      .annotate(OpenApi.Summary, "Retrieve a source (poll it to follow its phase and progress)")
  )
  .add(
    HttpApiEndpoint.del("delete")`/v1/agents/${agentPath}/knowledge/${sourcePath}`
      .addSuccess(Envelope(Deleted(SourceId, "knowledge_source")))
      .addError(missing)
      .annotate(RequiredScope, "write:knowledge")
      .annotate(OpenApi.Summary, "Delete a source with its chunks and its generated and CSV Q&A")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Knowledge") {}
