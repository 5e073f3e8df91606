/**
 * The one way repositories talk to the database: a statement goes through
 * `decodeAll` / `decodeOne` / `decodeSingle` (rows decoded by a row schema) or
 * `execute` (run for its effect), and several statements that must fail
 * together through `boundary` or `transaction`. Each makes what only a broken
 * database or broken code causes (a `SqlError`, a row of our own that does
 * not decode, a missing `returning` row) a defect, once, so programs only ever
 * see their catalogued failures. `unique` keeps the one SQL failure a program
 * expects, a unique violation, as its own typed failure.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { ParseError } from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** A unique-index violation (SQLSTATE 23505), from node-postgres or PGlite alike. */
export const isUniqueViolation = (error: SqlError): boolean => {
  const cause = error.cause as { code?: unknown } | undefined
  return typeof cause === "object" && cause !== null && cause.code === "23505"
}

/** What only a broken database or broken code causes; `NoSuchElementException`: a `returning` row was missing. */
type Broken = SqlError | ParseError | Cause.NoSuchElementException

const brokenTags: ReadonlySet<unknown> = new Set(["SqlError", "ParseError", "NoSuchElementException"])

const isBroken = (e: unknown): e is Broken =>
  typeof e === "object" && e !== null && "_tag" in e && brokenTags.has(e._tag)

const isSqlError = (e: unknown): e is SqlError => isBroken(e) && e._tag === "SqlError"

/** The repository boundary: whatever `self` fails with that is `Broken` becomes a defect; the rest stays typed. */
export const boundary = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Broken>, R> =>
  Effect.catchIf(self, isBroken, (e) => Effect.die(e)) as Effect.Effect<A, Exclude<E, Broken>, R>

/** `statement` with a unique violation as the typed failure `onUnique` builds (any other failure stays as it is). */
export const unique = <A, E, R, U>(
  statement: Effect.Effect<A, E, R>,
  onUnique: () => U
): Effect.Effect<A, E | U, R> =>
  Effect.catchIf(statement, (e): e is E & SqlError => isSqlError(e) && isUniqueViolation(e), () => Effect.fail(onUnique()))

/** `sql.withTransaction` at the boundary: statements inside and BEGIN/COMMIT alike. */
export const transaction =
  (sql: SqlClient.SqlClient) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Broken>, R> =>
    boundary(sql.withTransaction(self))

/**
 * Takes a lock on `key` held until the transaction ends: writers of one
 * agent's list (positions, a glossary replacement) queue on it, on every instance.
 */
export const lockWith = (sql: SqlClient.SqlClient) => (key: string): Effect.Effect<void> =>
  execute(sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`)

type Statement<E, R> = Effect.Effect<ReadonlyArray<unknown>, E, R>

/**
 * `Schema.Array(Row)`, made once per row schema: a new array schema at every statement got a new parser each
 * time (the library memoizes parsers by schema).
 */
const arrays = new WeakMap<Schema.Schema.Any, Schema.Schema.Any>()
const arrayOf = <A, I>(Row: Schema.Schema<A, I>): Schema.Schema<ReadonlyArray<A>, ReadonlyArray<I>> => {
  let array = arrays.get(Row)
  if (array === undefined) arrays.set(Row, (array = Schema.Array(Row)))
  return array as Schema.Schema<ReadonlyArray<A>, ReadonlyArray<I>>
}

/** The rows of `statement`, each decoded by `Row`. */
export const decodeAll = <A, I, E = never, R = never>(
  Row: Schema.Schema<A, I>,
  statement: Statement<E, R>
): Effect.Effect<ReadonlyArray<A>, Exclude<E, Broken>, R> =>
  boundary(Effect.flatMap(statement, Schema.decodeUnknown(arrayOf(Row))))

/** The first row of `statement`, decoded, if any. */
export const decodeOne = <A, I, E = never, R = never>(
  Row: Schema.Schema<A, I>,
  statement: Statement<E, R>
): Effect.Effect<Option.Option<A>, Exclude<E, Broken>, R> =>
  boundary(
    Effect.flatMap(statement, (rows) =>
      rows.length > 0 ? Effect.asSome(Schema.decodeUnknown(Row)(rows[0])) : Effect.succeedNone
    )
  )

/** The one row `statement` must return (an insert or update `returning`), decoded: none is a defect. */
export const decodeSingle = <A, I, E = never, R = never>(
  Row: Schema.Schema<A, I>,
  statement: Statement<E, R>
): Effect.Effect<A, Exclude<E, Broken>, R> =>
  boundary(
    Effect.flatMap(
      statement,
      (rows): Effect.Effect<A, ParseError | Cause.NoSuchElementException> =>
        rows.length > 0 ? Schema.decodeUnknown(Row)(rows[0]) : Effect.fail(new Cause.NoSuchElementException())
    )
  )

/** A statement run for its effect only. */
export const execute = <E = never, R = never>(statement: Effect.Effect<unknown, E, R>): Effect.Effect<void, Exclude<E, Broken>, R> =>
  boundary(Effect.asVoid(statement))
