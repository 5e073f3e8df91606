import { expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { databaseKind } from "../support/database.js"
import { eventually } from "../support/eventually.js"
import { Harness, testServer } from "../support/harness.js"

// API_KEY_CACHE_SECONDS=5: an active key is remembered for 5 s of the Clock
layer(testServer({ apiKeyCacheSeconds: 5 }))("API key cache", (it) => {
  it.effect("a key revoked by another instance is refused once the 5 s bound has passed", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const sql = yield* SqlClient.SqlClient
      const ws = yield* h.seed()
      const key = yield* ws.key({ kind: "secret" })
      expect((yield* h.call("GET", "/v1/agents", { key: key.secret })).status).toBe(200)
      // what another process's revocation leaves: the row changed, this process's cache untouched
      yield* sql`update api_keys set revoked_at = now() where id = ${key.id}`
      yield* TestClock.adjust("4 seconds")
      expect((yield* h.call("GET", "/v1/agents", { key: key.secret })).status).toBe(200)
      yield* TestClock.adjust("1001 millis")
      const refused = yield* h.call("GET", "/v1/agents", { key: key.secret })
      expect(refused.status).toBe(401)
      expect(refused.body.error).toMatchObject({ code: "invalid_api_key", message: "This API key has been revoked." })
    })
  )

  // PGlite belongs to one process: there is no other instance to hear from
  it.effect.skipIf(databaseKind === "pglite")(
    "on PostgreSQL, a key revoked by another instance is refused as soon as its notification arrives, within the bound",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const sql = yield* SqlClient.SqlClient
        const ws = yield* h.seed()
        const key = yield* ws.key({ kind: "secret" })
        expect((yield* h.call("GET", "/v1/agents", { key: key.secret })).status).toBe(200)
        // what another instance's revocation does: the row, then its notification
        yield* sql`update api_keys set revoked_at = now() where id = ${key.id}`
        yield* sql`select pg_notify('api_keys_revoked', ${key.id})`
        // no TestClock step: the cached entry would live 5 s more
        const refused = yield* eventually(h.call("GET", "/v1/agents", { key: key.secret }), (r) => r.status === 401, {
          label: "the notification empties the cache"
        })
        expect(refused.body.error.code).toBe("invalid_api_key")
      })
  )

  it.effect("a key revoked in this process is refused at once", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = yield* ws.key({ kind: "secret" })
      expect((yield* h.call("GET", "/v1/agents", { key: key.secret })).status).toBe(200)
      yield* ws.revoke(key.id)
      expect((yield* h.call("GET", "/v1/agents", { key: key.secret })).status).toBe(401)
    })
  )

  it.effect("a key revoked through the API (DELETE /v1/keys/{id}) is refused at once", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = yield* ws.key({ kind: "secret" })
      expect((yield* h.call("GET", "/v1/agents", { key: key.secret })).status).toBe(200)
      expect((yield* h.call("DELETE", `/v1/keys/${key.id}`, { key: ws.secretTest })).status).toBe(200)
      const refused = yield* h.call("GET", "/v1/agents", { key: key.secret })
      expect(refused.status).toBe(401)
      expect(refused.body.error).toMatchObject({ code: "invalid_api_key", message: "This API key has been revoked." })
    })
  )

  it.effect("an unknown key is never remembered: created later, it works at once", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const sql = yield* SqlClient.SqlClient
      const ws = yield* h.seed()
      const key = yield* ws.key({ kind: "secret" })
      const hash = yield* sql<{ key_hash: string }>`select key_hash from api_keys where id = ${key.id}`.pipe(Effect.orDie)
      // hide the key, present it (unknown), then restore it
      yield* sql`update api_keys set key_hash = 'hidden' where id = ${key.id}`
      expect((yield* h.call("GET", "/v1/agents", { key: key.secret })).status).toBe(401)
      yield* sql`update api_keys set key_hash = ${hash[0]!.key_hash} where id = ${key.id}`
      expect((yield* h.call("GET", "/v1/agents", { key: key.secret })).status).toBe(200)
    })
  )
})
