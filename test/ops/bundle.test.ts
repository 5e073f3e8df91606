/**
 * The build as an operator uses it: `dist/` copied to a folder outside the
 * project runs with nothing but Node. First start on an empty data dir (from
 * the database template), a key made with the bundled admin CLI, an API call,
 * SIGTERM stops the process, and a restart on the same data dir serves the same
 * data. With DATABASE_URL set, the same on a throwaway PostgreSQL database.
 * Builds once, and only when a source is newer than `dist/server.mjs`.
 */
import { execFile, execFileSync } from "node:child_process"
import { cp, mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Child,
  cleanupAll,
  freePort,
  host,
  repoRoot,
  serviceEnv,
  spawnTracked,
  stop,
  throwawayDatabase,
  waitForOk
} from "../../scripts/bench/lib.js"
import { bundleIsStale } from "../../scripts/freshness.mjs"
import { elementPath } from "../../src/forms/ElementBundle.js"
import { chatElementPath } from "../../src/widget/ElementBundle.js"

const databaseUrl = process.env["DATABASE_URL"]
let dir = ""

beforeAll(async () => {
  if (bundleIsStale(repoRoot, join(repoRoot, "dist/server.mjs"))) {
    execFileSync(process.execPath, ["--import", "tsx", "scripts/build.ts"], { cwd: repoRoot, stdio: "ignore", timeout: 240_000 })
  }
  dir = await mkdtemp(join(tmpdir(), "bundle-test-"))
  await cp(join(repoRoot, "dist"), join(dir, "app"), { recursive: true })
}, 300_000)

afterAll(async () => {
  await cleanupAll()
  await rm(dir, { recursive: true, force: true })
})

const adminToken = "bundle-test-admin-token-0123456789abcdef"

const environment = async (port: number): Promise<NodeJS.ProcessEnv> => {
  const env: Record<string, string> = { PORT: String(port), DATA_DIR: join(dir, "data"), ADMIN_TOKEN: adminToken }
  if (databaseUrl !== undefined) env["DATABASE_URL"] = await throwawayDatabase({ serverUrl: databaseUrl, prefix: "bundle" })
  return serviceEnv(env)
}

const start = async (env: NodeJS.ProcessEnv): Promise<Child> => {
  const child = spawnTracked(process.execPath, ["server.mjs"], env, join(dir, "app"))
  await waitForOk(`http://${host}:${env["PORT"]}/readyz`, child, performance.now())
  return child
}

/** The bundled admin CLI, run from the copy like an operator would. */
const cli = (env: NodeJS.ProcessEnv, args: ReadonlyArray<string>) =>
  new Promise<any>((resolve, reject) =>
    execFile(process.execPath, ["cli.mjs", ...args, "--json"], { cwd: join(dir, "app"), env, timeout: 30_000 }, (error, stdout, stderr) =>
      error === null ? resolve(JSON.parse(stdout)) : reject(new Error(`cli ${args.join(" ")}: ${stderr}`))
    )
  )

const api = async (port: number, key: string, path: string, body?: unknown) => {
  const response = await fetch(`http://${host}:${port}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: (await response.json()) as any }
}

/** SIGTERM, and the process has exited within 10 s (not killed by the helper's SIGKILL fallback). */
const stopsOnSigterm = async (child: Child) => {
  const exit = new Promise<string | null>((resolve) => child.process.once("exit", (_code, signal) => resolve(signal)))
  child.process.kill("SIGTERM")
  const outcome = await Promise.race([exit, new Promise<string>((resolve) => setTimeout(() => resolve("timeout"), 10_000))])
  expect(outcome).not.toBe("timeout")
  await stop(child)
}

describe(`dist/ copied outside the project (${databaseUrl === undefined ? "PGlite" : "PostgreSQL"})`, () => {
  it("starts, serves a key made with the CLI, stops on SIGTERM, and restarts on the same data", async () => {
    const port = await freePort()
    const env = await environment(port)

    const first = await start(env)
    // PGlite: the first start unpacked the migrated template instead of migrating an empty database
    if (databaseUrl === undefined) expect(first.output()).not.toMatch(/applied migrations/)
    const workspace = await cli(env, ["workspaces", "create", "--name", "Bundle", "--owner-email", "ops@bundle.test"])
    expect(workspace.id).toMatch(/^ws_/)
    const created = await cli(env, ["keys", "create", "--workspace", workspace.id, "--kind", "secret", "--environment", "test"])
    const key: string = created.secret
    expect(key).toMatch(/^sk_test_/)

    const agent = await api(port, key, "/v1/agents", { type: "support", name: "Help desk" })
    expect(agent.status).toBe(201)
    expect(agent.body.data).toMatchObject({ object: "agent", name: "Help desk" })
    // the form component is served from the file built beside the server (no esbuild in dist/)
    const element = await fetch(`http://${host}:${port}${elementPath}`)
    expect(element.status).toBe(200)
    expect(element.headers.get("content-type")).toMatch(/^text\/javascript/)
    expect(await element.text()).toContain("service-form")
    // and the chat component beside it, built within its budget
    const chat = await fetch(`http://${host}:${port}${chatElementPath}`)
    expect(chat.status).toBe(200)
    expect(chat.headers.get("content-type")).toMatch(/^text\/javascript/)
    expect(await chat.text()).toContain('customElements.define("service-chat"')
    await stopsOnSigterm(first)

    const again = await start(env)
    const read = await api(port, key, `/v1/agents/${agent.body.data.id}`)
    expect(read.status).toBe(200)
    expect(read.body.data.name).toBe("Help desk")
    await stopsOnSigterm(again)
  }, 120_000)
})
