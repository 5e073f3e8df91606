/**
 * Schema migrations (keys like "0001_foundation"), recorded in
 * `schema_migrations` by @effect/sql's Migrator. Safe to run from several
 * processes against one PostgreSQL at once.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as SqlSchema from "@effect/sql/SqlSchema"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"

export type Migrations = Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>

/** Must match the table Migrator creates (migration_id integer primary key, name, created_at). */
export const migrationsTable = "schema_migrations"

/** Highest migration id in the record (the numeric key prefix), 0 when empty. */
export const latestMigrationId = (migrations: Migrations): number =>
  Object.keys(migrations).reduce((max, key) => {
    const match = /^(\d+)_(.+)$/.exec(key)
    return match ? Math.max(max, Number(match[1])) : max
  }, 0)

/** The one row a catalog query returns, decoded; a row that does not decode is a defect. */
const oneRow = <A, I>(Result: Schema.Schema<A, I>, statement: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
  SqlSchema.single({ Request: Schema.Void, Result, execute: () => statement })(undefined).pipe(
    Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die })
  )

/** Highest applied id, 0 when nothing (not even the table) exists yet. */
const highestAppliedId: Effect.Effect<number, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const table = yield* oneRow(
    Schema.Struct({ present: Schema.Boolean }),
    sql`select to_regclass(${migrationsTable}) is not null as present`
  )
  if (!table.present) return 0
  const row = yield* oneRow(
    Schema.Struct({ id: Schema.NullOr(Schema.Number) }),
    sql`select max(migration_id) as id from ${sql(migrationsTable)}`
  )
  return row.id ?? 0
})

/** True when the database is at exactly the latest migration of `migrations` (readiness). */
export const migrationsApplied = (
  migrations: Migrations
): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.map(highestAppliedId, (applied) => applied === latestMigrationId(migrations))

const migrator = Migrator.make({})

// Errors that mean "another instance is migrating right now", worth a retry:
// - "locked": Migrator swallows its own lock conflict and returns no work,
//   which we detect below and re-raise as "locked";
// - concurrent first runs both try to CREATE the migrations table; the loser
//   fails with duplicate_table (42P07), or on its row type with duplicate_object (42710) or a
//   pg_type unique_violation (23505), depending on where the two collide.
const isRetryable = (error: Migrator.MigrationError | SqlError): boolean => {
  if (error._tag === "MigrationError") return error.reason === "locked"
  const code = (error.cause as { code?: unknown } | undefined)?.code
  return code === "42P07" || code === "42710" || code === "23505"
}

/**
 * Applies pending migrations and returns the ones this call applied
 * (empty when the schema was already current).
 */
export const runMigrations = (
  migrations: Migrations
): Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> => {
  const latest = latestMigrationId(migrations)
  const attempt = Effect.gen(function*() {
    // the usual start: nothing to apply, told by two reads (no transaction, no lock, no table check)
    if ((yield* highestAppliedId) >= latest) return []
    const applied = yield* migrator({ loader: Migrator.fromRecord(migrations), table: migrationsTable })
    // A run that lost a lock race returns [] without migrating: confirm.
    if ((yield* highestAppliedId) < latest) {
      return yield* new Migrator.MigrationError({
        reason: "locked",
        message: "Migrations are being applied by another instance"
      })
    }
    return applied
  })
  return attempt.pipe(
    Effect.tapError((error) =>
      isRetryable(error) ? Effect.logDebug("Migrations busy in another instance, retrying", error) : Effect.void
    ),
    Effect.retry({
      schedule: Schedule.spaced("200 millis").pipe(Schedule.upTo("60 seconds")),
      while: isRetryable
    }),
    Effect.withSpan("runMigrations")
  )
}
