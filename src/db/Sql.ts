/** Helpers shared by the repositories. */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
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

/**
 * Runs `effect` in one transaction of `sql`. Statements inside are already
 * defects on failure (repositories die on SqlError); this makes BEGIN/COMMIT
 * failures defects too.
 */
export const transactionWith =
  (sql: SqlClient.SqlClient) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError>, R> =>
    sql.withTransaction(effect).pipe(
      // TypeScript cannot narrow a generic union by a class; anything not a SqlError is one of E's members
      Effect.catchAll((e) => (e instanceof SqlError ? Effect.die(e) : Effect.fail(e as Exclude<E, SqlError>)))
    )

/**
 * Takes a lock on `key` held until the transaction ends: writers of one
 * agent's list (positions, a glossary replacement) queue on it, on every instance.
 */
export const lockWith = (sql: SqlClient.SqlClient) => (key: string) =>
  sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.pipe(Effect.orDie, Effect.asVoid)

/** What only a broken database or broken code causes; `NoSuchElementException`: a `returning` row was missing. */
type Broken = SqlError | ParseError | Cause.NoSuchElementException

const brokenTags: ReadonlySet<unknown> = new Set(["SqlError", "ParseError", "NoSuchElementException"])

const isBroken = (e: unknown): e is Broken =>
  typeof e === "object" && e !== null && "_tag" in e && brokenTags.has(e._tag)

/**
 * The repository boundary: a failing query, a row of our own that does not
 * decode, or a missing `returning` row is a defect (the database or the code is broken, not the request), so
 * programs only ever see their catalogued failures.
 */
export const boundary = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Broken>, R> =>
  Effect.catchIf(self, isBroken, (e) => Effect.die(e)) as Effect.Effect<A, Exclude<E, Broken>, R>

/** Like `boundary`, but a unique violation becomes the typed failure `onUnique` builds. */
export const boundaryUnique = <A, E, R, U>(
  self: Effect.Effect<A, E, R>,
  onUnique: () => U
): Effect.Effect<A, Exclude<E, Broken> | U, R> =>
  boundary(
    Effect.catchIf(
      self,
      (e): e is Extract<E, SqlError> => isBroken(e) && e._tag === "SqlError" && isUniqueViolation(e),
      () => Effect.fail(onUnique())
    )
  ) as Effect.Effect<A, Exclude<E, Broken> | U, R>

/** `sql.withTransaction` with its own begin/commit failures made defects, as at the repository boundary. */
export const transaction =
  (sql: SqlClient.SqlClient) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Broken>, R> =>
    boundary(sql.withTransaction(self))

type Statement = Effect.Effect<ReadonlyArray<unknown>, SqlError>

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
export const decodeAll = <A, I>(Row: Schema.Schema<A, I>, statement: Statement): Effect.Effect<ReadonlyArray<A>> =>
  boundary(Effect.flatMap(statement, Schema.decodeUnknown(arrayOf(Row))))

/** The first row of `statement`, decoded, if any. */
export const decodeOne = <A, I>(Row: Schema.Schema<A, I>, statement: Statement): Effect.Effect<Option.Option<A>> =>
  boundary(Effect.flatMap(statement, (rows) => (rows.length > 0 ? Effect.asSome(Schema.decodeUnknown(Row)(rows[0])) : Effect.succeedNone)))

/** The one row `statement` must return (an insert or update `returning`), decoded. */
export const decodeSingle = <A, I>(Row: Schema.Schema<A, I>, statement: Statement): Effect.Effect<A> =>
  boundary(
    Effect.flatMap(
      statement,
      (rows): Effect.Effect<A, ParseError | Cause.NoSuchElementException> =>
        rows.length > 0 ? Schema.decodeUnknown(Row)(rows[0]) : Effect.fail(new Cause.NoSuchElementException())
    )
  )

/** A statement run for its effect only. */
export const execute = (statement: Effect.Effect<unknown, SqlError>): Effect.Effect<void> =>
  boundary(Effect.asVoid(statement))
