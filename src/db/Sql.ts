/** Helpers shared by the repositories. */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as SqlSchema from "@effect/sql/SqlSchema"
import type * as Cause from "effect/Cause"
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

/** The rows of `statement`, each decoded by `Row`. */
export const decodeAll = <A, I>(Row: Schema.Schema<A, I>, statement: Statement): Effect.Effect<ReadonlyArray<A>> =>
  boundary(SqlSchema.findAll({ Request: Schema.Void, Result: Row, execute: () => statement })(undefined))

/** The first row of `statement`, decoded, if any. */
export const decodeOne = <A, I>(Row: Schema.Schema<A, I>, statement: Statement): Effect.Effect<Option.Option<A>> =>
  boundary(SqlSchema.findOne({ Request: Schema.Void, Result: Row, execute: () => statement })(undefined))

/** The one row `statement` must return (an insert or update `returning`), decoded. */
export const decodeSingle = <A, I>(Row: Schema.Schema<A, I>, statement: Statement): Effect.Effect<A> =>
  boundary(SqlSchema.single({ Request: Schema.Void, Result: Row, execute: () => statement })(undefined))

/** A statement run for its effect only. */
export const execute = (statement: Effect.Effect<unknown, SqlError>): Effect.Effect<void> =>
  boundary(Effect.asVoid(statement))

/**
 * Takes a lock on `key` held until the transaction ends: writers of one
 * agent's list (positions, a glossary replacement) queue on it, on every instance.
 */
export const lockWith = (sql: SqlClient.SqlClient) => (key: string) =>
  execute(sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`)
