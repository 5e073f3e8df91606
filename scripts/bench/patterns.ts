/**
 * `npm run bench -- patterns`: the engines a form field's `pattern` could run
 * on, against JavaScript's `RegExp` (flag `v`, what the service used before),
 * all in this process: ordinary patterns on ordinary values, hostile patterns
 * (the spellings of catastrophic backtracking) on a short value and on one of
 * the longest a pattern runs on (`maxPatternInput`), linear patterns of a large
 * program on that longest value, and what each engine costs to load.
 *
 * Engines: `re2js` (pure JavaScript, a dependency) and, when the folder
 * `BENCH_PATTERN_CANDIDATES` (a `node_modules`) holds it, `re2-wasm` (RE2 in
 * WebAssembly; not a dependency). `RegExp` on a hostile case runs on a worker
 * thread that is stopped after `regExpLimitMs`: it may never finish.
 */
import { execFileSync } from "node:child_process"
import { statSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import { gzipSync } from "node:zlib"
import { build } from "esbuild"
import { RE2JS } from "re2js"
import { maxPatternInput } from "../../schema/Forms.js"
import { compilePattern } from "../../src/forms/Pattern.js"
import { fmt, median, ratio, repoRoot, type Section } from "./lib.js"

const regExpLimitMs = 2_000
const candidates = process.env["BENCH_PATTERN_CANDIDATES"]

interface Engine {
  readonly name: string
  /** A whole-value matcher of `pattern`, or a thrown error. */
  readonly compile: (pattern: string) => (value: string) => boolean
}

const regExp: Engine = {
  name: "RegExp (v)",
  compile: (pattern) => {
    const re = new RegExp(`^(?:${pattern})$`, "v")
    return (value) => re.test(value)
  }
}

const re2js: Engine = {
  name: "re2js",
  compile: (pattern) => {
    const re = RE2JS.compile(pattern)
    return (value) => re.testExact(value)
  }
}

type Re2Wasm = new (pattern: string, flags: string) => { test(value: string): boolean }
const re2wasmClass = (): Re2Wasm | undefined => {
  if (candidates === undefined) return undefined
  try {
    return (createRequire(join(candidates, "noop.js"))("re2-wasm") as { RE2: Re2Wasm }).RE2
  } catch {
    return undefined
  }
}
const Re2Wasm = re2wasmClass()
const re2wasm: ReadonlyArray<Engine> =
  Re2Wasm === undefined
    ? []
    : [{
        name: "re2-wasm",
        compile: (pattern) => {
          const re = new Re2Wasm(`^(?:${pattern})$`, "u")
          return (value) => re.test(value)
        }
      }]

/** What the service runs (`src/forms/Pattern.ts`): the JavaScript pattern translated into RE2's syntax, then re2js. */
const service: Engine = {
  name: "service",
  compile: (pattern) => {
    const compiled = compilePattern(pattern)
    if ("error" in compiled) throw new Error(compiled.error)
    return compiled.test
  }
}

const linearEngines: ReadonlyArray<Engine> = [re2js, service, ...re2wasm]

/** Microseconds per call: batches of about 20 ms, the median of seven, after a warm-up. */
const perCallUs = (run: () => unknown): number => {
  for (let i = 0; i < 50; i++) run()
  const once = performance.now()
  run()
  const per = Math.max(performance.now() - once, 0.0005)
  const n = Math.min(100_000, Math.max(1, Math.round(20 / per)))
  const batches: Array<number> = []
  for (let b = 0; b < 7; b++) {
    const start = performance.now()
    for (let i = 0; i < n; i++) run()
    batches.push(((performance.now() - start) * 1000) / n)
  }
  return median(batches)
}

/** Milliseconds of single calls (the median of three): each may be long. */
const singleMs = (run: () => unknown): number =>
  median([0, 1, 2].map(() => {
    const start = performance.now()
    run()
    return performance.now() - start
  }))

/** `RegExp` on a worker thread, stopped after the limit: its time in ms, or undefined when it was stopped. */
const regExpOnWorker = (pattern: string, value: string): Promise<{ readonly ms?: number; readonly verdict?: boolean }> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(
      `const { parentPort, workerData } = require("node:worker_threads")
       const re = new RegExp("^(?:" + workerData.pattern + ")$", "v")
       const start = performance.now()
       const verdict = re.test(workerData.value)
       parentPort.postMessage({ ms: performance.now() - start, verdict })`,
      { eval: true, workerData: { pattern, value } }
    )
    const timer = setTimeout(() => void worker.terminate().then(() => resolve({})), regExpLimitMs)
    worker.once("message", (m: { ms: number; verdict: boolean }) => {
      clearTimeout(timer)
      void worker.terminate().then(() => resolve(m))
    })
    worker.once("error", (e) => {
      clearTimeout(timer)
      reject(e)
    })
  })

