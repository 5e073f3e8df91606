/**
 * `node scripts/distLoads.mjs <loads-dir> [dist-dir]`: after the bundle suite
 * (test/dist) ran with `DIST_LOADS_DIR=<loads-dir>` (on both databases), names
 * every chunk of the bundle that no process of the suite loaded: code users may
 * reach that no test ran through the bundle. Chunks whose every source file is
 * one of `unreachable` below are let through, each for its reason. Exits 1 when
 * a chunk is left.
 */
import { readdirSync, readFileSync } from "node:fs"
import { basename, join } from "node:path"

/** Source files the service never loads in Node on Linux, with why. */
const unreachable = [
  [/@opentelemetry\/resources\/.*\/machine-id\//, "OpenTelemetry's host id detectors (one per platform): no resource detector is configured"],
  [/@electric-sql\/pglite\/dist\/(fs\/|chunk-)/, "PGlite's browser file systems (OPFS, IndexedDB)"],
  [/(^|\/)layers\/pglite\/Open\.ts$/, "PGlite on the calling thread: the service opens it on its own thread (the build and tests use this)"]
]

const [loadsDir, distDir = "dist"] = process.argv.slice(2)
if (loadsDir === undefined) {
  console.error("usage: node scripts/distLoads.mjs <loads-dir> [dist-dir]")
  process.exit(2)
}

const loaded = new Set(
  readdirSync(loadsDir)
    .flatMap((file) => readFileSync(join(loadsDir, file), "utf8").split("\n"))
    .filter((url) => url.endsWith(".mjs") && !url.includes("/node_modules/"))
    .map((url) => basename(new URL(url).pathname))
)
const chunks = JSON.parse(readFileSync(join(distDir, "chunks.json"), "utf8"))
const never = Object.entries(chunks).filter(([chunk]) => !loaded.has(chunk))
const why = (inputs) => {
  const reasons = inputs.map((input) => unreachable.find(([pattern]) => pattern.test(input))?.[1])
  return reasons.every((r) => r !== undefined) ? reasons[0] : undefined
}
const excused = never.filter(([, inputs]) => why(inputs) !== undefined)
const missed = never.filter(([, inputs]) => why(inputs) === undefined)
const total = Object.keys(chunks).length
console.log(`the bundle suite loaded ${total - never.length} of ${total} chunks; ${excused.length} are never loaded in Node on Linux:`)
for (const reason of new Set(excused.map(([, inputs]) => why(inputs)))) console.log(`  ${reason}`)
if (missed.length > 0) {
  console.error(`${missed.length} chunk(s) no test loaded through the bundle:`)
  for (const [chunk, inputs] of missed) console.error(`  ${chunk}: ${inputs.slice(0, 4).join(", ")}${inputs.length > 4 ? ", …" : ""}`)
  process.exit(1)
}
