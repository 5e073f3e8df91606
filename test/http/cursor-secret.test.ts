/**
 * Which key signs list cursors. Instances of one deployment on one database accept each other's cursors when they
 * share `SECRET_KEY` (or `CURSOR_SECRET`), whatever their `ADMIN_TOKEN`; a cursor signed under another key is
 * `400 invalid_cursor`. The key is never derived from the admin token.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash } from "node:crypto"
import { AppConfig, type AppConfigShape } from "../../src/Config.js"
import { CursorKeyLive } from "../../src/http/CursorSecret.js"
import { CursorKey } from "../../src/http/Pagination.js"
import { testDatabaseLayer } from "../support/database.js"
import { Harness, testConfig, testServer } from "../support/harness.js"

type DatabaseLayer = typeof testDatabaseLayer

const withDatabase = <A, E, R>(use: (database: DatabaseLayer) => Effect.Effect<A, E, R>) =>
  Effect.scoped(Effect.flatMap(Layer.build(testDatabaseLayer), (context) => use(Layer.succeedContext(context))))

/** One instance of the deployment on `database`, configured with `overrides`, for as long as `use` runs. */
const instance = <A, E>(database: DatabaseLayer, overrides: Partial<AppConfigShape>, use: Effect.Effect<A, E, Harness>) =>
  Effect.scoped(Effect.flatMap(Layer.build(testServer(overrides, { database })), (context) => Effect.provide(use, context)))

const secret = (value: string) => Redacted.make(value)
const adminTokenA = "admin-token-A-0123456789abcdefghijklmnop"
const adminA = Option.some(secret(adminTokenA))
const adminB = Option.some(secret("admin-token-B-0123456789abcdefghijklmnop"))

describe("the cursor key", () => {
  it.live("follows SECRET_KEY and CURSOR_SECRET across instances, never ADMIN_TOKEN", () =>
    withDatabase((database) =>
      Effect.gen(function* () {
        const issued = yield* instance(
          database,
          { adminToken: adminA, secretKey: secret("deployment-secret-key-1") },
          Effect.gen(function* () {
            const h = yield* Harness
            const ws = yield* h.seed()
            for (const name of ["First", "Second", "Third"]) {
              expect((yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name } })).status).toBe(201)
            }
            const page = yield* h.call("GET", "/v1/agents?limit=1", { key: ws.secretTest })
            expect(page.body.data.map((a: any) => a.name)).toEqual(["Third"])
            return { key: ws.secretTest, cursor: page.body.meta.pagination.next_cursor as string }
          })
        )
        const nextPage = (overrides: Partial<AppConfigShape>) =>
          instance(
            database,
            overrides,
            Effect.flatMap(Harness, (h) => h.call("GET", `/v1/agents?limit=1&starting_after=${issued.cursor}`, { key: issued.key }))
          )

        // only the admin token changed: the cursor holds
        const sameKey = yield* nextPage({ adminToken: adminB, secretKey: secret("deployment-secret-key-1") })
        expect(sameKey.status).toBe(200)
        expect(sameKey.body.data.map((a: any) => a.name)).toEqual(["Second"])

        // another SECRET_KEY, the same admin token: refused
        const otherKey = yield* nextPage({ adminToken: adminA, secretKey: secret("deployment-secret-key-2") })
        expect([otherKey.status, otherKey.body.error.code, otherKey.body.error.param]).toEqual([400, "invalid_cursor", "starting_after"])

        // CURSOR_SECRET wins over SECRET_KEY: a cursor under it holds with another SECRET_KEY, not another CURSOR_SECRET
        const underCursorSecret = yield* instance(
          database,
          { cursorSecret: secret("cursor-secret-1"), secretKey: secret("deployment-secret-key-1") },
          Effect.flatMap(Harness, (h) => h.call("GET", "/v1/agents?limit=1", { key: issued.key }))
        )
        const cursor = underCursorSecret.body.meta.pagination.next_cursor as string
        const replay = (overrides: Partial<AppConfigShape>) =>
          instance(
            database,
            overrides,
            Effect.flatMap(Harness, (h) => h.call("GET", `/v1/agents?limit=1&starting_after=${cursor}`, { key: issued.key }))
          )
        const sameCursorSecret = yield* replay({ cursorSecret: secret("cursor-secret-1"), secretKey: secret("deployment-secret-key-2") })
        expect([sameCursorSecret.status, sameCursorSecret.body.data.map((a: any) => a.name)]).toEqual([200, ["Second"]])
        const otherCursorSecret = yield* replay({ cursorSecret: secret("cursor-secret-2"), secretKey: secret("deployment-secret-key-1") })
        expect([otherCursorSecret.status, otherCursorSecret.body.error.code]).toEqual([400, "invalid_cursor"])
      })
    ), 120_000)

  it.effect("with a shared database and neither secret, two processes with one admin token draw different keys", () =>
    Effect.gen(function* () {
      const keyOf = (config: AppConfigShape) =>
        Effect.provide(CursorKey, CursorKeyLive.pipe(Layer.provide(Layer.succeed(AppConfig, config))))
      const shared = testConfig({
        adminToken: adminA,
        databaseUrl: Option.some(secret("postgres://db.example/app")),
        secretKey: undefined,
        cursorSecret: undefined
      })
      const first = Redacted.value(yield* keyOf(shared))
      const second = Redacted.value(yield* keyOf(shared))
      expect(Buffer.from(first).equals(Buffer.from(second))).toBe(false)
      // SECRET_KEY gives every process the same key, whatever the admin token, and not the one once derived from it
      const withSecret = testConfig({ adminToken: adminA, secretKey: secret("deployment-secret-key-1"), cursorSecret: undefined })
      const a = Redacted.value(yield* keyOf(withSecret))
      const b = Redacted.value(yield* keyOf({ ...withSecret, adminToken: adminB }))
      expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true)
      expect(a.length).toBe(32)
      const fromAdminToken = createHash("sha256").update(`assistant-platform cursor key\n${adminTokenA}`).digest()
      expect(Buffer.from(a).equals(fromAdminToken)).toBe(false)
    }))
})