const ordinary: ReadonlyArray<{ readonly label: string; readonly pattern: string; readonly values: ReadonlyArray<string> }> = [
  { label: "e-mail-like", pattern: "[^\\s@]+@[^\\s@]+\\.[^\\s@]+", values: ["ana.lopez@example.com", "ana.lopez.example.com"] },
  { label: "phone", pattern: "\\+?[0-9][0-9 \\(\\)\\.\\-]{6,19}", values: ["+34 912 345 678", "call me maybe"] },
  { label: "postcode (US ZIP+4)", pattern: "[0-9]{5}(-[0-9]{4})?", values: ["94105-1234", "9410"] },
  { label: "order number", pattern: "ORD-[A-Z]{2}[0-9]{6}", values: ["ORD-ES123456", "ORD-es123456"] }
]

const hostile: ReadonlyArray<string> = ["((a)+)+", "(?:a+)+", "(a|a)*", "(a|aa)*b", `${"a*".repeat(30)}b`, "(\\w+\\s?)*$"]
const shortHostile = `${"a".repeat(28)}!`
const longHostile = `${"a".repeat(maxPatternInput - 1)}!`

/** Patterns no backtracking hurts but whose program is large: the linear engines' worst case is size × length. */
const large: ReadonlyArray<string> = ["[a-z]{1000}", "\\p{L}{50}", "\\p{L}{200}", "\\p{L}{1000}", "[\\p{L}\\p{N}]{1000}", "(\\p{L}{0,30}){0,30}", "(.*){1000}"]

/** A table cell of `run`, or what it failed with (re2-wasm aborts when its fixed heap runs out, and stays aborted). */
const guarded = (run: () => string): string => {
  try {
    return run()
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    return `failed: ${/OOM|enlarge memory/.test(message) ? "out of its fixed WebAssembly heap (abort)" : message.split("\n")[0]!.slice(0, 60)}`
  }
}

const cell = (us: number) => (us >= 1000 ? `${fmt(us / 1000, 1)} ms` : `${fmt(us, 2)} µs`)

const ordinaryTable = (): Array<string> => {
  const engines = [regExp, ...linearEngines]
  const lines = [
    `| pattern | value | ${engines.map((e) => e.name).join(" | ")} | ${linearEngines.map((e) => `${e.name} ÷ RegExp`).join(" | ")} |`,
    `|---|---|${engines.map(() => "---:").join("|")}|${linearEngines.map(() => "---:").join("|")}|`
  ]
  for (const o of ordinary) {
    const matchers = engines.map((e) => e.compile(o.pattern))
    for (const value of o.values) {
      const verdicts = matchers.map((m) => m(value))
      if (verdicts.some((v) => v !== verdicts[0])) throw new Error(`engines disagree on ${o.pattern} / ${value}`)
      const times = matchers.map((m) => perCallUs(() => m(value)))
      lines.push(
        `| ${o.label} \`${o.pattern}\` | \`${value}\` (${verdicts[0] ? "match" : "no match"}) | ${times.map(cell).join(" | ")} | ${times.slice(1).map((t) => ratio(t, times[0]!)).join(" | ")} |`
      )
    }
  }
  return lines
}

