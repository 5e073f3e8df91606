/** Helpers shared by the repositories. */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type { ParseError } from "effect/ParseResult"

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
