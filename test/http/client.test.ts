import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { IdempotencyKeyMismatch, ResourceMissing } from "../../schema/Errors.js"
import type { AgentId } from "../../schema/Ids.js"
import { type Client, idempotent, makeClient, withIdempotencyKey } from "../../src/sdk/index.js"
import { expectFailure } from "../support/expect.js"
import { Harness, testServer } from "../support/harness.js"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

layer(testServer())("typed client (SDK)", (it) => {
  it.effect("creates, lists, updates and deletes agents, and decodes failures into tagged errors", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const client = yield* makeClient({ baseUrl: h.url, apiKey: ws.secretTest })
      const created = yield* client.agents.create({ payload: { type: "support", name: "From the SDK" } })
      expect(created.data.slug).toBe("from-the-sdk")
      const listed = yield* client.agents.list({ urlParams: { limit: "10" } })
      expect(listed.data.map((a) => a.id)).toEqual([created.data.id])
      const updated = yield* client.agents.update({ path: { id: created.data.id }, payload: { welcome_message: "Hi" } })
      expect(updated.data.welcome_message).toBe("Hi")
      const deleted = yield* client.agents.delete({ path: { id: created.data.id } })
      expect(deleted.data.deleted).toBe(true)
      const missing = yield* Effect.flip(client.agents.retrieve({ path: { id: created.data.id as AgentId } }))
      expect(missing).toBeInstanceOf(ResourceMissing)
      expect((missing as ResourceMissing).message).toContain(created.data.id)
    }).pipe(Effect.provide(FetchHttpClient.layer))
  )

  it.effect("an Idempotency-Key belongs to one call: given per call, or fresh per POST with idempotencyKeys auto", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const sql = yield* SqlClient.SqlClient
      const ws = yield* h.seed()
      // the keys the server stored for this workspace, and those stored since the last look
      const keysSeen = Effect.map(
        Effect.orDie(sql<{ key: string }>`select key from idempotency_keys where workspace_id = ${ws.workspace.id}`),
        (rows) => rows.map((r) => r.key)
      )
      let seen: ReadonlyArray<string> = []
      const newKeys = Effect.map(keysSeen, (keys) => {
        const fresh = keys.filter((k) => !seen.includes(k))
        seen = keys
        return fresh
      })
      const create = (client: Client, name: string) => client.agents.create({ payload: { type: "support", name } })

      // by default no key is sent
      const client = yield* makeClient({ baseUrl: h.url, apiKey: ws.secretTest })
      yield* create(client, "No key")
      expect(yield* newKeys).toEqual([])

      // a key of one call: the call again with it is a replay of the first response
      const [first] = yield* client.agents
        .create({ payload: { type: "support", name: "Once" }, withResponse: true })
        .pipe(withIdempotencyKey("call-1"))
      const [again, againResponse] = yield* client.agents
        .create({ payload: { type: "support", name: "Once" }, withResponse: true })
        .pipe(withIdempotencyKey("call-1"))
      expect(again.data.id).toBe(first.data.id)
      expect(againResponse.headers["idempotent-replayed"]).toBe("true")
      // the client's other POSTs do not carry it: they go through
      const other = yield* create(client, "Another call")
      expect(other.data.id).not.toBe(first.data.id)
      expect(yield* newKeys).toEqual(["call-1"])
      // the same key on another call is the server's 422 (which is why a key is not the client's)
      yield* expectFailure(create(client, "Different body").pipe(withIdempotencyKey("call-1")), IdempotencyKeyMismatch)
      // `idempotent`: a fresh key for one call
      yield* idempotent(create(client, "Fresh key"))
      const fresh = yield* newKeys
      expect(fresh).toHaveLength(1)
      expect(fresh[0]).toMatch(uuid)

      // idempotencyKeys auto: a fresh key per POST, none on reads; a call's own key still wins
      const auto = yield* makeClient({ baseUrl: h.url, apiKey: ws.secretTest, idempotencyKeys: "auto" })
      const a = yield* create(auto, "Auto one")
      const b = yield* create(auto, "Auto two")
      expect(a.data.id).not.toBe(b.data.id)
      yield* auto.agents.list({ urlParams: {} })
      yield* create(auto, "Own key").pipe(withIdempotencyKey("call-2"))
      const afterAuto = yield* newKeys
      expect(afterAuto).toHaveLength(3)
      expect(afterAuto.filter((k) => uuid.test(k))).toHaveLength(2)
      expect(new Set(afterAuto).size).toBe(3)
      expect(afterAuto).toContain("call-2")

      // the deprecated client-wide key: its first POST only, so a second, different POST is not a 422
      const legacy = yield* makeClient({ baseUrl: h.url, apiKey: ws.secretTest, idempotencyKey: "legacy-1" })
      yield* create(legacy, "Legacy one")
      yield* create(legacy, "Legacy two")
      expect(yield* newKeys).toEqual(["legacy-1"])
    }).pipe(Effect.provide(FetchHttpClient.layer))
  )
})
