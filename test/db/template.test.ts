/**
 * The PGlite template of `npm run build`: an empty data dir starts from it
 * with the template's migrations already applied, and migrations newer than
 * the template (here: the latest, left out of it) are applied on top at start;
 * a data dir that holds a database is opened as it is, never overwritten.
 * PGlite only (PostgreSQL has no data dir); runs on both passes alike.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { existsSync } from "node:fs"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { layerPglite } from "../../layers/Database.js"
import { writePgliteTemplate } from "../../layers/pglite/Client.js"
import { latestMigrationId, runMigrations } from "../../src/db/Migrator.js"
import { migrations } from "../../src/db/migrations/index.js"

const keys = Object.keys(migrations)
const older = Object.fromEntries(Object.entries(migrations).slice(0, -1))

it.live("an empty data dir starts from the template; newer migrations run on top; an existing one is kept; other files stay", () =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "template-test-"))),
      (d) => Effect.promise(() => rm(d, { recursive: true, force: true }))
    )
    const template = join(dir, "template")
    yield* writePgliteTemplate(runMigrations(older), template)

    const openAt = (dataDir: string) => <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
      effect.pipe(Effect.provide(Layer.orDie(layerPglite({ dataDir, template }))))
    const open = openAt(join(dir, "data"))

    const firstStart = yield* open(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const before = yield* sql<{ n: number }>`select max(migration_id)::int as n from schema_migrations`
        const applied = yield* runMigrations(migrations)
        yield* sql`create table kept (id int)`
        return { before: before[0]!.n, applied: applied.map(([, name]) => name) }
      })
    )
    expect(firstStart.before).toBe(latestMigrationId(older))
    // copied beside the data dir and renamed into place: nothing left half-way
    expect(existsSync(join(dir, "data.unpacking"))).toBe(false)
    // copied, not moved: the next first start finds it whole
    expect(existsSync(join(template, "PG_VERSION"))).toBe(true)
    expect(firstStart.applied).toEqual([keys.at(-1)!.replace(/^\d+_/, "")])

    const restart = yield* open(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const applied = yield* runMigrations(migrations)
        const kept = yield* sql<{ present: boolean }>`select to_regclass('kept') is not null as present`
        return { applied, kept: kept[0]!.present }
      })
    )
    expect(restart).toEqual({ applied: [], kept: true })

    // a data dir holding other files but no database gets the template copied in beside them
    const crowded = join(dir, "crowded")
    yield* Effect.promise(() => mkdir(crowded).then(() => writeFile(join(crowded, "notes.txt"), "kept")))
    const crowdedStart = yield* openAt(crowded)(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`select max(migration_id)::int as n from schema_migrations`)
    )
    expect(crowdedStart[0]!.n).toBe(latestMigrationId(older))
    expect(existsSync(join(crowded, "notes.txt"))).toBe(true)
  }).pipe(Effect.scoped), 120_000)
