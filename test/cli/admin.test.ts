/**
 * The admin CLI as a newcomer meets it, run from the sources as a child
 * process (as `npm run cli` runs the bundle): every command's `--help`
 * describes each of its options in words of its own, shows the optional
 * `--scope` as optional, and `keys create --json` names the key's value by
 * its kind. Real time (`excludeTestServices`): the child runs on the wall clock.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Harness, testServer } from "../support/harness.js"

const adminToken = "admin-test-token-cli-0123456789abcdefghijklm"
const root = fileURLToPath(new URL("../..", import.meta.url))

/** The CLI from the sources, without the caller's admin settings. */
const cli = (args: ReadonlyArray<string>) =>
  Effect.async<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resume) => {
    const env = { ...process.env }
    for (const name of ["ADMIN_TOKEN", "SERVICE_URL", "DATA_DIR", "API_KEY"]) delete env[name]
    const child = execFile(
      process.execPath,
      ["--import", "tsx", "src/cli/main.ts", ...args],
      { cwd: root, env, timeout: 180_000 },
      (error, stdout, stderr) =>
        resume(Effect.succeed({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }))
    )
    return Effect.sync(() => void child.kill())
  })

const commands = [
  [],
  ["workspaces"],
  ["workspaces", "create"],
  ["workspaces", "list"],
  ["keys"],
  ["keys", "create"],
  ["keys", "list"],
  ["keys", "revoke"],
  ["ingest"],
  ["crawl"],
  ["evaluate"]
] as const

/** What @effect/cli says of an option's type or presence: not a description. */
const generic = [
  /^One of the following: /,
  /^A true or false value\.$/,
  /^An integer\.$/,
  /^An existing file\.$/,
  /^This setting is optional\./,
  /^This option may be repeated /
]

/** Each option of the command's own OPTIONS section (before the built-ins), with its paragraphs. */
const ownOptions = (help: string) => {
  const section = help.slice(help.indexOf("\nOPTIONS\n"), help.indexOf("\n--completions "))
  return section
    .split(/\n(?=--)/)
    .slice(1)
    .map((block) => {
      const [head, ...rest] = block.split("\n")
      return {
        option: head!.trim(),
        paragraphs: rest.map((l) => l.trim()).filter((l) => l !== "")
      }
    })
}

describe("admin CLI help", () => {
  it.live(
    "describes every option of every command, without the type filler, and shows --scope as optional",
    () =>
      Effect.gen(function* () {
        const runs = yield* Effect.forEach(commands, (command) => cli([...command, "--help"]), { concurrency: 3 })
        const leaves: Array<string> = []
        for (const [i, run] of runs.entries()) {
          const command = commands[i]!.join(" ")
          expect(run.code, `${command}: ${run.stderr}`).toBe(0)
          expect(run.stdout, command).not.toContain("A user-defined piece of text")
          expect(run.stdout, command).not.toContain("\u001b[")
          for (const { option, paragraphs } of ownOptions(run.stdout)) {
            const described = paragraphs.filter((p) => !generic.some((g) => g.test(p)))
            expect(described, `${command} ${option}`).not.toEqual([])
            leaves.push(`${command} ${option}`)
          }
        }
        // the sections were found: every leaf command's own options were checked
        expect(leaves).toEqual(
          expect.arrayContaining([
            "workspaces create --name NAME",
            "workspaces create --plan free | starter | pro | enterprise",
            "workspaces list --url URL",
            "keys create --admin-token TOKEN",
            "keys create --json",
            "keys create --kind secret | widget | forms",
            "keys create --environment test | live",
            "keys create --scope SCOPE...",
            "keys list --workspace WORKSPACE_ID",
            "keys revoke --key KEY_ID",
            "ingest --interval-ms MS",
            "crawl --keep-to-path",
            "evaluate --cases FILE",
            "evaluate --timeout-s SECONDS"
          ])
        )
        const keysCreate = runs[commands.findIndex((c) => c.join(" ") === "keys create")]!.stdout
        const usage = keysCreate.split("\n").find((l) => l.startsWith("$ create "))!
        expect(usage).toContain("[--scope SCOPE...]")
        expect(usage.replace("[--scope SCOPE...]", "")).not.toContain("--scope")
        expect(runs[0]!.stdout).toContain("[--scope SCOPE...]")
      }),
    300_000
  )
})

layer(testServer({ adminToken: Option.some(Redacted.make(adminToken)) }), { excludeTestServices: true })("admin CLI --json", (it) => {
  it.effect(
    "keys create --json names the key's value by its kind; without --scope a key gets every scope of its kind",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const connection = ["--json", "--url", h.url, "--admin-token", adminToken]
        const made = yield* cli(["workspaces", "create", "--name", "Cli", "--owner-email", "ops@cli.test", ...connection])
        expect(made.code, made.stderr).toBe(0)
        const workspace = JSON.parse(made.stdout).id as string
        const expected = { secret: /^sk_live_[A-Za-z0-9]{32}$/, widget: /^widget_pk_live_[A-Za-z0-9]{32}$/, forms: /^pk_live_[A-Za-z0-9]{32}$/ }
        const runs = yield* Effect.forEach(
          ["secret", "widget", "forms"] as const,
          (kind) =>
            Effect.map(
              cli(["keys", "create", "--workspace", workspace, "--kind", kind, "--environment", "live", ...connection]),
              (run) => ({ kind, run })
            ),
          { concurrency: 3 }
        )
        for (const { kind, run } of runs) {
          expect(run.code, run.stderr).toBe(0)
          expect(run.stderr).toContain("cannot be shown again")
          const created = JSON.parse(run.stdout)
          expect(Object.keys(created).sort()).toEqual(["key", kind].sort())
          expect(created[kind]).toMatch(expected[kind])
          expect(created.key).toMatchObject({ workspace_id: workspace, kind, environment: "live" })
          expect(created.key.redacted).toBe(`${created[kind].replace(/[A-Za-z0-9]+$/, "")}…${created[kind].slice(-4)}`)
        }
        expect(runs.find((r) => r.kind === "forms")!.run.stdout).toContain('"scopes": []')
        const secret = JSON.parse(runs.find((r) => r.kind === "secret")!.run.stdout)
        expect(secret.key.scopes).toContain("read:agents")
        expect((yield* h.call("GET", "/v1/agents", { key: secret.secret })).status).toBe(200)
      }),
    300_000
  )
})
