/**
 * Configuration as an operator meets it: the service started as a process
 * with one wrong variable stops before listening, with exit code 1 and one
 * line on stderr naming the variable (no stack trace); every refusal's line
 * (the same function, in-process); and the configuration table
 * (`docs/reference/configuration.md`) lists exactly the variables `src/Config.ts` reads.
 */
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot } from "../../scripts/bench/lib.js"
import { describeConfigError, fromEnv } from "../../src/Config.js"

let dataDir = ""
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "config-test-"))
})
afterAll(() => rm(dataDir, { recursive: true, force: true }))

/** `src/main.ts` with `extra` on top of a clean environment; its exit code and output. */
const startWith = (extra: Record<string, string>) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: "1", ...extra }
    delete env["DATABASE_URL"]
    delete env["REDIS_URL"]
    for (const [name, value] of Object.entries(extra)) env[name] = value
    const child = execFile(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: repoRoot, env, timeout: 120_000 }, (_e, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr })
    )
  })

const refusals: ReadonlyArray<readonly [variable: string, value: string, says: RegExp]> = [
  ["PORT", "http", /PORT/],
  ["PORT", "70000", /PORT/],
  ["DATABASE_URL", "mysql://user:hunter2@db.example/app", /DATABASE_URL must be a URL starting with postgres:\/\/ or postgresql:\/\//],
  ["RATE_LIMIT_RPS", "0", /RATE_LIMIT_RPS must be a positive integer/],
  ["RATE_LIMIT_BURST", "lots", /RATE_LIMIT_BURST/],
  ["REDIS_URL", "http://127.0.0.1:6379", /REDIS_URL must be a URL starting with redis:\/\/ or rediss:\/\//],
  ["PUBLIC_URL", "example.com", /PUBLIC_URL must be a URL starting with http:\/\/ or https:\/\//],
  ["ALLOW_PRIVATE_URLS", "perhaps", /ALLOW_PRIVATE_URLS/],
  ["AI_PROVIDER", "skynet", /AI_PROVIDER/],
  ["ADMIN_TOKEN", " ", /ADMIN_TOKEN must not be empty/],
  ["ADMIN_TOKEN", "hunter2hunter2", /ADMIN_TOKEN must be at least 32 characters long/],
  // the default response deadline is 10 s: a lease shorter would let a second instance send a delivery still in flight
  ["WEBHOOK_LEASE_MS", "5000", /WEBHOOK_LEASE_MS must be above WEBHOOK_TIMEOUT_MS/]
]

/** The line `src/main.ts` prints for these variables, computed in-process (same function, no process start). */
const refusalLine = (variables: Record<string, string>) =>
  Effect.runPromise(
    fromEnv.pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(variables)))),
      Effect.match({ onFailure: describeConfigError, onSuccess: () => "accepted" })
    )
  )

describe("a wrong variable is refused at start", () => {
  // A whole process start costs seconds on 2 cores (tsx compiles the server):
  // three cases as real processes, started together; every case in-process.
  it("the process exits 1 with one line naming the variable, no stack, no secret", async () => {
    const cases = refusals.filter(([variable]) => ["PORT", "DATABASE_URL", "RATE_LIMIT_RPS"].includes(variable))
    const runs = await Promise.all(cases.map(([variable, value]) => startWith({ [variable]: value })))
    runs.forEach(({ code, stdout, stderr }, i) => {
      const [, , says] = cases[i]!
      expect(code).toBe(1)
      expect(stdout).toBe("")
      const lines = stderr.split("\n").filter((line) => line.trim() !== "")
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^invalid configuration: /)
      expect(lines[0]).toMatch(says)
      expect(stderr).not.toMatch(/\n\s+at /) // no stack trace
      expect(stderr).not.toContain("hunter2") // nor a secret from the value
    })
  }, 150_000)

  for (const [variable, value, says] of refusals) {
    it(`${variable}=${JSON.stringify(value)}`, async () => {
      const line = await refusalLine({ [variable]: value })
      expect(line).toMatch(/^invalid configuration: /)
      expect(line).toMatch(says)
      expect(line).not.toContain("\n")
      expect(line).not.toContain("hunter2")
    })
  }

  it("the defaults alone are accepted", async () => {
    expect(await refusalLine({})).toBe("accepted")
  })
})

describe("the configuration table", () => {
  it("lists exactly the variables src/Config.ts reads", async () => {
    const table = await readFile(join(repoRoot, "docs/reference/configuration.md"), "utf8")
    const documented = new Set([...table.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]))
    const source = await readFile(join(repoRoot, "src/Config.ts"), "utf8")
    // every variable is read by name as a string literal in a Config constructor or helper call
    const read = new Set([...source.matchAll(/\(\s*"([A-Z][A-Z0-9_]*)"/g)].map((m) => m[1]))
    expect(read.size).toBeGreaterThan(20)
    expect([...documented].sort()).toEqual([...read].sort())
  })
})
