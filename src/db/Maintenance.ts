/**
 * Autovacuum's work for PGlite, which has none (one session, no background
 * processes), and for a PostgreSQL whose autovacuum is off. Without it the
 * planner would plan on statistics taken when a table was small (or on none),
 * and updated rows would stay dead forever. With statistics a reply's
 * retrieval walks its indexes; without them it reads every row of the agent.
 *
 * Every `MAINTENANCE_MS` (ten seconds by default), each table changed enough
 * since it was last analyzed (or vacuumed) is analyzed (or vacuumed), by
 * PostgreSQL's own default autovacuum thresholds: 50 rows changed plus 10 % of
 * the table for ANALYZE; 50 dead rows plus 20 %, or 1,000 inserted plus 20 %,
 * for VACUUM (which also merges GIN indexes' pending entries, and marks pages
 * all-visible). A table whose rows were never counted (`reltuples` < 0: no
 * ANALYZE since it was created) is analyzed when it holds rows. PGlite's
 * counters of changes live in memory: changes made before a restart are not
 * counted after it, only those since.
 *
 * On a PostgreSQL with autovacuum on (the default), the server does this and
 * the worker does not run.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Database } from "../../layers/Database.js"
import { background } from "../Background.js"
import { AppConfig } from "../Config.js"
import { decodeAll, execute } from "./Sql.js"
import { supervise } from "../../layers/Supervise.js"

const Due = Schema.Struct({
  schema: Schema.String,
  table: Schema.String,
  analyze: Schema.Boolean,
  vacuum: Schema.Boolean
})

export interface Maintained {
  readonly table: string
  readonly analyzed: boolean
  readonly vacuumed: boolean
}

/** One round: the tables due, each vacuumed and analyzed as it needs. */
export const maintainOnce: Effect.Effect<ReadonlyArray<Maintained>, never, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    // the session's counts of changes reach the statistics views when it flushes them: at once, after this
    yield* execute(sql`select pg_stat_force_next_flush()`)
    const due = yield* decodeAll(
      Due,
      sql`select * from (
          select s.schemaname as schema, s.relname as table,
            (s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
              or (c.reltuples < 0 and s.n_live_tup > 0)) as analyze,
            (s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0)
              or s.n_ins_since_vacuum > 1000 + 0.2 * greatest(c.reltuples, 0)) as vacuum
          from pg_stat_user_tables as s join pg_class as c on c.oid = s.relid
        ) as tables
        where "analyze" or "vacuum"
        order by "table"`
    )
    return yield* Effect.forEach(due, (table) =>
      Effect.gen(function* () {
        const name = sql(`${table.schema}.${table.table}`)
        // VACUUM counts the live rows too, so the ANALYZE after it is judged against the new size
        if (table.vacuum) yield* execute(sql`vacuum ${name}`)
        if (table.analyze) yield* execute(sql`analyze ${name}`)
        return { table: table.table, analyzed: table.analyze, vacuumed: table.vacuum }
      })
    )
  }
)

/** `maintainOnce`, then a gap of `gapMillis`, forever. */
export const maintenanceLoop = (gapMillis: number): Effect.Effect<never, never, SqlClient.SqlClient> => Effect.forever(
  Effect.zipRight(
    Effect.tap(maintainOnce, (done) =>
      done.length === 0
        ? Effect.void
        : Effect.logDebug(
            `maintained ${done.map((t) => `${t.table} (${[t.vacuumed && "vacuum", t.analyzed && "analyze"].filter(Boolean).join(", ")})`).join("; ")}`
          )
    ),
    Effect.sleep(gapMillis)
  )
)

const Setting = Schema.Struct({ autovacuum: Schema.String })

/** Whether this database has no autovacuum: PGlite never does; a PostgreSQL whose operator turned it off. */
const withoutAutovacuum = Effect.gen(function* () {
  const database = yield* Database
  if (database.kind === "pglite") return true
  const sql = yield* SqlClient.SqlClient
  const [setting] = yield* decodeAll(Setting, sql`select current_setting('autovacuum') as autovacuum`)
  return setting?.autovacuum === "off"
})

/**
 * The maintenance fiber where the database has no autovacuum; nothing where it has. Several instances on one
 * PostgreSQL each run it: a round finds nothing due just after another instance's.
 */
export const Workers = Layer.unwrapEffect(
  Effect.map(Effect.all([withoutAutovacuum, AppConfig]), ([needed, config]) =>
    needed ? background(supervise("maintenance", maintenanceLoop(config.maintenanceMillis))) : Layer.empty
  )
)
