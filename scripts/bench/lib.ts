/**
 * Shared helpers for the benchmarks: tracked child processes (so every one is
 * killed at the end, even on failure), cleanup tasks, readiness polling, RSS,
 * throwaway PostgreSQL databases and minimal types for the untyped `pg` and
 * `autocannon` packages.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { get } from "node:http"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { bundleIsStale } from "../freshness.mjs"

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url))
export const host = "127.0.0.1"

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** The `p`-th percentile (0–100) of `xs`, nearest rank. */
export const percentile = (xs: ReadonlyArray<number>, p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!
}

// Cleanup

const cleanups: Array<() => Promise<void>> = []

/** Registers work for `cleanupAll` (temp dirs, databases); runs last-in first-out. */
export const onCleanup = (task: () => Promise<void>) => void cleanups.push(task)

export const tempDir = async (label: string): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), `bench-${label}-`))
  onCleanup(() => rm(dir, { recursive: true, force: true }))
  return dir
}

// Child processes

export interface Child {
  readonly process: ChildProcess
  readonly pid: number
  /** Everything the process wrote so far (stdout and stderr, capped). */
  readonly output: () => string
}

const children = new Set<ChildProcess>()
const exited = (p: ChildProcess) => p.exitCode !== null || p.signalCode !== null

/** Spawns with piped output (drained, so the child never blocks on a full pipe). */
export const spawnTracked = (
  command: string,
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  cwd: string = repoRoot
): Child => {
  // Output goes to a file, not a pipe: a pipe to this busy process (it also runs the load generator) fills
  // up, and the child's synchronous stdout writes then block on it, which measured the pipe, not the child.
  const outFile = join(outputDir(), `${children.size}-${randomBytes(4).toString("hex")}.log`)
  const fd = openSync(outFile, "w")
  const p = spawn(command, args, { cwd, env, stdio: ["ignore", fd, fd] })
  closeSync(fd)
  if (p.pid === undefined) throw new Error(`failed to spawn ${command}`)
  children.add(p)
  p.once("exit", () => children.delete(p))
  const output = () => {
    const text = readFileSync(outFile, "utf8")
    return text.length > 64 * 1024 ? text.slice(-64 * 1024) : text
  }
  return { process: p, pid: p.pid, output }
}

let outputs: string | undefined
/** One folder for every child's output in this run, removed when the run ends. */
const outputDir = (): string => {
  if (outputs === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "bench-output-"))
    outputs = dir
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }))
  }
  return outputs
}

/** SIGTERM (graceful, so PGlite closes its data dir), then SIGKILL after 5 s. */
export const stop = async (child: Child | ChildProcess): Promise<void> => {
  const p = "process" in child ? child.process : child
  if (exited(p)) return
  const gone = new Promise<void>((resolve) => p.once("exit", () => resolve()))
  p.kill("SIGTERM")
  const timer = setTimeout(() => p.kill("SIGKILL"), 5_000)
  await gone
  clearTimeout(timer)
}

/** Stops every child still running, then runs the cleanup tasks. Never throws. */
export const cleanupAll = async (): Promise<void> => {
  await Promise.all([...children].map((p) => stop(p)))
  for (const task of cleanups.splice(0).reverse()) {
    await task().catch((e: unknown) => console.error("cleanup failed:", e))
  }
}

/**
 * The environment of a service child: inherited, minus what would pick another database, with glibc's malloc arenas
 * capped as `npm start` caps them (package.json).
 */
export const serviceEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { MALLOC_ARENA_MAX: "2", ...process.env, HOST: host, ...extra }
  if (extra["DATABASE_URL"] === undefined) delete env["DATABASE_URL"]
  delete env["REDIS_URL"]
  return env
}

/**
 * `node --import tsx src/main.ts` (not the tsx CLI, so the pid is the server itself, for RSS and CPU), or with
 * `BENCH_SERVICE=bundle` the service as ops run it: `node scripts/start.mjs server` (what `npm start` execs),
 * which runs `dist/server.mjs` in that very process. The benchmark runner sets `bundle` and builds first
 * (`ensureBuilt`); tests run the sources.
 * `BENCH_CPU_PROF_DIR=<dir>`: each service writes a V8 CPU profile there when it stops.
 * `BENCH_DIST=<dir>`: the bundle in that directory instead (a copy of another tree's `dist/`, for A/B runs).
 */
