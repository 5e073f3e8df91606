import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { IdGenerator, layerLive, layerTest } from "../../layers/IdGenerator.js"
import { AgentId } from "../../schema/Ids.js"

const isUuid = Schema.is(Schema.UUID)

describe("IdGenerator", () => {
  it.effect("live: prefixed base62 ids, distinct v4 UUIDs", () =>
    Effect.gen(function* () {
      const ids = yield* IdGenerator
      const agent = yield* ids.make("agt")
      expect(agent).toMatch(/^agt_[0-9A-Za-z]{24}$/)
      expect(Schema.is(AgentId)(agent)).toBe(true)
      const [a, b] = [yield* ids.uuid, yield* ids.uuid]
      expect([isUuid(a), isUuid(b), a !== b]).toEqual([true, true, true])
    }).pipe(Effect.provide(layerLive))
  )

  it.effect("test: sequential, well-formed and distinct ids, secrets and UUIDs", () =>
    Effect.gen(function* () {
      const ids = yield* IdGenerator
      expect(yield* ids.make("agt")).toBe("agt_test0000000000000001")
      expect(Schema.is(AgentId)(yield* ids.make("agt"))).toBe(true)
      expect(yield* ids.secret(32)).toMatch(/^test[0-9]{16}x{12}$/)
      const uuids = [yield* ids.uuid, yield* ids.uuid]
      expect(uuids.every(isUuid)).toBe(true)
      expect(new Set(uuids).size).toBe(2)
    }).pipe(Effect.provide(layerTest))
  )
})
