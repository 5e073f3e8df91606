/**
 * The headers a refusal carries beside its envelope. The platform encodes a failure's body and status from its
 * schema (`ApiError`); a schema has no say over headers, so the edge adds these as the answer leaves.
 */
import { AiUnavailable, aiRetryAfterSeconds, type ApiFailure, MethodNotAllowed, RateLimited } from "../../schema/Errors.js"

export const failureHeaders = (failure: ApiFailure, allow: ReadonlyArray<string>): Record<string, string> => {
  if (failure instanceof MethodNotAllowed) return { allow: allow.join(", ") }
  if (failure instanceof RateLimited) return { "retry-after": String(failure.retry_after_seconds ?? 1) }
  if (failure instanceof AiUnavailable) return { "retry-after": String(aiRetryAfterSeconds) }
  return {}
}
