/**
 * `npm run bench` runs every benchmark in sequence; `npm run bench -- startup`
 * (or `reads`) runs one. Prints a markdown summary and writes it to
 * scripts/bench/results/latest.md. Children, temp dirs and throwaway databases
 * are cleaned up on success, failure and Ctrl-C.
 */
import { execFileSync } from "node:child_process"
import { mkdir, writeFile } from "node:fs/promises"
import { cpus, loadavg } from "node:os"
import { claimCall } from "./claim-call.js"
import { consolePages } from "./console.js"
import { crawl } from "./crawl.js"
import { decoders } from "./decoders.js"
import { formElement } from "./form-element.js"
import { knowledge } from "./knowledge.js"
import { patterns } from "./patterns.js"
import { pgliteWait } from "./pglite-wait.js"
import { reads } from "./reads.js"
import { replies } from "./replies.js"
import { retrieval } from "./retrieval.js"
import { cleanupAll, ensureBuilt, repoRoot, type Section } from "./lib.js"
import { stallBench } from "./stall.js"
import { startup } from "./startup.js"
import { tickets } from "./tickets.js"
import { webhooks } from "./webhooks.js"
import { widget } from "./widget.js"
import { widgetHandoff } from "./widget-handoff.js"

const benchmarks: Record<string, () => Promise<Section>> = {
  startup,
  reads,
  webhooks,
  "claim-call": claimCall,
  tickets,
  knowledge,
  crawl,
  "pglite-wait": pgliteWait,
  decoders,
  replies,
  retrieval,
  "form-element": formElement,
  patterns,
  console: consolePages,
  stall: stallBench,
  widget: async () => {
    const element = await widget()
    const handoff = await widgetHandoff()
    return { title: element.title, lines: [...element.lines, "", `### ${handoff.title}`, "", ...handoff.lines] }
  }
}

const requested = process.argv.slice(2)
const unknown = requested.filter((name) => !(name in benchmarks))
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(", ")}; choose from: ${Object.keys(benchmarks).join(", ")}`)
  process.exit(2)
}
const names = requested.length > 0 ? requested : Object.keys(benchmarks)

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void cleanupAll().finally(() => process.exit(130)))
}

const commit = () => {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim()
    const dirty = execFileSync("git", ["status", "--porcelain"], { cwd: repoRoot, encoding: "utf8" }).trim() !== ""
    return dirty ? `${sha} (with uncommitted changes)` : sha
  } catch {
    return "unknown"
  }
}

// the services run as ops run them: the bundle, built now if a source is newer
process.env["BENCH_SERVICE"] ??= "bundle"
if (process.env["BENCH_SERVICE"] === "bundle") ensureBuilt()

// other work on the machine skews the numbers; the summary records how busy it was
const loadAtStart = loadavg()[0]!.toFixed(2)
const sections: Array<Section> = []
try {
  for (const name of names) {
    console.log(`\n== ${name}`)
    sections.push(await benchmarks[name]!())
  }
} catch (error) {
  console.error("\nbenchmark failed:", error)
  process.exitCode = 1
} finally {
  await cleanupAll()
}

const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}`
const command = `npm run bench${requested.length > 0 ? ` -- ${requested.join(" ")}` : ""}`
const summary = [
  "# Benchmarks",
  "",
  `${new Date().toISOString()} · commit ${commit()} · Node ${process.version} · ${machine} · load avg ${loadAtStart} at start · \`${command}\``,
  ...sections.flatMap((s) => ["", `## ${s.title}`, "", ...s.lines]),
  ""
].join("\n")
if (sections.length > 0) console.log(`\n${summary}`)

// a partial run does not replace the last complete results
if (sections.length === names.length) {
  const dir = new URL("./results/", import.meta.url)
  await mkdir(dir, { recursive: true })
  await writeFile(new URL("latest.md", dir), summary)
  console.log("written to scripts/bench/results/latest.md")
}
