/**
 * Instructions per `GET` under callgrind, for A/B runs of the read path:
 * `npx tsx scripts/bench/instructions.ts [dist-dir | bare | floor ...]`
 * (default `dist`), `INSTR_ENDPOINT=tickets` for `GET /v1/tickets/{id}`.
 * `bare` counts the bare node:http + pg baseline (baseline-server.ts) and
 * `floor` the bare HttpApi + @effect/sql-pg one (floor-server.ts, agents only),
 * on the same rows, so the service's count has its references beside it.
 *
 * The HTTP benchmark's CPU figures move ±10-15 % with the machine's pace;
 * instruction counts do not (the same build counted 3,062k, 3,070k and 3,084k
 * a request in three runs), so a change of a few percent shows. Each service
 * runs under `valgrind --tool=callgrind` with counting off, takes
 * `INSTR_WARM` requests (default 1,500), then counts `INSTR_N` more (default
 * 1,000). Under valgrind V8's optimising compiler never quite settles and a
 * major GC may or may not fall in the window, so the figure that compares is
 * "program": everything but the compiler and the major GC (young-generation GC
 * stays in: it follows what a request allocates).
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  autocannon,
  bootstrapSecret,
  cleanupAll,
  createAgent,
  host,
  noRateLimit,
  serviceEnv,
  spawnTracked,
  throwawayDatabase,
  withServer
} from "./lib.js"

const targets = process.argv.length > 2 ? process.argv.slice(2) : ["dist"]
const endpoint = process.env["INSTR_ENDPOINT"] === "tickets" ? "tickets" : "agents"
const warm = Number(process.env["INSTR_WARM"] ?? 1500)
const counted = Number(process.env["INSTR_N"] ?? 1000)

// vgdb (how callgrind_control reaches the process) names its pipes by user and host; neither is set here
const vgdbEnv = { USER: "root", LOGNAME: "root", HOST: host }

const categoryOf = (fn: string) =>
  /compiler::|maglev|turboshaft|Compile|Parser|Scanner|interpreter::Bytecode|Zone/i.test(fn)
    ? "compiler"
    : /Marking|Sweep|MarkCompact|Evacuat|RememberedSet|Compactor/.test(fn)
      ? "major GC"
      : "program"

/** Instructions by category, from the largest dump (the main thread's counted window). */
const summarize = (dir: string) => {
  const files = readdirSync(dir).map((f) => join(dir, f))
  const largest = files.sort((a, b) => statSync(b).size - statSync(a).size)[0]!
  const text = execFileSync("callgrind_annotate", ["--threshold=100", largest], { encoding: "utf8", maxBuffer: 1 << 28 })
  const totals: Record<string, number> = { program: 0, compiler: 0, "major GC": 0 }
  for (const line of text.split("\n")) {
    const m = /^\s*([\d,]+)\s+\([^)]*\)\s+(.*)$/.exec(line)
    if (m === null || line.includes("PROGRAM TOTALS")) continue
    const category = categoryOf(m[2]!)
    totals[category] = (totals[category] ?? 0) + Number(m[1]!.replace(/,/g, ""))
  }
  return totals
}

/** The command that runs a target: a bundle's server, or one of the two baselines (TypeScript, through tsx). */
const commandOf = (target: string): Array<string> =>
  target === "bare" || target === "floor"
    ? [process.execPath, "--import", "tsx", `scripts/bench/${target === "bare" ? "baseline" : "floor"}-server.ts`]
    : [process.execPath, join(target, "server.mjs")]

const main = async () => {
  if (endpoint === "tickets" && targets.includes("floor")) throw new Error("the floor serves GET /v1/agents/{id} only")
  // the rows are made by a plain start of the first bundle named (or `dist`)
  const maker = targets.find((t) => t !== "bare" && t !== "floor") ?? "dist"
  const databaseUrl = await throwawayDatabase()
  let token = ""
  let path = ""
  await withServer(
    (port) => spawnTracked(process.execPath, [join(maker, "server.mjs")], serviceEnv({ PORT: String(port), DATABASE_URL: databaseUrl, ...noRateLimit })),
    async (base, child) => {
      token = bootstrapSecret(child)
      const agentId = await createAgent(base, token)
      path = `/v1/agents/${agentId}`
      if (endpoint === "tickets") {
        const res = await fetch(`${base}/v1/tickets`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ agent_id: agentId, subject: "Parcel not delivered", body: "It has been a week." })
        })
        path = `/v1/tickets/${((await res.json()) as { readonly data: { readonly public_id: string } }).data.public_id}`
      }
    }
  )
  for (const target of targets) {
    const out = mkdtempSync(join(tmpdir(), "callgrind-"))
    const control = (pid: number, ...args: Array<string>) =>
      execFileSync("callgrind_control", [`--vgdb-prefix=${out}/vgdb`, ...args, String(pid)], {
        env: { ...process.env, ...vgdbEnv },
        stdio: "ignore"
      })
    await withServer(
      (port) =>
        spawnTracked(
          "valgrind",
          [
            "--tool=callgrind",
            `--vgdb-prefix=${out}/vgdb`,
            "--instr-atstart=no",
            // V8 writes the code it runs
            "--smc-check=all-non-file",
            `--callgrind-out-file=${out}/dump.%p`,
            ...commandOf(target)
          ],
          serviceEnv({ PORT: String(port), DATABASE_URL: databaseUrl, ...noRateLimit, ...vgdbEnv })
        ),
      async (base, child) => {
        const headers = { authorization: `Bearer ${token}` }
        await autocannon({ url: base + path, connections: 10, amount: warm, headers, timeout: 60 })
        control(child.pid, "--instr=on")
        const result = await autocannon({ url: base + path, connections: 10, amount: counted, headers, timeout: 60 })
        control(child.pid, "--instr=off")
        control(child.pid, "--dump")
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target}: ${result.non2xx} non-2xx, ${result.errors} errors`)
      }
    )
    const totals = summarize(out)
    const k = (n: number) => `${Math.round(n / counted / 1000)}k`
    console.log(
      `${target} GET /v1/${endpoint}/{id}: program ${k(totals["program"]!)} instructions a request ` +
        `(compiler ${k(totals["compiler"]!)}, major GC ${k(totals["major GC"]!)})`
    )
  }
}

main()
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => cleanupAll())
