/**
 * Cursor pagination, one piece for every list: newest first by an insertion
 * sequence, `limit` 1..100 (default 20), and an opaque cursor naming the last
 * row of the previous page. Fetching `limit + 1` rows tells whether more exist.
 *
 * A cursor is the position plus an HMAC (server secret) over the list's name,
 * its canonical filters and that position: a cursor from another list, other
 * filters or a forged position is `400 invalid_cursor`, and only positions the
 * server signed (so within 64 bits) ever reach SQL.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHmac, timingSafeEqual } from "node:crypto"
import type { PageParams, PageRequest, Pagination } from "../../schema/Envelope.js"
import { InvalidCursor, InvalidLimit } from "../../schema/Errors.js"

export type { PageRequest }

export const defaultLimit = 20
export const maxLimit = 100

/** The secret cursors are signed with (see `CursorSecret.ts` for where it comes from). */
export class CursorKey extends Context.Tag("Http/CursorKey")<CursorKey, Redacted.Redacted<Uint8Array>>() {}

/** Filter values in one order, so equal filters always sign alike. */
const canonical = (filters: Readonly<Record<string, unknown>>): string =>
  JSON.stringify(
    Object.keys(filters)
      .filter((k) => filters[k] !== undefined)
      .sort()
      .map((k) => [k, [filters[k]].flat().map(String).sort()])
  )

const maxSeq = 2n ** 63n - 1n

export class Paginator extends Effect.Service<Paginator>()("Http/Paginator", {
  effect: Effect.map(CursorKey, (key) => {
    const mac = (binding: string, seq: string) =>
      createHmac("sha256", Redacted.value(key)).update(`cursor\n${binding}\n${seq}`).digest().subarray(0, 16)

    const sign = (binding: string, seq: string) =>
      Buffer.from(`${seq}.${mac(binding, seq).toString("base64url")}`).toString("base64url")

    const verify = (binding: string, cursor: string): Option.Option<string> => {
      if (!/^[A-Za-z0-9_-]{1,96}$/.test(cursor)) return Option.none()
      const match = /^(0|[1-9][0-9]{0,18})\.([A-Za-z0-9_-]{22})$/.exec(Buffer.from(cursor, "base64url").toString("latin1"))
      if (match === null || BigInt(match[1]!) > maxSeq) return Option.none()
      const given = Buffer.from(match[2]!, "base64url")
      const expected = mac(binding, match[1]!)
      return given.length === expected.length && timingSafeEqual(given, expected) ? Option.some(match[1]!) : Option.none()
    }

    /**
     * The page a list request asks for. `list` names the list (and its parent,
     * e.g. `webhooks/whs_1/deliveries`); `filters` are every query filter that
     * shapes it: a cursor is valid only with the same ones.
     */
    const parse = (
      list: string,
      params: PageParams,
      filters: Readonly<Record<string, unknown>> = {}
    ): Effect.Effect<PageRequest, InvalidLimit | InvalidCursor> =>
      Effect.gen(function* () {
        let limit = defaultLimit
        if (params.limit !== undefined) {
          limit = /^[0-9]{1,4}$/.test(params.limit) ? Number(params.limit) : NaN
          if (!(limit >= 1 && limit <= maxLimit)) {
            return yield* new InvalidLimit({
              message: `limit must be an integer between 1 and ${maxLimit}; got '${params.limit.slice(0, 20)}'`,
              param: "limit"
            })
          }
        }
        const binding = `${list}\n${canonical(filters)}`
        const cursorFor = (seq: string) => sign(binding, seq)
        if (params.starting_after === undefined) return { limit, after: Option.none(), cursorFor }
        const after = verify(binding, params.starting_after)
        if (Option.isNone(after)) {
          return yield* new InvalidCursor({
            message: "starting_after is not a cursor this list returned with these filters; start again without it",
            param: "starting_after"
          })
        }
        return { limit, after, cursorFor }
      })

    return { parse } as const
  })
}) {}

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
    pagination: { has_more, next_cursor: has_more && last !== undefined ? page.cursorFor(last.seq) : null }
  }
}
