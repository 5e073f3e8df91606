/**
 * Success bodies. The request id lives in a FiberRef set by the edge, so
 * handlers wrap their data without threading the request through.
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { CurrentRequestId, type Pagination } from "../../schema/Envelope.js"

export { CurrentRequestId }

const requestId = Effect.map(FiberRef.get(CurrentRequestId), (id) => id ?? "req_unassigned")

export const ok = <A>(data: A) => Effect.map(requestId, (request_id) => ({ data, meta: { request_id } }))

export const okList = <A>(data: ReadonlyArray<A>, pagination: Pagination) =>
  Effect.map(requestId, (request_id) => ({ data, meta: { request_id, pagination } }))

/**
 * Handler option for every write: it runs to its end even if the client hangs up.
 * The router would otherwise interrupt it, and interrupting a PostgreSQL query
 * cancels it over another pooled connection, which under load stalls every
 * transaction queued behind its locks; the client may also retry with the same
 * Idempotency-Key and expects the first attempt to have finished.
 */
export const runsToCompletion = { uninterruptible: true } as const
