/**
 * `npm start`: checks the configuration, starts opening the embedded database
 * on a thread of its own (`layers/pglite/Thread.ts`), and only then loads the service
 * (`Service.ts`). Most of a start is those two, and they run side by side:
 * PostgreSQL starts in the other thread while the service's modules evaluate
 * and its layers build on this one.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { setFlagsFromString } from "node:v8"
import { describeConfigError, fromEnv } from "./Config.js"
import { writeFatal } from "./Logging.js"

/**
 * PGlite is 9 MB of WebAssembly. V8 runs it compiled by its baseline compiler
 * and recompiles each function that has run "enough" with its optimising one,
 * on background threads. At a start hundreds of functions pass V8's default
 * bar once (PostgreSQL's own start, the first catalog reads) and their
 * recompilation took CPU the start needed, on a 2-core machine the main
 * thread's own time. A bar a hundred times higher
 * leaves it to the functions that stay hot under load. Set before anything
 * compiles the module (the flag is read per compilation, for the whole process).
 */
setFlagsFromString("--wasm-tiering-budget=180000000")

/**
 * After a full collection V8 lets a heap grow to a few times what survived it
 * before the next one. Ingestion promotes much short-lived work (pages, their
 * text, chunks, statements) into the old generation, so each thread's heap,
 * and the process's resident memory with it, grew with garbage rather than
 * with what is alive. A lower bound over the live set collects it sooner, at
 * a cost in collections too small to slow ingestion. Read at each limit V8
 * sets, for the heap of every thread of the process, this one included.
 */
setFlagsFromString("--heap-growing-percent=50")

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
    Effect.promise(() => import("../layers/pglite/Thread.js")),
    (thread) => {
      const opening = thread.openPgliteThread(join(dataDir, "pglite"), pgliteTemplate)
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

/**
 * The last line of defence: an error no handler took (a library's event handler that throws, a promise nobody
 * awaited) leaves the process in a state nobody knows. One line at fatal level names it, and the process exits
 * at once with code 70, so its supervisor starts it afresh (README, "Running under a supervisor").
 */
const exitOnEscape = (origin: string) => (error: unknown) => {
  writeFatal(origin, error)
  process.exit(70)
}
process.on("uncaughtException", exitOnEscape("uncaughtException"))
process.on("unhandledRejection", exitOnEscape("unhandledRejection"))

// the JSON logger replaces the pretty one
NodeRuntime.runMain(program, { disablePrettyLogger: true })
