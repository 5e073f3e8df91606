import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ResourceMissing } from "../../schema/Errors.js"
import type { AgentId } from "../../schema/Ids.js"
import { makeClient } from "../../src/sdk/index.js"
import { Harness, testServer } from "../support/harness.js"

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
})
