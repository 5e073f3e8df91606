/**
 * The admin RPC end to end: the real server on a port, driven through the
 * CLI's RPC client and through the CLI itself as a child process. Real time
 * (`excludeTestServices`): the child process and fetch run on the wall clock.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { AdminError } from "../../schema/Admin.js"
import { SecretScopes, WidgetScopes } from "../../schema/Auth.js"
import type { WorkspaceId } from "../../schema/Ids.js"
import { layerLive as idsLive } from "../../layers/IdGenerator.js"
import { resolveAdminToken } from "../../src/admin/AdminToken.js"
import { AdminClient, layer as adminClientLayer } from "../../src/cli/AdminClient.js"
import { Harness, testConfig, testServer } from "../support/harness.js"

const adminToken = "admin-test-token-0123456789abcdefghijklmnopq"

/** Runs `f` with an admin RPC client that presents `token`. */
const asAdmin = <A, E>(f: (admin: AdminClient["Type"]) => Effect.Effect<A, E>, token = adminToken) =>
  Effect.gen(function* () {
    const h = yield* Harness
    return yield* Effect.flatMap(AdminClient, f).pipe(
      Effect.provide(
        adminClientLayer({ url: Option.some(h.url), adminToken: Option.some(Redacted.make(token)) }).pipe(
          Layer.provide(NodeContext.layer)
        )
      )
    )
  })

/** The AdminError code a call failed with. */
const failureCode = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E, Harness>) =>
  Effect.map(Effect.flip(effect), (e) => (e._tag === "AdminError" ? (e as unknown as AdminError).code : e._tag))

const newWorkspace = asAdmin((admin) =>
  admin.CreateWorkspace({ name: "Acme", owner_email: "ops@acme.test", plan: "starter" })
)

const root = fileURLToPath(new URL("../..", import.meta.url))

/** The real CLI, as `npm run cli` runs it, without the caller's admin settings. */
const cli = (args: ReadonlyArray<string>) =>
  Effect.async<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resume) => {
    const env = { ...process.env }
    for (const name of ["ADMIN_TOKEN", "SERVICE_URL", "DATA_DIR"]) delete env[name]
    execFile("node_modules/.bin/tsx", ["src/cli/main.ts", ...args], { cwd: root, env, timeout: 30_000 }, (error, stdout, stderr) =>
      resume(Effect.succeed({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }))
    )
  })

