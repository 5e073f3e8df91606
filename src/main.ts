/**
 * `npm start`: checks the configuration, starts opening the embedded database,
 * and only then loads the service (`Service.ts`). Most of a start is those
 * two, and they overlap: PGlite's wasm compiles and its files are read on
 * other threads while the service's modules evaluate on this one.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describeConfigError, fromEnv } from "./Config.js"

/**
 * Beside the bundle (`dist/`), `npm run build` leaves an initialised and
 * migrated empty database; from sources there is none and PGlite runs initdb.
 */
const pgliteTemplate = fileURLToPath(new URL("./pglite-template", import.meta.url))

/** A wrong variable stops the process before anything starts: one line naming it, exit code 1, no stack. */
const configOrExit = fromEnv.pipe(
  Effect.catchAll((error) =>
    Effect.sync(() => {
      process.stderr.write(`${describeConfigError(error)}\n`)
      return process.exit(1)
    })
  )
)

/** The open runs on while the service loads; its failure is reported by the database layer that awaits it. */
const startOpeningPglite = (dataDir: string) =>
  Effect.map(
    Effect.promise(() => import("../layers/Pglite.js")),
    (pglite) => {
      const opening = pglite.openPglite(join(dataDir, "pglite"), pgliteTemplate)
      // not an unhandled rejection before the layer awaits it
      opening.catch(() => undefined)
      return opening
    }
  )

const program = Effect.gen(function* () {
  const config = yield* configOrExit
  const pglite = Option.isNone(config.databaseUrl) ? yield* startOpeningPglite(config.dataDir) : undefined
  const service = yield* Effect.promise(() => import("./Service.js"))
  return yield* service.run(config, pglite)
})

// the JSON logger replaces the pretty one
NodeRuntime.runMain(program, { disablePrettyLogger: true })
