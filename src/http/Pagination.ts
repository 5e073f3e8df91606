/**
 * Cursor pagination, one piece for every list: newest first by an insertion
 * sequence, `limit` 1..100 (default 20), and an opaque cursor naming the last
 * row of the previous page. Fetching `limit + 1` rows tells whether more exist.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { PageParams, PageRequest, Pagination } from "../../schema/Envelope.js"
import { InvalidCursor, InvalidLimit } from "../../schema/Errors.js"

export type { PageRequest }

export const defaultLimit = 20
export const maxLimit = 100

const cursorPrefix = "cur1:"
export const encodeCursor = (seq: string): string => Buffer.from(`${cursorPrefix}${seq}`).toString("base64url")

const decodeCursor = (cursor: string): Option.Option<string> => {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) return Option.none()
  const text = Buffer.from(cursor, "base64url").toString("utf8")
  return text.startsWith(cursorPrefix) && /^[0-9]{1,19}$/.test(text.slice(cursorPrefix.length))
    ? Option.some(text.slice(cursorPrefix.length))
    : Option.none()
}

export const parsePage = (params: PageParams): Effect.Effect<PageRequest, InvalidLimit | InvalidCursor> =>
  Effect.gen(function* () {
    let limit = defaultLimit
    if (params.limit !== undefined) {
      limit = /^[0-9]{1,4}$/.test(params.limit) ? Number(params.limit) : NaN
      if (!(limit >= 1 && limit <= maxLimit)) {
        return yield* new InvalidLimit({
          message: `limit must be an integer between 1 and ${maxLimit}; got '${params.limit}'`,
          param: "limit"
        })
      }
    }
    if (params.starting_after === undefined) return { limit, after: Option.none() }
    const after = decodeCursor(params.starting_after)
    if (Option.isNone(after)) {
      return yield* new InvalidCursor({
        message: "starting_after is not a cursor returned by this list",
        param: "starting_after"
      })
    }
    return { limit, after }
  })

/** Cuts the `limit + 1` fetched rows to a page and its pagination meta. */
export const toPage = <Row extends { readonly seq: string }>(
  rows: ReadonlyArray<Row>,
  page: PageRequest
): { readonly rows: ReadonlyArray<Row>; readonly pagination: Pagination } => {
  const has_more = rows.length > page.limit
  const kept = has_more ? rows.slice(0, page.limit) : rows
  const last = kept[kept.length - 1]
  return {
    rows: kept,
    pagination: { has_more, next_cursor: has_more && last !== undefined ? encodeCursor(last.seq) : null }
  }
}
