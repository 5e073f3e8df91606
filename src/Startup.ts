/**
 * The work done before the port opens: migrations, retrieval's indexes, the first-start bootstrap, then the
 * check of the stored vectors' embedding space (which may queue their re-embedding).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { migrations } from "./db/migrations/index.js"
import { runMigrations } from "./db/Migrator.js"
import * as Knowledge from "./knowledge/Area.js"
import { VectorIndex } from "./knowledge/VectorIndex.js"
import { bootstrap } from "./workspaces/Bootstrap.js"

export const Startup = Layer.effectDiscard(
  Effect.gen(function* () {
    const applied = yield* runMigrations(migrations)
    if (applied.length > 0) yield* Effect.logInfo(`applied migrations: ${applied.map(([, name]) => name).join(", ")}`)
    yield* Effect.flatMap(VectorIndex, (index) => index.ensure)
    yield* bootstrap
    yield* Knowledge.checkEmbeddings
  })
)