const compileTable = (): Array<string> => {
  const engines = [regExp, ...linearEngines]
  const lines = [
    `| pattern | ${engines.map((e) => `${e.name} compile`).join(" | ")} |`,
    `|---|${engines.map(() => "---:").join("|")}|`
  ]
  for (const o of ordinary) {
    lines.push(`| ${o.label} | ${engines.map((e) => cell(perCallUs(() => e.compile(o.pattern)))).join(" | ")} |`)
  }
  return lines
}

const hostileTable = async (): Promise<Array<string>> => {
  const lines = [
    `| pattern | RegExp, 28 letters + 1 | ${linearEngines.map((e) => `${e.name}, 28 + 1 | ${e.name}, ${maxPatternInput} chars`).join(" | ")} |`,
    `|---|---:|${linearEngines.map(() => "---:|---:").join("|")}|`
  ]
  for (const pattern of hostile) {
    const native = await regExpOnWorker(pattern, shortHostile)
    const nativeCell = native.ms === undefined ? `> ${fmt(regExpLimitMs)} ms (stopped)` : `${fmt(native.ms, 1)} ms`
    const cells = linearEngines.flatMap((e) =>
      [shortHostile, longHostile].map((value) =>
        guarded(() => {
          const m = e.compile(pattern)
          if (m(value)) throw new Error(`${e.name} matched ${pattern} on a hostile value`)
          return `${fmt(singleMs(() => m(value)), 2)} ms`
        })
      )
    )
    console.log(`  hostile ${pattern.slice(0, 20)}: ${nativeCell} | ${cells.join(" | ")}`)
    lines.push(`| \`${pattern.length > 40 ? `${pattern.slice(0, 12)}…(${pattern.length} chars)` : pattern}\` | ${nativeCell} | ${cells.join(" | ")} |`)
  }
  return lines
}

const largeTable = async (): Promise<Array<string>> => {
  const lines = [
    `| pattern | re2js program size | RegExp | ${linearEngines.map((e) => `${e.name} (first call / next)`).join(" | ")} |`,
    `|---|---:|---:|${linearEngines.map(() => "---:").join("|")}|`
  ]
  for (const pattern of large) {
    const size = RE2JS.compile(pattern).programSize()
    const native = await regExpOnWorker(pattern, longHostile)
    const nativeCell = native.ms === undefined ? `> ${fmt(regExpLimitMs)} ms (stopped)` : `${fmt(native.ms, 1)} ms`
    const cells = linearEngines.map((e) =>
      guarded(() => {
        const m = e.compile(pattern)
        const start = performance.now()
        m(longHostile)
        const first = performance.now() - start
        return `${fmt(first, 1)} / ${fmt(singleMs(() => m(longHostile)), 1)} ms`
      })
    )
    console.log(`  large ${pattern}: ${nativeCell} | ${cells.join(" | ")}`)
    lines.push(`| \`${pattern}\` | ${size} | ${nativeCell} | ${cells.join(" | ")} |`)
  }
  return lines
}

/** A fresh Node process that loads an engine, compiles one pattern and matches once: wall ms (median of 5) and RSS. */
const startupOf = (label: string, script: string): string => {
  const runs = [0, 1, 2, 3, 4].map(() => {
    const start = performance.now()
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: repoRoot, encoding: "utf8" })
    return { ms: performance.now() - start, rss: Number(out.trim()) }
  })
  return `| ${label} | ${fmt(median(runs.map((r) => r.ms)))} ms | ${fmt(median(runs.map((r) => r.rss)), 1)} MB |`
}

