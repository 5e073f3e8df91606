/**
 * Success envelopes. Every 2xx JSON body is `{ data, meta }`; lists add
 * `meta.pagination`. Endpoints declare `Envelope(X)` so the OpenAPI document
 * shows the body as it is sent.
 */
import * as FiberRef from "effect/FiberRef"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * The request a fiber serves (`req_...`), set by the HTTP edge on the request's fiber: the envelopes' `meta`
 * carry it, and every line logged there as `request_id`. A FiberRef of its own rather than a log annotation,
 * which would rebuild the fiber's annotation map on every request.
 */
export const CurrentRequestId = FiberRef.unsafeMake<string | undefined>(undefined)

export const Timestamp = Schema.String.annotations({
  description: "ISO 8601 UTC timestamp",
  jsonSchema: { type: "string", format: "date-time" }
})

export const Meta = Schema.Struct({
  request_id: Schema.String.annotations({ description: "Also sent as the `Request-Id` header" })
})

export const Envelope = <S extends Schema.Schema.Any>(data: S) => Schema.Struct({ data, meta: Meta })

export const Pagination = Schema.Struct({
  has_more: Schema.Boolean,
  next_cursor: Schema.NullOr(Schema.String).annotations({
    description: "Pass as `starting_after` to get the next page; null on the last page"
  }),
  total_count: Schema.optional(Schema.Int)
})
export type Pagination = typeof Pagination.Type

export const ListEnvelope = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Struct({
    data: Schema.Array(item),
    meta: Schema.Struct({ ...Meta.fields, pagination: Pagination })
  })

/**
 * Query parameters of every list. Both stay strings here: `limit` and the cursor
 * are checked by the pagination program so their failures carry their own codes
 * (`invalid_limit`, `invalid_cursor`).
 */
export const PageParams = Schema.Struct({
  limit: Schema.optional(
    Schema.String.annotations({
      description: "1 to 100, default 20",
      jsonSchema: { type: "integer", minimum: 1, maximum: 100, default: 20 }
    })
  ),
  starting_after: Schema.optional(
    Schema.String.annotations({ description: "Opaque cursor from `meta.pagination.next_cursor`" })
  )
})
export type PageParams = typeof PageParams.Type

/** Reply of a DELETE: the object's id, kind and `deleted: true`. */
export const Deleted = <Id extends Schema.Schema.Any, O extends string>(id: Id, object: O) =>
  Schema.Struct({ id, object: Schema.Literal(object), deleted: Schema.Literal(true) })

/** A page to read, once `limit` and the cursor of `PageParams` are checked. */
export interface PageRequest {
  readonly limit: number
  /** Sequence number of the last row already seen (as text: it is a bigint). */
  readonly after: Option.Option<string>
  /** The cursor naming `seq` in this list with these filters. */
  readonly cursorFor: (seq: string) => string
}