export const spawnService = (env: NodeJS.ProcessEnv): Child => {
  const profileDir = env["BENCH_CPU_PROF_DIR"] ?? process.env["BENCH_CPU_PROF_DIR"]
  // samples every 100 µs (V8: 1 ms), so a drain of about a second gives some ten thousand of them
  const profile = profileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-interval=100", `--cpu-prof-dir=${profileDir}`]
  const dist = process.env["BENCH_DIST"]
  const entry =
    dist !== undefined
      ? [join(dist, "server.mjs")]
      : process.env["BENCH_SERVICE"] === "bundle"
        ? ["scripts/start.mjs", "server"]
        : ["--import", "tsx", "src/main.ts"]
  return spawnTracked(process.execPath, [...profile, ...entry], env)
}

/** Builds `dist/` when a source is newer than the bundle (once, before any service is spawned from it). */
export const ensureBuilt = () => {
  if (!bundleIsStale(repoRoot, join(repoRoot, "dist/server.mjs"))) return
  execFileSync("npm", ["run", "build"], { cwd: repoRoot, stdio: "inherit" })
}

// HTTP

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, host, () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

/** Status of one GET, or 0 if the connection failed; node:http, no keep-alive. */
const statusOf = (url: string): Promise<number> =>
  new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: 1_000 }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.once("timeout", () => req.destroy())
    req.once("error", () => resolve(0))
  })

/**
 * Polls `url` every 20 ms until it answers 200; returns ms since `startedAt`.
 * Fails fast if the child exits, and after 60 s.
 */
export const waitForOk = async (url: string, child: Child, startedAt: number): Promise<number> => {
  const deadline = startedAt + 60_000
  while (performance.now() < deadline) {
    if (exited(child.process)) throw new Error(`process exited before ready:\n${child.output().slice(-2000)}`)
    if ((await statusOf(url)) === 200) return performance.now() - startedAt
    await sleep(20)
  }
  throw new Error(`not ready after 60 s: ${url}\n${child.output().slice(-2000)}`)
}

/** Spawns and waits for 200 on `/readyz`; the time includes process start. */
export const startTimed = async (spawnIt: () => Child, port: number) => {
  const startedAt = performance.now()
  const child = spawnIt()
  const ms = await waitForOk(`http://${host}:${port}/readyz`, child, startedAt)
  return { child, ms }
}

/** Resident set size of a process in MB, from /proc (Linux). */
export const rssMb = (pid: number): number => {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  if (match === null) throw new Error(`no VmRSS for pid ${pid}`)
  return Number(match[1]) / 1024
}

const clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim())

/** CPU time (user + system) a process has used so far in ms, from /proc (Linux). */
export const cpuMs = (pid: number): number => {
  // fields after the parenthesised command name; utime and stime are the 12th and 13th
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks
}

/**
 * CPU time (ms) used so far by every PostgreSQL server process on this machine (backends and background workers,
 * by their command name): the database's share of a run, for benchmarks where it shares the cores.
 */
export const postgresCpuMs = (): number => {
  let total = 0
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
      if (name !== "postgres") continue
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks
    } catch {
      // the process ended meanwhile
    }
  }
  return total
}

/** CPU time (ms) this process has used so far (the benchmark's own receiver and bare loops). */
export const ownCpuMs = (): number => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/** The bootstrap secret key the service prints on first start with an empty database. */
export const bootstrapSecret = (child: Child): string => {
  const match = /secret key\s+(sk_test_[A-Za-z0-9]+)/.exec(child.output())
  if (match === null) throw new Error(`no bootstrap secret key in the output:\n${child.output().slice(-2000)}`)
  return match[1]!
}

// Pg (no type declarations shipped)

export interface PgQueryable {
  query<R>(text: string, values?: ReadonlyArray<unknown>): Promise<{ readonly rows: Array<R> }>
  end(): Promise<void>
}
export interface PgModule {
  readonly Client: new (config: { readonly connectionString: string }) => PgQueryable & { connect(): Promise<void> }
  readonly Pool: new (config: { readonly connectionString: string; readonly max?: number }) => PgQueryable
}
export const pg = createRequire(import.meta.url)("pg") as PgModule

const adminUrl = process.env["BENCH_PG_URL"] ?? `postgres://postgres@${host}:5432/postgres`

