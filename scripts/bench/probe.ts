/**
 * A second client asking `GET /healthz` every 50 ms, as a person watching the service would: in a process of its
 * own, so the load of the process that drives a scenario (its peers, its polling) is not measured as the
 * service's. One request at a time, so a frozen service shows as one answer as slow as the freeze. The child
 * stops by itself after `maxSeconds` (a scenario that forgets it leaves nothing running).
 */
import { spawn } from "node:child_process"

export interface ProbeReport {
  readonly answers: number
  /** Answers that were not 200, or requests that failed (a refused connection, the 30 s timeout). */
  readonly failures: number
  readonly slowestMs: number
  readonly p99Ms: number
}

export interface Probe {
  /** Stops the probe; its answers since it started. */
  readonly stop: () => Promise<ProbeReport>
}

const intervalMs = 50

// the child: a keep-alive agent with one socket, each request timed from its start to its answer's end
const script = `
const http = require("node:http")
const [url, interval, maxSeconds] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])]
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const end = Date.now() + maxSeconds * 1000
const once = () => new Promise((resolve) => {
  const started = performance.now()
  const req = http.get(url, { agent, timeout: 30000 }, (res) => {
    res.resume()
    res.once("end", () => resolve([performance.now() - started, res.statusCode === 200]))
  })
  req.once("timeout", () => req.destroy(new Error("timeout")))
  req.once("error", () => resolve([performance.now() - started, false]))
})
const loop = async () => {
  while (Date.now() < end) {
    const started = performance.now()
    const [ms, ok] = await once()
    process.stdout.write(ms.toFixed(1) + " " + (ok ? 1 : 0) + "\\n")
    await new Promise((r) => setTimeout(r, Math.max(0, interval - (performance.now() - started))))
  }
}
process.once("SIGTERM", () => process.exit(0))
loop().then(() => process.exit(0))
`

/** Starts probing `${base}/healthz`; at most `maxSeconds` (default 15 min). */
export const startProbe = (base: string, maxSeconds = 900): Probe => {
  const child = spawn(process.execPath, ["-e", script, `${base}/healthz`, String(intervalMs), String(maxSeconds)], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  const lines: Array<string> = []
  let rest = ""
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (chunk: string) => {
    const parts = (rest + chunk).split("\n")
    rest = parts.pop() ?? ""
    lines.push(...parts)
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  return {
    stop: async () => {
      child.kill("SIGTERM")
      await exited
      const answers = lines.filter((l) => l !== "").map((l) => l.split(" "))
      const times = answers.map(([ms]) => Number(ms)).sort((a, b) => a - b)
      return {
        answers: answers.length,
        failures: answers.filter(([, ok]) => ok !== "1").length,
        slowestMs: times.at(-1) ?? 0,
        p99Ms: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))] ?? 0
      }
    }
  }
}
