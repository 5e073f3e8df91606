/**
 * Success bodies. The request id lives in a FiberRef set by the edge, so
 * handlers wrap their data without threading the request through.
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import type { Pagination } from "../../schema/Envelope.js"

export const CurrentRequestId = FiberRef.unsafeMake<string>("req_unassigned")

export const ok = <A>(data: A) =>
  Effect.map(FiberRef.get(CurrentRequestId), (request_id) => ({ data, meta: { request_id } }))

export const okList = <A>(data: ReadonlyArray<A>, pagination: Pagination) =>
  Effect.map(FiberRef.get(CurrentRequestId), (request_id) => ({ data, meta: { request_id, pagination } }))
