/**
 * Cold start to ready on PGlite, against a bare `node:http` server started the
 * same way (spawn -> first 200). Each round: first start on an empty data dir
 * (creates the database, runs migrations, bootstraps), idle RSS, restart on the
 * same dir, idle RSS; then the baseline. Rounds interleave service and
 * baseline so drift on the machine hits both alike.
 */
import {
  type Child,
  fmt,
  freePort,
  host,
  median,
  ratio,
  rssMb,
  type Section,
  serviceEnv,
  sleep,
  spawnService,
  spawnTracked,
  startTimed,
  stop,
  tempDir
} from "./lib.js"

const rounds = 3
const idleMs = 3_000

const bareServer = `require("node:http").createServer((req, res) => res.end("ok")).listen(Number(process.env.PORT), ${JSON.stringify(host)})`

/** Starts, waits for ready, idles, reads RSS, stops. */
const measure = async (spawnIt: (port: number) => Child) => {
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
  const first: Array<{ ms: number; rss: number }> = []
  const restart: Array<{ ms: number; rss: number }> = []
  const bare: Array<{ ms: number; rss: number }> = []

  for (let round = 1; round <= rounds; round++) {
    const dataDir = await tempDir("startup")
    const service = (port: number) => spawnService(serviceEnv({ PORT: String(port), DATA_DIR: dataDir }))
    first.push(await measure(service))
    restart.push(await measure(service))
    bare.push(await measure((port) => spawnTracked(process.execPath, ["-e", bareServer], { ...process.env, PORT: String(port) })))
    const [f, r, b] = [first.at(-1)!, restart.at(-1)!, bare.at(-1)!]
    console.log(
      `  round ${round}: first start ${fmt(f.ms)} ms (${fmt(f.rss)} MB), restart ${fmt(r.ms)} ms (${fmt(r.rss)} MB), ` +
        `bare node ${fmt(b.ms)} ms (${fmt(b.rss)} MB)`
    )
  }

  const m = (xs: ReadonlyArray<{ ms: number; rss: number }>, key: "ms" | "rss") => median(xs.map((x) => x[key]))
  const row = (label: string, service: number, baseline: number, digits = 0) =>
    `| ${label} | ${fmt(service, digits)} | ${fmt(baseline, digits)} | ${ratio(service, baseline)} |`
  return {
    title: `Startup on PGlite (median of ${rounds}; poll /readyz every 20 ms; RSS after ${idleMs / 1000} s idle)`,
    lines: [
      "| measurement | service | bare node:http | service / bare |",
      "|---|---:|---:|---:|",
      row("first start to ready, empty data dir (ms)", m(first, "ms"), m(bare, "ms")),
      row("restart to ready, existing data dir (ms)", m(restart, "ms"), m(bare, "ms")),
      row("idle RSS after first start (MB)", m(first, "rss"), m(bare, "rss")),
      row("idle RSS after restart (MB)", m(restart, "rss"), m(bare, "rss"))
    ]
  }
}
