import * as Schema from "effect/Schema"
import { SourceErrorCode, SourcePhase, SourceStatus } from "../../schema/Knowledge.js"
import { isoOrNull } from "../Time.js"

/**
 * A source's processing state as the pipeline keeps it in `knowledge_sources`:
 * the same columns, and the same public fields, for a knowledge source and for
 * the lesson source that owns one (the training repository reads a lesson's
 * through its join over `knowledge_sources`).
 */
export const processingFields = {
  status: SourceStatus,
  phase: SourcePhase,
  progress: Schema.Int,
  attempts: Schema.Int,
  next_attempt_at: Schema.NullOr(Schema.DateFromSelf),
  error: Schema.NullOr(Schema.String),
  error_code: Schema.NullOr(SourceErrorCode),
  source_ref: Schema.String,
  size_bytes: Schema.NumberFromString,
  chunk_count: Schema.Int
}
type ProcessingRow = Schema.Struct.Type<typeof processingFields>

/** The public processing fields of a source (`status` … `chunk_count`). */
export const toProcessing = (row: ProcessingRow) => ({
  status: row.status,
  phase: row.phase,
  progress: row.progress,
  attempts: row.attempts,
  next_attempt_at: isoOrNull(row.next_attempt_at),
  error: row.error,
  error_code: row.error_code,
  source_ref: row.source_ref,
  size_bytes: row.size_bytes,
  chunk_count: row.chunk_count
})
