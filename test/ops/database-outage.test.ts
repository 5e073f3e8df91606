/**
 * PostgreSQL stopped and started under load, on a private throwaway cluster
 * (`initdb` in a temp dir, its own port and socket dir): the machine's main
 * cluster is shared with other test runs and is never touched. As root the
 * cluster runs as the `postgres` user (`runuser`); skipped, with the reason,
 * when the PostgreSQL 15 binaries or that user are missing.
 *
 * While four clients keep reading (`GET /v1/agents`, 10 s deadline each), the
 * cluster is stopped: `/readyz` turns 503, and every request during the outage
 * is answered (none hangs past its deadline) with 503 `service_unavailable` in
 * the error envelope. The cluster is started again: `/readyz` turns 200 and
 * requests succeed, from the same service process (never restarted).
 */
import { execFileSync } from "node:child_process"
import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { bootstrapSecret, cleanupAll, freePort, host, serviceEnv, sleep, spawnService, startTimed } from "../../scripts/bench/lib.js"

const bin = "/usr/lib/postgresql/15/bin"
const isRoot = process.getuid?.() === 0
const hasPostgresUser = (() => {
  try {
    execFileSync("id", ["-u", "postgres"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()
const skipReason = !existsSync(`${bin}/initdb`)
  ? `no PostgreSQL 15 binaries in ${bin}`
  : isRoot && !hasPostgresUser
    ? "running as root and there is no postgres user to run initdb as"
    : undefined
if (skipReason !== undefined) console.log(`test/ops/database-outage.test.ts skipped: ${skipReason}`)

/** Runs a PostgreSQL binary, as the postgres user when we are root (initdb refuses root). */
const pgBin = (name: string, args: ReadonlyArray<string>) =>
  execFileSync(isRoot ? "runuser" : `${bin}/${name}`, isRoot ? ["-u", "postgres", "--", `${bin}/${name}`, ...args] : [...args], {
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 60_000
  })

interface Cluster {
  readonly url: string
  readonly start: () => void
  readonly stop: () => void
  readonly remove: () => void
}

const makeCluster = async (): Promise<Cluster> => {
  const dir = mkdtempSync(join(tmpdir(), "outage-pg-"))
  chmodSync(dir, 0o777)
  if (isRoot) execFileSync("chown", ["postgres", dir])
  const data = join(dir, "data")
  pgBin("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"])
  const port = await freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=${host} -c fsync=off`
  const start = () => void pgBin("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "start"])
  const stop = () => void pgBin("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])
  return {
    url: `postgres://postgres@${host}:${port}/postgres`,
    start,
    stop,
    remove: () => {
      try {
        stop()
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

type Outcome = { readonly status: number; readonly code: string | undefined; readonly ms: number } | { readonly error: string; readonly ms: number }

const get = async (url: string, token: string): Promise<Outcome> => {
  const started = performance.now()
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) })
    const text = await res.text()
    let code: string | undefined
    try {
      code = (JSON.parse(text) as { error?: { code?: string } }).error?.code
    } catch {
      code = `not JSON: ${text.slice(0, 60)}`
    }
    return { status: res.status, code, ms: performance.now() - started }
  } catch (error) {
    return { error: String((error as Error).name ?? error), ms: performance.now() - started }
  }
}

afterAll(cleanupAll, 60_000)

describe.skipIf(skipReason !== undefined)("PostgreSQL stopped and started under load", () => {
  it("/readyz turns 503 then 200; requests meanwhile get 503 in the envelope, none hangs; no restart needed", async () => {
    const cluster = await makeCluster()
    try {
      cluster.start()
      const port = await freePort()
      const base = `http://${host}:${port}`
      const env = serviceEnv({ PORT: String(port), DATABASE_URL: cluster.url, RATE_LIMIT_RPS: "100000", RATE_LIMIT_BURST: "100000" })
      const child = (await startTimed(() => spawnService(env), port)).child
      const token = bootstrapSecret(child)

      // the load: four clients reading until told to stop (bounded in count and time)
      const outcomes: Array<{ readonly phase: string; readonly outcome: Outcome }> = []
      let phase = "up"
      let running = true
      const client = async () => {
        for (let i = 0; i < 100_000 && running; i++) {
          const seenIn = phase
          outcomes.push({ phase: seenIn, outcome: await get(`${base}/v1/agents?limit=5`, token) })
          await sleep(20)
        }
      }
      const clients = Promise.all(Array.from({ length: 4 }, client))
      const readyz = async () => (await get(`${base}/readyz`, token)) as Outcome
      const waitReady = async (status: number, limitMillis: number) => {
        const deadline = performance.now() + limitMillis
        for (let last = await readyz(); performance.now() < deadline; last = await readyz()) {
          if ("status" in last && last.status === status) return true
          await sleep(100)
        }
        return false
      }

      await sleep(1_000)
      cluster.stop()
      phase = "down"
      expect(await waitReady(503, 15_000)).toBe(true)
      const ready503 = await readyz()
      expect(ready503).toMatchObject({ status: 503, code: "service_unavailable" })
      await sleep(3_000)
      phase = "restarting"
      cluster.start()
      expect(await waitReady(200, 30_000)).toBe(true)
      phase = "back"
      await sleep(2_000)
      running = false
      await clients

      const during = outcomes.filter((o) => o.phase === "down").map((o) => o.outcome)
      const after = outcomes.filter((o) => o.phase === "back").map((o) => o.outcome)
      const summary = (xs: ReadonlyArray<Outcome>) =>
        Object.entries(
          xs.reduce<Record<string, number>>((acc, o) => {
            const key = "status" in o ? `${o.status}${o.code ? ` ${o.code}` : ""}` : o.error
            acc[key] = (acc[key] ?? 0) + 1
            return acc
          }, {})
        )
      console.log(
        `[outage] during: ${JSON.stringify(summary(during))}, slowest ${Math.round(Math.max(...during.map((o) => o.ms)))} ms; ` +
          `after: ${JSON.stringify(summary(after))}`
      )
      expect(child.process.exitCode).toBe(null)
      expect(during.length).toBeGreaterThan(0)
      // none hung: every request of the outage was answered within its deadline, with 503 in the envelope
      expect(during.filter((o) => !("status" in o))).toEqual([])
      expect(during.filter((o) => "status" in o && !(o.status === 503 && o.code === "service_unavailable"))).toEqual([])
      expect(after.length).toBeGreaterThan(0)
      expect(after.filter((o) => !("status" in o) || o.status !== 200)).toEqual([])
    } finally {
      await cleanupAll()
      cluster.remove()
    }
  }, 180_000)
})
