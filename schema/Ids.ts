/**
 * Opaque identifiers with a type prefix. The schema checks the prefix, so an id of
 * the wrong kind fails at the edge as a clean `400 parameter_invalid`, never as a query.
 */
import * as Schema from "effect/Schema"

const body = "[A-Za-z0-9]{8,64}"
const prefixed = (prefix: string) => new RegExp(`^${prefix}_${body}$`)

export const WorkspaceId = Schema.String.pipe(
  Schema.pattern(prefixed("ws"), {
    message: () => "Expected a workspace id: `ws_` followed by 8 to 64 letters and digits (e.g. ws_4XBHdA3MTVhAInuslAkKdkQi)"
  }),
  Schema.brand("WorkspaceId")
)
export type WorkspaceId = typeof WorkspaceId.Type

export const ApiKeyId = Schema.String.pipe(
  Schema.pattern(prefixed("key"), { message: () => "Expected an API key id (key_...)" }),
  Schema.brand("ApiKeyId")
)
export type ApiKeyId = typeof ApiKeyId.Type

export const AgentId = Schema.String.pipe(
  Schema.pattern(prefixed("agt"), { message: () => "Expected an agent id (agt_...)" }),
  Schema.brand("AgentId")
)
export type AgentId = typeof AgentId.Type

export const EventId = Schema.String.pipe(
  Schema.pattern(prefixed("evt"), { message: () => "Expected an event id (evt_...)" }),
  Schema.brand("EventId")
)
export type EventId = typeof EventId.Type

export const SourceId = Schema.String.pipe(
  Schema.pattern(prefixed("src"), { message: () => "Expected a knowledge source id (src_...)" }),
  Schema.brand("SourceId")
)
export type SourceId = typeof SourceId.Type

export const FileId = Schema.String.pipe(
  Schema.pattern(prefixed("file"), { message: () => "Expected a file id (file_...)" }),
  Schema.brand("FileId")
)
export type FileId = typeof FileId.Type

export const CategoryId = Schema.String.pipe(
  Schema.pattern(prefixed("cat"), { message: () => "Expected a category id (cat_...)" }),
  Schema.brand("CategoryId")
)
export type CategoryId = typeof CategoryId.Type

export const QaId = Schema.String.pipe(
  Schema.pattern(prefixed("qa"), { message: () => "Expected a Q&A id (qa_...)" }),
  Schema.brand("QaId")
)
export type QaId = typeof QaId.Type

export const LeadId = Schema.String.pipe(
  Schema.pattern(prefixed("ldx"), { message: () => "Expected a lead id (ldx_...)" }),
  Schema.brand("LeadId")
)
export type LeadId = typeof LeadId.Type

export const CrawlId = Schema.String.pipe(
  Schema.pattern(prefixed("crl"), { message: () => "Expected a crawl id (crl_...)" }),
  Schema.brand("CrawlId")
)
export type CrawlId = typeof CrawlId.Type

export const ConversationId = Schema.String.pipe(
  Schema.pattern(prefixed("cnv"), { message: () => "Expected a conversation id (cnv_...)" }),
  Schema.brand("ConversationId")
)
export type ConversationId = typeof ConversationId.Type

export const MessageId = Schema.String.pipe(
  Schema.pattern(prefixed("msg"), { message: () => "Expected a message id (msg_...)" }),
  Schema.brand("MessageId")
)
export type MessageId = typeof MessageId.Type

export const ModuleId = Schema.String.pipe(
  Schema.pattern(prefixed("mod"), { message: () => "Expected a module id (mod_...)" }),
  Schema.brand("ModuleId")
)
export type ModuleId = typeof ModuleId.Type

export const LessonId = Schema.String.pipe(
  Schema.pattern(prefixed("lsn"), { message: () => "Expected a lesson id (lsn_...)" }),
  Schema.brand("LessonId")
)
export type LessonId = typeof LessonId.Type

export const LessonSourceId = Schema.String.pipe(
  Schema.pattern(prefixed("lsrc"), { message: () => "Expected a lesson source id (lsrc_...)" }),
  Schema.brand("LessonSourceId")
)
export type LessonSourceId = typeof LessonSourceId.Type

export const RequestId = Schema.String.pipe(Schema.pattern(prefixed("req")), Schema.brand("RequestId"))
export type RequestId = typeof RequestId.Type

/**
 * Prefixes of every id the service mints, in one place so generators and docs
 * agree: `IdGenerator.make` takes only these.
 */
export const IdPrefix = {
  workspace: "ws",
  apiKey: "key",
  agent: "agt",
  event: "evt",
  request: "req",
  webhook: "whs",
  delivery: "whd",
  email: "eml",
  ticket: "tck",
  ticketMessage: "tmsg",
  ticketEvent: "tev",
  source: "src",
  file: "file",
  category: "cat",
  qa: "qa",
  chunk: "chk",
  chunkDraft: "drf",
  lead: "ldx",
  conversation: "cnv",
  message: "msg",
  form: "frm",
  module: "mod",
  lesson: "lsn",
  lessonSource: "lsrc",
  crawl: "crl",
  evaluation: "evl",
  evaluationRun: "evr"
} as const
export type IdPrefix = (typeof IdPrefix)[keyof typeof IdPrefix]

export const EvaluationId = Schema.String.pipe(
  Schema.pattern(prefixed("evl"), { message: () => "Expected an evaluation id (evl_...)" }),
  Schema.brand("EvaluationId")
)
export type EvaluationId = typeof EvaluationId.Type

export const EvaluationRunId = Schema.String.pipe(
  Schema.pattern(prefixed("evr"), { message: () => "Expected an evaluation run id (evr_...)" }),
  Schema.brand("EvaluationRunId")
)
export type EvaluationRunId = typeof EvaluationRunId.Type
