/**
 * Start to ready of the bundle (`node dist/server.mjs`, what `npm start` runs)
 * against a bare `node:http` server started the same way (spawn -> first 200
 * on /readyz, resp. /). Each round: on PGlite a first start on an empty data
 * dir (unpacks the database template, bootstraps) and a restart on it; on
 * PostgreSQL a first start on a new database (migrations, bootstrap) and a
 * restart; then the baseline. Rounds interleave service and baseline so drift
 * on the machine hits both alike. Builds first when a source is newer.
 */
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { bundleIsStale } from "../freshness.mjs"
import {
  type Child,
  fmt,
  freePort,
  host,
  median,
  ratio,
  repoRoot,
  rssMb,
  type Section,
  serviceEnv,
  sleep,
  spawnTracked,
  startTimed,
  stop,
  tempDir,
  throwawayDatabase
} from "./lib.js"

const rounds = 3
const idleMs = 3_000

const bareServer = `require("node:http").createServer((req, res) => res.end("ok")).listen(Number(process.env.PORT), ${JSON.stringify(host)})`
const bundle = join(repoRoot, "dist/server.mjs")

type Sample = { readonly ms: number; readonly rss: number }

/** Starts, waits for ready, idles, reads RSS, stops. */
const measure = async (spawnIt: (port: number) => Child): Promise<Sample> => {
  const port = await freePort()
  const { child, ms } = await startTimed(() => spawnIt(port), port)
  try {
    await sleep(idleMs)
    return { ms, rss: rssMb(child.pid) }
  } finally {
    await stop(child)
  }
}

export const startup = async (): Promise<Section> => {
  if (bundleIsStale(repoRoot, bundle)) {
    console.log("  building dist/ first")
    execFileSync(process.execPath, ["--import", "tsx", "scripts/build.ts"], { cwd: repoRoot, stdio: "inherit" })
  }
  const samples = { first: [] as Array<Sample>, restart: [] as Array<Sample>, pgFirst: [] as Array<Sample>, pgRestart: [] as Array<Sample>, bare: [] as Array<Sample> }

  for (let round = 1; round <= rounds; round++) {
    const dataDir = await tempDir("startup")
    const pglite = (port: number) => spawnTracked(process.execPath, [bundle], serviceEnv({ PORT: String(port), DATA_DIR: dataDir }))
    samples.first.push(await measure(pglite))
    samples.restart.push(await measure(pglite))
    const databaseUrl = await throwawayDatabase({ prefix: "startup" })
    const pg = (port: number) =>
      spawnTracked(process.execPath, [bundle], serviceEnv({ PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: databaseUrl, ADMIN_TOKEN: "bench-startup-admin-token-0123456789abcdef" }))
    samples.pgFirst.push(await measure(pg))
    samples.pgRestart.push(await measure(pg))
    samples.bare.push(await measure((port) => spawnTracked(process.execPath, ["-e", bareServer], { ...process.env, PORT: String(port) })))
    const last = (xs: ReadonlyArray<Sample>) => `${fmt(xs.at(-1)!.ms)} ms (${fmt(xs.at(-1)!.rss)} MB)`
    console.log(
      `  round ${round}: PGlite first ${last(samples.first)}, restart ${last(samples.restart)}; ` +
        `PostgreSQL first ${last(samples.pgFirst)}, restart ${last(samples.pgRestart)}; bare node ${last(samples.bare)}`
    )
  }

  const m = (xs: ReadonlyArray<Sample>, key: "ms" | "rss") => median(xs.map((x) => x[key]))
  const bare = (key: "ms" | "rss") => m(samples.bare, key)
  const row = (label: string, xs: ReadonlyArray<Sample>, key: "ms" | "rss", target: string) =>
    `| ${label} | ${fmt(m(xs, key))} | ${fmt(bare(key))} | ${ratio(m(xs, key), bare(key))} | ${target} |`
  return {
    title: `Startup of the bundle, \`node dist/server.mjs\` (median of ${rounds}; poll /readyz every 20 ms; RSS after ${idleMs / 1000} s idle)`,
    lines: [
      "| measurement | service | bare node:http | service / bare | target |",
      "|---|---:|---:|---:|---:|",
      row("PGlite: first start to ready, empty data dir (ms)", samples.first, "ms", "≤ 1500"),
      row("PGlite: restart to ready (ms)", samples.restart, "ms", "≤ 1000"),
      row("PGlite: idle RSS after first start (MB)", samples.first, "rss", "≤ 380"),
      row("PGlite: idle RSS after restart (MB)", samples.restart, "rss", "≤ 380"),
      row("PostgreSQL: first start to ready, new database (ms)", samples.pgFirst, "ms", "–"),
      row("PostgreSQL: restart to ready (ms)", samples.pgRestart, "ms", "–"),
      row("PostgreSQL: idle RSS after restart (MB)", samples.pgRestart, "rss", "≤ 150")
    ]
  }
}
