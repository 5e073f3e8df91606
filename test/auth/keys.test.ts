/**
 * The keys API: `GET/POST /v1/keys`, `DELETE /v1/keys/{id}`. A secret key manages its own workspace's keys in
 * its own environment; the value is shown once; no key grants more than it holds; none revokes itself; a revoked
 * key's next request is refused.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { Harness, type HarnessShape, type SeededWorkspace, testServer } from "../support/harness.js"
import { runSecurityMatrix } from "../support/security.js"

const createKey = (h: HarnessShape, key: string, body: unknown, headers?: Record<string, string>) =>
  h.call("POST", "/v1/keys", { key, body, ...(headers === undefined ? {} : { headers }) })

/** A key of `ws` with exactly these scopes (sandbox unless `live`). */
const keyWith = (ws: SeededWorkspace, scopes: ReadonlyArray<any>, environment: "test" | "live" = "test") =>
  ws.key({ kind: "secret", environment, scopes })

layer(testServer())("keys API", (it) => {
  describe("security matrix", () => {
    it.effect("GET /v1/keys", () =>
      Effect.flatMap(Harness, (h) =>
        runSecurityMatrix(h, { name: "list", method: "GET", path: () => Effect.succeed("/v1/keys"), scope: "read:keys" })
      )
    )
    it.effect("POST /v1/keys", () =>
      Effect.flatMap(Harness, (h) =>
        runSecurityMatrix(h, {
          name: "create",
          method: "POST",
          path: () => Effect.succeed("/v1/keys"),
          body: { kind: "secret" },
          scope: "write:keys"
        })
      )
    )
    it.effect("DELETE /v1/keys/{id}", () =>
      Effect.flatMap(Harness, (h) =>
        runSecurityMatrix(h, {
          name: "revoke",
          method: "DELETE",
          path: (ws) => Effect.map(ws.key({ kind: "widget" }), (k) => `/v1/keys/${k.id}`),
          liveObjectPath: (ws) => Effect.map(ws.key({ kind: "widget", environment: "live" }), (k) => `/v1/keys/${k.id}`),
          scope: "write:keys"
        })
      )
    )
  })

  it.effect("the sandbox secret key made at first start holds read:keys and write:keys", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ scopes: string }>`
        select k.scopes from api_keys k join workspaces w on w.id = k.workspace_id
        where w.name = 'default' and k.kind = 'secret' and k.environment = 'test'`.pipe(Effect.orDie)
      expect(rows).toHaveLength(1)
      expect(rows[0]!.scopes.split(" ")).toEqual(expect.arrayContaining(["read:keys", "write:keys"]))
    })
  )

  it.effect("creates a key whose full value is shown once; the list shows its prefix and last four only", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const sql = yield* SqlClient.SqlClient
      const ws = yield* h.seed()
      const created = yield* createKey(h, ws.secretTest, { kind: "secret", name: "  CI deploys  ", scopes: ["read:agents"] })
      expect(created.status).toBe(201)
      const key = created.body.data
      expect(key).toMatchObject({
        object: "api_key",
        kind: "secret",
        livemode: false,
        name: "CI deploys",
        scopes: ["read:agents"],
        prefix: "sk_test_"
      })
      expect(key.id).toMatch(/^key_/)
      expect(key.secret).toMatch(/^sk_test_[A-Za-z0-9]{32}$/)
      expect(key.last4).toBe(key.secret.slice(-4))
      expect(key.redacted).toBe(`sk_test_…${key.last4}`)
      expect(Date.parse(key.created_at)).not.toBeNaN()

      // it works, within its scopes
      expect((yield* h.call("GET", "/v1/agents", { key: key.secret })).status).toBe(200)
      const write = yield* h.call("POST", "/v1/agents", { key: key.secret, body: { type: "support", name: "x" } })
      expect(write.status).toBe(403)
      expect(write.body.error.code).toBe("key_scope_mismatch")

      // listed without its value, newest first
      const listed = yield* h.call("GET", "/v1/keys", { key: ws.secretTest })
      expect(listed.status).toBe(200)
      expect(listed.text).not.toContain(key.secret)
      const { secret, ...shown } = key
      expect(secret).toBeDefined()
      expect(listed.body.data[0]).toEqual(shown)
      expect(listed.body.data.every((k: any) => !("secret" in k))).toBe(true)
      // the seeded sandbox keys: secret, widget and forms (the live one is in the other environment)
      expect(listed.body.data.map((k: any) => k.kind)).toEqual(["secret", "forms", "widget", "secret"])
      expect(listed.body.meta.pagination).toEqual({ has_more: false, next_cursor: null })

      // the database keeps its hash, never its value
      const rows = yield* sql<{ key_hash: string }>`select * from api_keys where id = ${key.id}`.pipe(Effect.orDie)
      expect(JSON.stringify(rows)).not.toContain(key.secret)
    })
  )

  it.effect("creates widget and forms keys; omitted scopes are every one the kind holds that the caller may grant", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const widget = yield* createKey(h, ws.secretTest, { kind: "widget" })
      expect(widget.status).toBe(201)
      expect(widget.body.data).toMatchObject({ kind: "widget", scopes: ["widget:tickets", "widget:chat"], prefix: "widget_pk_test_" })
      expect(widget.body.data.secret).toMatch(/^widget_pk_test_/)
      const forms = yield* createKey(h, ws.secretTest, { kind: "forms", name: "site" })
      expect(forms.status).toBe(201)
      expect(forms.body.data).toMatchObject({ kind: "forms", scopes: [], prefix: "pk_test_", name: "site" })

      // a full secret key copies itself: every secret scope, the keys scopes included
      const full = yield* createKey(h, ws.secretTest, { kind: "secret" })
      expect(full.body.data.scopes).toEqual(expect.arrayContaining(["read:keys", "write:keys", "read:usage", "write:forms"]))
      // a narrowed one: its own secret scopes
      const narrow = yield* keyWith(ws, ["write:keys", "read:leads"])
      const copy = yield* createKey(h, narrow.secret, { kind: "secret" })
      expect(copy.status).toBe(201)
      expect(copy.body.data.scopes).toEqual(["read:leads", "write:keys"])
      // a widget key from a key that may only back the chat
      const chatOnly = yield* keyWith(ws, ["write:keys", "write:conversations"])
      const chat = yield* createKey(h, chatOnly.secret, { kind: "widget" })
      expect(chat.status).toBe(201)
      expect(chat.body.data.scopes).toEqual(["widget:chat"])
    })
  )

  it.effect("a key cannot grant a scope it does not hold: 403 key_scope_mismatch naming it", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const narrow = yield* keyWith(ws, ["read:keys", "write:keys", "read:agents"])
      const refused = (reply: { status: number; body: any }, scope: string, param = "scopes") => {
        expect(reply.status, JSON.stringify(reply.body)).toBe(403)
        expect(reply.body.error).toMatchObject({ code: "key_scope_mismatch", type: "permission_error", param })
        expect(reply.body.error.message).toContain(`\`${scope}\``)
      }
      refused(yield* createKey(h, narrow.secret, { kind: "secret", scopes: ["read:agents", "write:agents"] }), "write:agents")
      refused(yield* createKey(h, narrow.secret, { kind: "secret", scopes: ["read:usage"] }), "read:usage")
      // the widget scopes stand for the writes they make
      refused(yield* createKey(h, narrow.secret, { kind: "widget", scopes: ["widget:tickets"] }), "write:tickets")
      refused(yield* createKey(h, narrow.secret, { kind: "widget" }), "write:tickets")
      refused(yield* createKey(h, narrow.secret, { kind: "forms" }), "write:forms", "kind")
      // nothing was created
      const listed = yield* h.call("GET", "/v1/keys", { key: narrow.secret })
      expect(listed.body.data).toHaveLength(4)
    })
  )

  it.effect("scopes the kind cannot hold, none at all, or unknown ones are 400 parameter_invalid", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const invalid = (reply: { status: number; body: any }, param: string, text: string) => {
        expect(reply.status, JSON.stringify(reply.body)).toBe(400)
        expect(reply.body.error).toMatchObject({ code: "parameter_invalid", param })
        expect(reply.body.error.message).toContain(text)
      }
      invalid(yield* createKey(h, ws.secretTest, { kind: "secret", scopes: ["widget:chat"] }), "scopes", "`widget:chat`")
      invalid(yield* createKey(h, ws.secretTest, { kind: "widget", scopes: ["read:agents"] }), "scopes", "`read:agents`")
      invalid(yield* createKey(h, ws.secretTest, { kind: "forms", scopes: ["read:agents"] }), "scopes", "no scopes")
      invalid(yield* createKey(h, ws.secretTest, { kind: "secret", scopes: [] }), "scopes", "at least one scope")
      const unknown = yield* createKey(h, ws.secretTest, { kind: "secret", scopes: ["admin:everything"] })
      expect(unknown.status).toBe(400)
      expect(unknown.body.error.param).toBe("scopes[0]")
      const kind = yield* createKey(h, ws.secretTest, { kind: "admin" })
      expect(kind.status).toBe(400)
      expect(kind.body.error.param).toBe("kind")
      const extra = yield* createKey(h, ws.secretTest, { kind: "secret", environment: "live" })
      expect(extra.status).toBe(400)
      expect(extra.body.error.param).toBe("environment")
    })
  )

  it.effect("revokes a key: its next request is 401 invalid_api_key; revoking again is 404", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const created = (yield* createKey(h, ws.secretTest, { kind: "secret" })).body.data
      expect((yield* h.call("GET", "/v1/agents", { key: created.secret })).status).toBe(200)
      const revoked = yield* h.call("DELETE", `/v1/keys/${created.id}`, { key: ws.secretTest })
      expect(revoked.status).toBe(200)
      expect(revoked.body.data).toEqual({ id: created.id, object: "api_key", deleted: true })
      const next = yield* h.call("GET", "/v1/agents", { key: created.secret })
      expect(next.status).toBe(401)
      expect(next.body.error).toMatchObject({ code: "invalid_api_key", message: "This API key has been revoked." })
      const again = yield* h.call("DELETE", `/v1/keys/${created.id}`, { key: ws.secretTest })
      expect(again.status).toBe(404)
      expect(again.body.error).toMatchObject({ code: "resource_missing", param: "id" })
      const listed = yield* h.call("GET", "/v1/keys", { key: ws.secretTest })
      expect(listed.body.data.map((k: any) => k.id)).not.toContain(created.id)
    })
  )

  it.effect("a key cannot revoke itself (400 parameter_invalid) and keeps working", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const self = yield* keyWith(ws, ["read:keys", "write:keys"])
      const refused = yield* h.call("DELETE", `/v1/keys/${self.id}`, { key: self.secret })
      expect(refused.status).toBe(400)
      expect(refused.body.error).toMatchObject({ code: "parameter_invalid", param: "id" })
      expect(refused.body.error.message).toContain("cannot revoke itself")
      expect((yield* h.call("GET", "/v1/keys", { key: self.secret })).status).toBe(200)
      // the roll: a replacement, then the old key revoked with it
      const next = (yield* createKey(h, self.secret, { kind: "secret" })).body.data
      expect((yield* h.call("DELETE", `/v1/keys/${self.id}`, { key: next.secret })).status).toBe(200)
      expect((yield* h.call("GET", "/v1/keys", { key: self.secret })).status).toBe(401)
      expect((yield* h.call("GET", "/v1/keys", { key: next.secret })).status).toBe(200)
    })
  )

  it.effect("another workspace's key is 404 resource_missing and stays active", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const mine = yield* h.seed()
      const theirs = yield* h.seed()
      const their = yield* theirs.key({ kind: "secret" })
      const reply = yield* h.call("DELETE", `/v1/keys/${their.id}`, { key: mine.secretTest })
      expect(reply.status).toBe(404)
      expect(reply.body.error.code).toBe("resource_missing")
      expect((yield* h.call("GET", "/v1/agents", { key: their.secret })).status).toBe(200)
      const listed = yield* h.call("GET", "/v1/keys", { key: mine.secretTest })
      expect(listed.body.data.map((k: any) => k.id)).not.toContain(their.id)
    })
  )

  it.effect("sandbox and live are apart: each lists, creates and revokes its own environment's keys only", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const live = yield* createKey(h, ws.secretLive, { kind: "secret", name: "prod" })
      expect(live.status).toBe(201)
      expect(live.body.data).toMatchObject({ livemode: true, prefix: "sk_live_" })
      expect(live.body.data.secret).toMatch(/^sk_live_/)
      const liveWidget = yield* createKey(h, ws.secretLive, { kind: "widget" })
      expect(liveWidget.body.data.secret).toMatch(/^widget_pk_live_/)

      const sandboxList = (yield* h.call("GET", "/v1/keys", { key: ws.secretTest })).body.data
      expect(sandboxList.every((k: any) => k.livemode === false)).toBe(true)
      expect(sandboxList.map((k: any) => k.id)).not.toContain(live.body.data.id)
      const liveList = (yield* h.call("GET", "/v1/keys", { key: ws.secretLive })).body.data
      expect(liveList.map((k: any) => k.id)).toEqual([liveWidget.body.data.id, live.body.data.id, expect.any(String)])
      expect(liveList.every((k: any) => k.livemode === true)).toBe(true)

      const crossed = yield* h.call("DELETE", `/v1/keys/${live.body.data.id}`, { key: ws.secretTest })
      expect(crossed.status).toBe(404)
      expect((yield* h.call("GET", "/v1/agents", { key: live.body.data.secret })).status).toBe(200)
      expect((yield* h.call("DELETE", `/v1/keys/${live.body.data.id}`, { key: ws.secretLive })).status).toBe(200)
      expect((yield* h.call("GET", "/v1/agents", { key: live.body.data.secret })).status).toBe(401)
    })
  )

  it.effect("pages with signed cursors like every list", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      for (let i = 0; i < 3; i++) yield* createKey(h, ws.secretTest, { kind: "forms", name: `k${i}` })
      const first = yield* h.call("GET", "/v1/keys?limit=2", { key: ws.secretTest })
      expect(first.body.data.map((k: any) => k.name)).toEqual(["k2", "k1"])
      expect(first.body.meta.pagination.has_more).toBe(true)
      const cursor = first.body.meta.pagination.next_cursor
      const second = yield* h.call("GET", `/v1/keys?limit=4&starting_after=${cursor}`, { key: ws.secretTest })
      expect(second.body.data.map((k: any) => [k.kind, k.name])).toEqual([
        ["forms", "k0"],
        ["forms", null],
        ["widget", null],
        ["secret", null]
      ])
      expect(second.body.data).toHaveLength(4)
      expect(second.body.meta.pagination).toEqual({ has_more: false, next_cursor: null })
      const bad = yield* h.call("GET", "/v1/keys?limit=0", { key: ws.secretTest })
      expect(bad.body.error.code).toBe("invalid_limit")
      // a cursor of another list is refused
      yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "a" } })
      yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "b" } })
      const agents = yield* h.call("GET", "/v1/agents?limit=1", { key: ws.secretTest })
      const foreign = yield* h.call("GET", `/v1/keys?starting_after=${agents.body.meta.pagination.next_cursor}`, {
        key: ws.secretTest
      })
      expect(foreign.status).toBe(400)
      expect(foreign.body.error.code).toBe("invalid_cursor")
    })
  )

  it.effect("an Idempotency-Key makes one key: the retry gets the same response, replayed", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const before = (yield* h.call("GET", "/v1/keys", { key: ws.secretTest })).body.data.length
      const headers = { "idempotency-key": "create-key-once" }
      const first = yield* createKey(h, ws.secretTest, { kind: "secret", name: "once" }, headers)
      const second = yield* createKey(h, ws.secretTest, { kind: "secret", name: "once" }, headers)
      expect(first.status).toBe(201)
      expect(second.status).toBe(201)
      expect(second.headers.get("idempotent-replayed")).toBe("true")
      expect(second.body.data).toEqual(first.body.data)
      expect((yield* h.call("GET", "/v1/keys", { key: ws.secretTest })).body.data).toHaveLength(before + 1)
      const other = yield* createKey(h, ws.secretTest, { kind: "forms" }, headers)
      expect(other.status).toBe(422)
    })
  )

  it.effect("the typed client lists, creates and revokes keys", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const client = yield* h.client(ws.secretTest)
      const { data: created } = yield* client.keys.create({ payload: { kind: "secret", scopes: ["read:tickets"] } })
      expect(created.secret.startsWith("sk_test_")).toBe(true)
      const { data: listed } = yield* client.keys.list({ urlParams: {} })
      expect(listed[0]!.id).toBe(created.id)
      const { data: revoked } = yield* client.keys.revoke({ path: { id: created.id } })
      expect(revoked).toEqual({ id: created.id, object: "api_key", deleted: true })
      const refused = yield* Effect.flip(Effect.flatMap(h.client(created.secret), (c) => c.tickets.list({ urlParams: {} })))
      expect(refused).toMatchObject({ _tag: "InvalidApiKey" })
    })
  )
})
