/**
 * `npm run bench -- stall`: the hostile cases of `stall-cases.ts` against the bundle, on PGlite and on PostgreSQL
 * (a throwaway database), each with a second client probing `/healthz` every 50 ms. Prints, for each case, the
 * probe's slowest answer beside the same probe on the idle service (the baseline, in the same run), and the
 * other workspace's crawl or deliveries alone and beside the hostile one.
 *
 * `BENCH_PGLITE=0` or `BENCH_POSTGRES=0` leaves one database out.
 */
import { cliJson, fmt, freePort, host, ratio, type Section, serviceEnv, spawnService, startTimed, stop, tempDir, throwawayDatabase } from "./lib.js"
import * as stall from "./stall-cases.js"

const adminToken = "bench-stall-admin-token-0123456789abcdef"

const cases: ReadonlyArray<(target: stall.Target) => Promise<stall.CaseResult>> = [
  stall.patterns,
  stall.robots,
  stall.sitemap,
  stall.crawlTarpit,
  stall.webhookTarpit
]

const run = async (db: "PGlite" | "PostgreSQL"): Promise<Array<string>> => {
  const port = await freePort()
  const database: Record<string, string> =
    db === "PGlite" ? { DATA_DIR: await tempDir("stall") } : { DATABASE_URL: await throwawayDatabase({ prefix: "bench_stall" }) }
  const env = serviceEnv({ PORT: String(port), ADMIN_TOKEN: adminToken, ...stall.stallEnv, ...database })
  const { child } = await startTimed(() => spawnService(env), port)
  const base = `http://${host}:${port}`
  const target: stall.Target = {
    base,
    tenant: async (name) => {
      const slug = name.toLowerCase().replace(/\W+/g, "-")
      const ws = await cliJson<{ readonly id: string }>(base, adminToken, [
        "workspaces", "create", "--name", name, "--owner-email", `${slug}@stall.bench`, "--plan", "pro"
      ])
      const key = async (kind: "secret" | "forms") =>
        (await cliJson<Record<string, string>>(base, adminToken, ["keys", "create", "--workspace", ws.id, "--kind", kind, "--environment", "test"]))[kind]!
      return { secret: await key("secret"), forms: await key("forms") }
    }
  }
  try {
    const idle = await stall.idle(target)
    console.log(`${db} idle: slowest ${fmt(idle.probe.slowestMs)} ms of ${idle.probe.answers}`)
    const rows: Array<string> = []
    for (const runCase of cases) {
      const result = await runCase(target)
      console.log(`${db} ${result.name}: slowest ${fmt(result.probe.slowestMs)} ms; ${result.notes.join("; ")}`)
      const other =
        result.aloneMs !== undefined && result.besideMs !== undefined
          ? `${fmt(result.aloneMs)} → ${fmt(result.besideMs)} ms (${ratio(result.besideMs, result.aloneMs)})`
          : "–"
      rows.push(
        `| ${db} | ${result.name} | ${fmt(result.probe.slowestMs)} ms | ${fmt(idle.probe.slowestMs)} ms | ` +
          `${ratio(result.probe.slowestMs, idle.probe.slowestMs)} | ${result.probe.failures} | ${other} | ${result.ended ? "yes" : "no"} |`
      )
    }
    return rows
  } finally {
    await stop(child)
  }
}

export const stallBench = async (): Promise<Section> => {
  const rows: Array<string> = []
  if (process.env["BENCH_PGLITE"] !== "0") rows.push(...(await run("PGlite")))
  if (process.env["BENCH_POSTGRES"] !== "0") rows.push(...(await run("PostgreSQL")))
  return {
    title: "Stalls: a /healthz probe every 50 ms beside hostile inputs (bundle)",
    lines: [
      "| database | case | probe's slowest | idle probe's slowest | ratio | failed probes | other workspace alone → beside | ended |",
      "|---|---|---|---|---|---|---|---|",
      ...rows
    ]
  }
}