const startupTable = (): Array<string> => {
  const rss = `console.log(process.memoryUsage().rss / 1048576)`
  const lines = [
    "| engine | process start + load + first match | RSS after |",
    "|---|---:|---:|",
    startupOf("RegExp (nothing to load)", `new RegExp("^(?:[0-9]{5})$", "v").test("94105"); ${rss}`),
    startupOf("re2js", `const { RE2JS } = await import("re2js"); RE2JS.compile("[0-9]{5}").testExact("94105"); ${rss}`)
  ]
  if (Re2Wasm !== undefined && candidates !== undefined) {
    const from = JSON.stringify(join(candidates, "noop.js"))
    lines.push(startupOf("re2-wasm", `import { createRequire } from "node:module"; const { RE2 } = createRequire(${from})("re2-wasm"); new RE2("^(?:[0-9]{5})$", "u").test("94105"); ${rss}`))
  }
  return lines
}

/** esbuild's minified bundle of an engine (what it adds to `dist/server.mjs`), and files it needs beside it. */
const bundleTable = async (): Promise<Array<string>> => {
  const sizeOf = async (contents: string, resolveDir: string) => {
    const out = await build({ stdin: { contents, resolveDir, loader: "js" }, bundle: true, minify: true, write: false, platform: "node", format: "esm", logLevel: "silent" })
    const bytes = out.outputFiles[0]!.contents
    return `${fmt(bytes.byteLength / 1024)} KB (${fmt(gzipSync(bytes).byteLength / 1024)} KB gzip)`
  }
  const lines = [
    "| engine | minified bundle | files beside the bundle |",
    "|---|---:|---|",
    `| re2js | ${await sizeOf(`import { RE2JS } from "re2js"; export const m = (p, v) => RE2JS.compile(p).testExact(v)`, repoRoot)} | none |`
  ]
  if (Re2Wasm !== undefined && candidates !== undefined) {
    const wasm = join(candidates, "re2-wasm/build/wasm/re2.wasm")
    const wasmKb = fmt(statSync(wasm).size / 1024)
    lines.push(`| re2-wasm | ${await sizeOf(`import { RE2 } from "re2-wasm"; export const m = (p, v) => new RE2(p, "u").test(v)`, candidates)} | \`re2.wasm\`, ${wasmKb} KB, read with \`readFileSync\` from the bundle's folder |`)
  }
  return lines
}

/** The service's first Unicode property: it builds the string of every code point and scans it; the next one only scans. */
const propertyLines = (): Array<string> => {
  const time = (pattern: string) => {
    const start = performance.now()
    compilePattern(pattern)
    return performance.now() - start
  }
  const first = time("\\p{Lu}")
  const next = time("\\p{Ll}")
  const cached = time("\\p{Ll}")
  return [`The service's first Unicode property (\`\\p{Lu}\`, a 4 MB string of every code point built and scanned): ${fmt(first)} ms; a next one (\`\\p{Ll}\`, scan only): ${fmt(next)} ms; a property seen before: ${fmt(cached, 2)} ms.`]
}

export const patterns = async (): Promise<Section> => {
  const properties = propertyLines()
  if (Re2Wasm === undefined) console.log("re2-wasm not found (set BENCH_PATTERN_CANDIDATES to a node_modules holding it): re2js only")
  const lines = [
    `Engines: ${[regExp, ...linearEngines].map((e) => e.name).join(", ")}. Whole-value match; hostile values are letters \`a\` and one \`!\`.`,
    "",
    ...properties,
    "",
    "Ordinary patterns, per match:",
    "",
    ...ordinaryTable(),
    "",
    "Compiling an ordinary pattern:",
    "",
    ...compileTable(),
    "",
    "Hostile patterns, per match (each verdict: no match):",
    "",
    ...(await hostileTable()),
    "",
    `Large programs on a value of ${maxPatternInput} characters (no match):`,
    "",
    ...(await largeTable()),
    "",
    "Start-up:",
    "",
    ...startupTable(),
    "",
    "Bundle:",
    "",
    ...(await bundleTable())
  ]
  for (const line of lines) console.log(line)
  return { title: "Form field patterns: linear-time engines against RegExp", lines }
}