/** Creates `<prefix>_<random>` on the server of `serverUrl` and registers its drop; returns its connection URL. */
export const throwawayDatabase = async (
  options: { readonly serverUrl?: string; readonly prefix?: string } = {}
): Promise<string> => {
  const serverUrl = options.serverUrl ?? adminUrl
  const name = `${options.prefix ?? "bench"}_${randomBytes(6).toString("hex")}`
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  }
  await admin(`create database ${name}`)
  // `with (force)` ends sessions a killed child may have left behind
  onCleanup(() => admin(`drop database if exists ${name} with (force)`))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

// Autocannon (no type declarations shipped)

export interface AutocannonResult {
  readonly requests: { readonly average: number; readonly total: number }
  readonly latency: { readonly mean: number; readonly p50: number; readonly p99: number }
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
}
type Autocannon = (
  options: {
    readonly url: string
    readonly connections: number
    readonly headers?: Record<string, string>
    /** Seconds a request may take. */
    readonly timeout?: number
  } & ({ readonly duration: number } | { readonly amount: number })
) => PromiseLike<AutocannonResult>
export const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon

// Report

/** One benchmark's part of the summary: a heading and markdown lines. */
export interface Section {
  readonly title: string
  readonly lines: ReadonlyArray<string>
}

export const fmt = (n: number, digits = 0) => n.toFixed(digits)
export const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`

/** Shape of every load run: 20 connections, a 2 s warm-up, then the measured seconds. */
export const connections = 20
export const warmupSeconds = 2
// BENCH_SECONDS shortens runs while working on the scripts
export const seconds = Number(process.env["BENCH_SECONDS"] ?? 10)
/** The service's rate limits, out of the way of a load run. */
export const noRateLimit = { RATE_LIMIT_RPS: "1000000", RATE_LIMIT_BURST: "1000000" }

/** Starts a server on a free port, runs `body` against it, always stops it. */
export const withServer = async <A>(
  spawnIt: (port: number) => Child,
  body: (base: string, child: Child) => Promise<A>
): Promise<A> => {
  const port = await freePort()
  const { child } = await startTimed(() => spawnIt(port), port)
  try {
    return await body(`http://${host}:${port}`, child)
  } finally {
    await stop(child)
  }
}

/** `POST /v1/agents` with a secret key; the new agent's id. */
export const createAgent = async (base: string, token: string, name = "Bench agent"): Promise<string> => {
  const res = await fetch(`${base}/v1/agents`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ type: "support", name }),
    signal: AbortSignal.timeout(30_000)
  })
  if (res.status !== 201) throw new Error(`POST /v1/agents: ${res.status} ${(await res.text()).slice(0, 300)}`)
  return ((await res.json()) as { readonly data: { readonly id: string } }).data.id
}

// The admin CLI

const cliTimeoutMs = 60_000

/** Runs the admin CLI against the service at `base` and parses its `--json` output. */
export const cliJson = async <A>(base: string, adminToken: string, args: ReadonlyArray<string>): Promise<A> => {
  const child = spawnTracked(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args, "--json"], {
    ...process.env,
    SERVICE_URL: base,
    ADMIN_TOKEN: adminToken
  })
  // `close`: after the exit and the end of its output
  const closed = new Promise<number | null>((resolve) => child.process.once("close", (code) => resolve(code)))
  const timer = setTimeout(() => void stop(child), cliTimeoutMs)
  const code = await closed
  clearTimeout(timer)
  if (code !== 0) throw new Error(`cli ${args.slice(0, 2).join(" ")}: exit ${code}\n${child.output().slice(-2000)}`)
  // the output holds stdout and stderr: the JSON, and for a new key the warning to copy it (on stderr)
  const json = child.output().split("\n").filter((line) => !line.startsWith("Copy this key now"))
  return JSON.parse(json.join("\n")) as A
}

/** A `pro` workspace (no monthly caps) and a sandbox secret key of it, through the admin CLI. */
export const proWorkspace = async (base: string, adminToken: string, name: string) => {
  const workspace = await cliJson<{ readonly id: string; readonly plan: string }>(base, adminToken, [
    "workspaces", "create", "--name", name, "--owner-email", "owner@example.com", "--plan", "pro"
  ])
  if (workspace.plan !== "pro") throw new Error(`workspace ${workspace.id} has plan ${workspace.plan}`)
  const key = await cliJson<{ readonly secret: string }>(base, adminToken, [
    "keys", "create", "--workspace", workspace.id, "--kind", "secret", "--environment", "test", "--name", name
  ])
  return { workspaceId: workspace.id, token: key.secret }
}

/** mulberry32: small, seeded, the same sequence on every machine. */
export const seeded = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export type Random = () => number
export const pick = <A>(random: Random, xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)]!
