/**
 * Profiles the service's `GET /v1/agents/{id}` on PostgreSQL: runs it under
 * `node --cpu-prof`, loads it as the reads benchmark does, and writes the
 * `.cpuprofile` plus a top-N self-time table (by function and by package) to
 * `scripts/bench/results/`. `npx tsx scripts/bench/profile-get.ts [label]`.
 */
import { readdir, readFile, rename, writeFile } from "node:fs/promises"
import { join } from "node:path"
import {
  autocannon,
  bootstrapSecret,
  cleanupAll,
  connections,
  cpuMs,
  createAgent,
  ensureBuilt,
  fmt,
  noRateLimit,
  repoRoot,
  seconds,
  serviceEnv,
  spawnService,
  tempDir,
  throwawayDatabase,
  warmupSeconds,
  withServer
} from "./lib.js"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** Where a frame's code lives: a package under node_modules, our source, or node itself. */
const ownerOf = (url: string) => {
  if (url === "") return "(native / gc / idle)"
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg) return pkg[1]!
  if (url.startsWith("node:")) return "node:" + url.slice(5).split("/")[0]
  if (url.includes(repoRoot) || url.startsWith("file://")) return "(service source)"
  return url
}

const summarize = (profile: Profile, top: number) => {
  const byNode = new Map<number, number>()
  profile.samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
  const byFunction = new Map<string, number>()
  const byOwner = new Map<string, number>()
  let total = 0
  for (const [id, micros] of byNode) {
    const frame = nodes.get(id)!.callFrame
    const short = frame.url.replace(/^.*node_modules\//, "").replace(repoRoot, "").replace(/^file:\/\//, "")
    const name = `${frame.functionName || "(anonymous)"} ${short}:${frame.lineNumber + 1}`
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros)
    const owner = ownerOf(frame.url)
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + micros)
    total += micros
  }
  const table = (title: string, m: Map<string, number>) => [
    `| ${title} | self ms | share |`,
    "|---|---:|---:|",
    ...[...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, v]) => `| \`${k.replace(/\|/g, "\\|")}\` | ${fmt(v / 1000)} | ${fmt((100 * v) / total, 1)}% |`)
  ]
  // inclusive: each sample counts once for every distinct function on its stack
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const inclusive = new Map<string, number>()
  for (const [id, micros] of byNode) {
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = nodes.get(at)!.callFrame
      if (frame.url === "") continue
      const short = frame.url.replace(/^.*node_modules\//, "").replace(repoRoot, "").replace(/^file:\/\//, "")
      seen.add(`${frame.functionName || "(anonymous)"} ${short}:${frame.lineNumber + 1}`)
    }
    for (const name of seen) inclusive.set(name, (inclusive.get(name) ?? 0) + micros)
  }
  return [
    ...table("package", byOwner),
    "",
    ...table("function", byFunction),
    "",
    "Inclusive (the function and what it called, as far as the stack shows: Effect's fiber runtime cuts stacks at each step):",
    "",
    ...table("function, inclusive", inclusive)
  ]
}

const main = async () => {
  process.env["BENCH_SERVICE"] ??= "bundle"
  if (process.env["BENCH_SERVICE"] === "bundle") ensureBuilt()
  const label = process.argv[2] ?? "get-agent"
  const databaseUrl = await throwawayDatabase()
  const profileDir = await tempDir("cpu-prof")
  const load = await withServer(
    (port) =>
      spawnService(serviceEnv({ PORT: String(port), DATABASE_URL: databaseUrl, ...noRateLimit, BENCH_CPU_PROF_DIR: profileDir })),
    async (base, child) => {
      const token = bootstrapSecret(child)
      const agentId = await createAgent(base, token)
      const url = `${base}/v1/agents/${agentId}`
      const headers = { authorization: `Bearer ${token}` }
      await autocannon({ url, connections, duration: warmupSeconds, headers })
      const cpuBefore = cpuMs(child.pid)
      const result = await autocannon({ url, connections, duration: seconds, headers })
      const cpuUs = ((cpuMs(child.pid) - cpuBefore) * 1000) / result.requests.total
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`)
      return { rps: result.requests.average, cpuUs }
    }
  )
  const file = (await readdir(profileDir)).find((f) => f.endsWith(".cpuprofile"))
  if (file === undefined) throw new Error("no .cpuprofile written (did the service exit on SIGTERM?)")
  const results = join(repoRoot, "scripts/bench/results")
  const kept = join(results, `${label}.cpuprofile`)
  await rename(join(profileDir, file), kept)
  const profile = JSON.parse(await readFile(kept, "utf8")) as Profile
  const { loadavg } = await import("node:os")
  const summary = [
    `# CPU profile: GET /v1/agents/{id} on PostgreSQL (${label})`,
    "",
    `${new Date().toISOString()} · Node ${process.version} · load avg ${loadavg()[0]!.toFixed(2)} · ${connections} connections, ` +
      `${seconds} s after ${warmupSeconds} s warm-up · ${fmt(load.rps)} req/s, ${fmt(load.cpuUs)} µs CPU/req ` +
      "(under the profiler: slower than a plain run) · whole process life, start-up included",
    "",
    `Profile: \`${label}.cpuprofile\` (open in Chrome DevTools or speedscope for the flame graph). Self time:`,
    "",
    ...summarize(profile, 30),
    ""
  ]
  await writeFile(join(results, `${label}-profile.md`), summary.join("\n"))
  console.log(summary.join("\n"))
}

main()
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => cleanupAll())
