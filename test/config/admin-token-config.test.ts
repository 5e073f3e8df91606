/**
 * `ADMIN_TOKEN` has a floor: a short token is refused at start by name, and the token the service generates for
 * itself in embedded mode passes the same check when an operator copies it into `ADMIN_TOKEN`.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { layerLive as idsLive } from "../../layers/IdGenerator.js"
import { resolveAdminToken } from "../../src/admin/AdminToken.js"
import { ADMIN_TOKEN_MIN_LENGTH, describeConfigError, fromEnv } from "../../src/Config.js"
import { testConfig } from "../support/harness.js"

const read = (env: Record<string, string>) =>
  fromEnv.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.either)

describe("ADMIN_TOKEN's minimum length", () => {
  it.effect("a token shorter than 32 characters is refused, naming the variable and never showing the value", () =>
    Effect.gen(function* () {
      expect(ADMIN_TOKEN_MIN_LENGTH).toBe(32)
      for (const short of ["secret", "a".repeat(31), `  ${"b".repeat(30)}  `]) {
        const config = yield* read({ ADMIN_TOKEN: short })
        expect(Either.isLeft(config), short).toBe(true)
        if (Either.isLeft(config)) {
          const line = describeConfigError(config.left)
          expect(line).toMatch(/^invalid configuration: ADMIN_TOKEN must be at least 32 characters long/)
          expect(line).not.toContain(short.trim())
        }
      }
    }))

  it.effect("a token of 32 characters or more is accepted as it is; unset, there is none", () =>
    Effect.gen(function* () {
      const token = "c".repeat(32)
      const config = Either.getOrThrow(yield* read({ ADMIN_TOKEN: token }))
      expect(Option.map(config.adminToken, Redacted.value)).toEqual(Option.some(token))
      expect(Option.isNone(Either.getOrThrow(yield* read({})).adminToken)).toBe(true)
    }))

  it.scopedLive("the token generated under DATA_DIR is long enough to be set as ADMIN_TOKEN", () =>
    Effect.gen(function* () {
      const dataDir = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "admin-token-length-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      )
      const generated = yield* resolveAdminToken(testConfig({ adminToken: Option.none(), dataDir })).pipe(
        Effect.provide(Layer.merge(NodeContext.layer, idsLive))
      )
      const token = Redacted.value(Option.getOrThrow(generated))
      expect(token.length).toBeGreaterThanOrEqual(ADMIN_TOKEN_MIN_LENGTH)
      const config = Either.getOrThrow(yield* read({ ADMIN_TOKEN: token }))
      expect(Option.map(config.adminToken, Redacted.value)).toEqual(Option.some(token))
    }))
})
