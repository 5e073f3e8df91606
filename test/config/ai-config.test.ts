import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import { fromEnv } from "../../src/Config.js"

const read = (env: Record<string, string>) =>
  fromEnv.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.either)

describe("AI settings from the environment", () => {
  it.effect("local by default", () =>
    Effect.gen(function* () {
      const config = yield* read({})
      expect(Either.map(config, (c) => c.ai)).toEqual(Either.right({ provider: "local" }))
    }))

  it.effect("openai with its server, key and models", () =>
    Effect.gen(function* () {
      const config = yield* read({
        AI_PROVIDER: "openai",
        AI_BASE_URL: "http://127.0.0.1:8080/v1",
        AI_API_KEY: "sk-test",
        AI_CHAT_MODEL: "llama3",
        AI_EMBEDDING_MODEL: "nomic-embed-text"
      })
      const ai = Either.getOrThrow(config).ai
      expect(ai.provider === "openai" && { ...ai, apiKey: Redacted.value(ai.apiKey) }).toEqual({
        provider: "openai",
        baseUrl: "http://127.0.0.1:8080/v1",
        apiKey: "sk-test",
        chatModel: "llama3",
        embeddingModel: "nomic-embed-text",
        // AI_TRANSCRIPTION_MODEL unset: the OpenAI name
        transcriptionModel: "whisper-1"
      })
    }))

  it.effect("a wrong value is refused, naming the variable", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
        [{ AI_PROVIDER: "anthropic" }, "AI_PROVIDER"],
        [{ AI_PROVIDER: "openai" }, "AI_API_KEY"],
        [{ AI_PROVIDER: "openai", AI_API_KEY: "k", AI_BASE_URL: "ftp://x" }, "AI_BASE_URL"]
      ]
      for (const [env, name] of cases) {
        const config = yield* read(env)
        expect(Either.isLeft(config)).toBe(true)
        if (Either.isLeft(config)) expect(String(config.left)).toContain(name)
      }
    }))
})
