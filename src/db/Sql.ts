/** Helpers shared by the repositories. */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"

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