layer(testServer({ adminToken: Option.some(Redacted.make(adminToken)) }), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("admin RPC", (it) => {
  it.effect("creates and lists workspaces", () =>
    Effect.gen(function* () {
      const ws = yield* newWorkspace
      expect(ws).toMatchObject({ name: "Acme", owner_email: "ops@acme.test", plan: "starter" })
      expect(ws.id).toMatch(/^ws_/)
      const all = yield* asAdmin((admin) => admin.ListWorkspaces())
      expect(all.map((w) => w.id)).toContain(ws.id)
    }))

  it.effect("creates keys of every kind with their prefixes; lists show only redacted values", () =>
    Effect.gen(function* () {
      const ws = yield* newWorkspace
      const create = (kind: "secret" | "widget" | "forms", environment: "test" | "live") =>
        asAdmin((admin) => admin.CreateKey({ workspace_id: ws.id, kind, environment, name: `${kind} ${environment}` }))
      const created = [
        yield* create("secret", "test"),
        yield* create("secret", "live"),
        yield* create("widget", "test"),
        yield* create("forms", "test"),
        yield* create("forms", "live")
      ]
      expect(created.map((c) => c.secret.replace(/[A-Za-z0-9]+$/, ""))).toEqual([
        "sk_test_",
        "sk_live_",
        "widget_pk_test_",
        "pk_test_",
        "pk_live_"
      ])
      expect(created[0]!.key.scopes).toEqual(SecretScopes)
      expect(created[2]!.key.scopes).toEqual(WidgetScopes)
      expect(created[3]!.key.scopes).toEqual([])

      const listed = yield* asAdmin((admin) => admin.ListKeys({ workspace_id: ws.id }))
      expect(listed.map((k) => k.id)).toEqual(created.map((c) => c.key.id))
      const text = JSON.stringify(listed)
      for (const c of created) {
        expect(text).not.toContain(c.secret)
        const key = listed.find((k) => k.id === c.key.id)!
        expect(key.redacted).toBe(`${c.secret.replace(/[A-Za-z0-9]+$/, "")}…${c.secret.slice(-4)}`)
      }
    }))

  it.effect("narrows scopes; refuses scopes the kind cannot hold and unknown workspaces", () =>
    Effect.gen(function* () {
      const ws = yield* newWorkspace
      const narrowed = yield* asAdmin((admin) =>
        admin.CreateKey({ workspace_id: ws.id, kind: "secret", environment: "test", scopes: ["read:agents"] })
      )
      expect(narrowed.key.scopes).toEqual(["read:agents"])
      const attempt = (kind: "secret" | "widget" | "forms", scopes: Array<"read:agents" | "widget:chat">) =>
        failureCode(asAdmin((admin) => admin.CreateKey({ workspace_id: ws.id, kind, environment: "test", scopes })))
      expect(yield* attempt("widget", ["read:agents"])).toBe("invalid")
      expect(yield* attempt("secret", ["widget:chat"])).toBe("invalid")
      expect(yield* attempt("forms", ["widget:chat"])).toBe("invalid")
      expect(yield* attempt("secret", [])).toBe("invalid")

      const missing = "ws_doesnotexist000000000" as WorkspaceId
      expect(
        yield* failureCode(asAdmin((admin) => admin.CreateKey({ workspace_id: missing, kind: "secret", environment: "test" })))
      ).toBe("not_found")
      expect(yield* failureCode(asAdmin((admin) => admin.ListKeys({ workspace_id: missing })))).toBe("not_found")
    }))

  it.effect("a revoked key gets 401 invalid_api_key; revoking an unknown key is not_found", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* newWorkspace
      const created = yield* asAdmin((admin) => admin.CreateKey({ workspace_id: ws.id, kind: "secret", environment: "test" }))
      expect((yield* h.call("GET", "/v1/agents", { key: created.secret })).status).toBe(200)

      const revoked = yield* asAdmin((admin) => admin.RevokeKey({ key_id: created.key.id }))
      expect(revoked.revoked_at).not.toBeNull()
      const reply = yield* h.call("GET", "/v1/agents", { key: created.secret })
      expect(reply.status).toBe(401)
      expect(reply.body.error.code).toBe("invalid_api_key")

      const listed = yield* asAdmin((admin) => admin.ListKeys({ workspace_id: ws.id }))
      expect(listed[0]!.revoked_at).toBe(revoked.revoked_at)
      expect(
        yield* failureCode(asAdmin((admin) => admin.RevokeKey({ key_id: "key_doesnotexist00000000" as never })))
      ).toBe("not_found")
    }))

  it.effect("a new sk_live_ key can create an agent", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* newWorkspace
      const created = yield* asAdmin((admin) => admin.CreateKey({ workspace_id: ws.id, kind: "secret", environment: "live" }))
      const response = yield* Effect.promise(() =>
        fetch(`${h.url}/v1/agents`, {
          method: "POST",
          headers: { authorization: `Bearer ${created.secret}`, "content-type": "application/json" },
          body: JSON.stringify({ type: "support", name: "Live Bot" })
        })
      )
      expect(response.status).toBe(201)
      const body = yield* Effect.promise(() => response.json())
      expect(body.data).toMatchObject({ object: "agent", name: "Live Bot" })
    }))

  it.effect("a wrong or missing admin token is unauthorized", () =>
    Effect.gen(function* () {
      expect(yield* failureCode(asAdmin((admin) => admin.ListWorkspaces(), "wrong-token"))).toBe("unauthorized")
      expect(yield* failureCode(asAdmin((admin) => admin.ListWorkspaces(), `${adminToken}x`))).toBe("unauthorized")
      const h = yield* Harness
      // No Authorization header at all: the RPC still answers 200 with the failure inside.
      const reply = yield* h.call("POST", "/admin/rpc", {
        body: { _tag: "Request", id: "1", tag: "ListWorkspaces", payload: {}, headers: [] }
      })
      expect(reply.status).toBe(200)
      expect(JSON.stringify(reply.body)).toContain("unauthorized")
    }))

  it.effect("a body that is not one RPC request is 400 parameter_invalid in the envelope, naming the field; a bad payload is the RPC's typed failure", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const headers = { authorization: `Bearer ${adminToken}` }
      const frame = { _tag: "Request", id: "1", tag: "ListWorkspaces", payload: {}, headers: [] }
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{}, "_tag"],
        [[], "body"],
        ["{not json", "body"],
        [{ ...frame, tag: "DropTables" }, "tag"],
        [{ ...frame, id: 1 }, "id"],
        [{ ...frame, headers: undefined }, "headers"]
      ]
      for (const [body, param] of cases) {
        const reply = yield* h.call("POST", "/admin/rpc", { body, headers })
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(reply.body.error, JSON.stringify(body)).toMatchObject({
          type: "invalid_request",
          code: "parameter_invalid",
          param,
          doc_url: expect.stringContaining("#parameter_invalid")
        })
        expect(reply.body.error.message).toContain("ListWorkspaces")
        expect(reply.body.meta.request_id).toMatch(/^req_/)
      }
      // a request of the protocol with a payload its procedure's schema refuses: the RPC's answer, not a defect
      const bad = yield* h.call("POST", "/admin/rpc", { body: { ...frame, tag: "CreateWorkspace", payload: { name: 1 } }, headers })
      expect(bad.status).toBe(200)
      expect(JSON.stringify(bad.body)).not.toContain("Defect")
      // and a good one still works
      const listed = yield* h.call("POST", "/admin/rpc", { body: frame, headers })
      expect(listed.status).toBe(200)
      expect(listed.body).toMatchObject([{ _tag: "Exit", exit: { _tag: "Success" } }])
    }))

  describe("the CLI as a child process", () => {
    it.effect("keys create --json prints the created key", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* newWorkspace
        const run = yield* cli([
          "keys", "create", "--workspace", ws.id, "--kind", "secret", "--environment", "live",
          "--name", "deploy", "--scope", "read:agents", "--json", "--url", h.url, "--admin-token", adminToken
        ])
        expect(run.code, run.stderr).toBe(0)
        const created = JSON.parse(run.stdout)
        expect(created.secret).toMatch(/^sk_live_[A-Za-z0-9]{32}$/)
        expect(created.key).toMatchObject({ workspace_id: ws.id, kind: "secret", name: "deploy", scopes: ["read:agents"] })
        expect(run.stderr).toContain("cannot be shown again")
        expect((yield* h.call("GET", "/v1/agents", { key: created.secret })).status).toBe(200)
      }), 60_000)

    it.effect("embeddings status shows the stored vectors' space, in words and as JSON", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const run = yield* cli(["embeddings", "status", "--url", h.url, "--admin-token", adminToken])
        expect(run.code, run.stderr).toBe(0)
        expect(run.stdout).toContain("embeddings up to date (no re-embedding was needed)")
        expect(run.stdout).toMatch(/space: +local:hash-v1:384\n/)
        const json = yield* cli(["embeddings", "status", "--json", "--url", h.url, "--admin-token", adminToken])
        expect(JSON.parse(json.stdout)).toMatchObject({
          space: "local:hash-v1:384",
          configured_space: "local:hash-v1:384",
          status: "none",
          done: 0,
          total: 0,
          last_error: null
        })
      }), 60_000)

    it.effect("exits 1 with a one-line error for a wrong token", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const run = yield* cli(["workspaces", "list", "--url", h.url, "--admin-token", "wrong-token"])
        expect(run.code).toBe(1)
        expect(run.stdout).toBe("")
        expect(run.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^error: unauthorized: /)])
      }), 60_000)

    it.effect("piped output has no colour codes; a malformed workspace id says the expected format", () =>
      Effect.gen(function* () {
        const help = yield* cli(["keys", "--help"])
        expect(help.stdout + help.stderr).not.toContain("\u001b[")
        expect(help.stdout).toContain("--workspace")
        const bad = yield* cli(["keys", "list", "--workspace", "ws_nope", "--admin-token", adminToken])
        expect(bad.code).not.toBe(0)
        expect(bad.stdout + bad.stderr).not.toContain("\u001b[")
        expect(bad.stdout + bad.stderr).toContain("`ws_` followed by 8 to 64 letters and digits")
      }), 60_000)
  })
})

