import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { defaultWorkspaceShare, fromEnv } from "../../src/Config.js"

const read = (env: Record<string, string>) =>
  fromEnv.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.either)

describe("workspace shares from the environment", () => {
  it.effect("unset: none read (the pools' defaults apply); set: read", () =>
    Effect.gen(function* () {
      const unset = Either.getOrThrow(yield* read({}))
      expect([unset.webhookWorkspaceShare, unset.ingest.workspaceShare, unset.crawlWorkspaceShare]).toEqual([
        undefined,
        undefined,
        undefined
      ])
      const set = Either.getOrThrow(
        yield* read({ WEBHOOK_WORKSPACE_SHARE: "4", INGEST_WORKSPACE_SHARE: "3", CRAWL_WORKSPACE_SHARE: "2" })
      )
      expect([set.webhookWorkspaceShare, set.ingest.workspaceShare, set.crawlWorkspaceShare]).toEqual([4, 3, 2])
    }))

  it.effect("a share that is not a positive integer is refused, naming the variable", () =>
    Effect.gen(function* () {
      for (const name of ["WEBHOOK_WORKSPACE_SHARE", "INGEST_WORKSPACE_SHARE", "CRAWL_WORKSPACE_SHARE"]) {
        for (const value of ["0", "-2", "1.5", "half"]) {
          const config = yield* read({ [name]: value })
          expect(Either.isLeft(config), `${name}=${value}`).toBe(true)
          if (Either.isLeft(config)) expect(String(config.left)).toContain(name)
        }
      }
    }))

  it("the default share of a pool is half of it, rounded up, at least one", () => {
    expect([1, 2, 3, 4, 16].map(defaultWorkspaceShare)).toEqual([1, 1, 2, 2, 8])
  })
})