describe("admin token resolution", () => {
  const resolve = (overrides: Parameters<typeof testConfig>[0]) =>
    resolveAdminToken(testConfig({ adminToken: Option.none(), ...overrides })).pipe(Effect.provide(Layer.merge(NodeContext.layer, idsLive)))

  const tempDir = Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "admin-token-"))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

  it.scopedLive("embedded mode creates <dataDir>/admin-token (0600) once, then reads it", () =>
    Effect.gen(function* () {
      const dataDir = join(yield* tempDir, "nested")
      const first = yield* resolve({ dataDir })
      const token = Redacted.value(Option.getOrThrow(first))
      expect(token).toMatch(/^[A-Za-z0-9]{43}$/)
      const file = join(dataDir, "admin-token")
      expect((yield* Effect.promise(() => stat(file))).mode & 0o777).toBe(0o600)
      expect((yield* Effect.promise(() => readFile(file, "utf8"))).trim()).toBe(token)
      const second = yield* resolve({ dataDir })
      expect(Redacted.value(Option.getOrThrow(second))).toBe(token)
    }))

  it.scopedLive("ADMIN_TOKEN wins; with a database URL and no token there is none", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir
      yield* Effect.promise(() => writeFile(join(dataDir, "admin-token"), "from-file\n"))
      const set = yield* resolve({ dataDir, adminToken: Option.some(Redacted.make("from-env")) })
      expect(Option.map(set, Redacted.value)).toEqual(Option.some("from-env"))
      expect(Option.map(yield* resolve({ dataDir }), Redacted.value)).toEqual(Option.some("from-file"))
      const shared = yield* resolve({ dataDir, databaseUrl: Option.some(Redacted.make("postgres://x")) })
      expect(Option.isNone(shared)).toBe(true)
    }))
})
