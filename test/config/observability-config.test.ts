import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import { fromEnv } from "../../src/Config.js"

const read = (env: Record<string, string>) =>
  fromEnv.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))), Effect.either)

describe("observability settings from the environment", () => {
  it.effect("defaults: info logs, a 5 s key cache, open-on-loopback metrics, no tracing", () =>
    Effect.gen(function* () {
      const config = Either.getOrThrow(yield* read({}))
      expect(config.logLevel).toBe("info")
      expect(config.apiKeyCacheSeconds).toBe(5)
      expect(config.metricsToken).toBeUndefined()
      expect(config.otlpEndpoint).toBeUndefined()
    }))

  it.effect("set values are read", () =>
    Effect.gen(function* () {
      const config = Either.getOrThrow(
        yield* read({
          LOG_LEVEL: "warning",
          API_KEY_CACHE_SECONDS: "0",
          METRICS_TOKEN: "scrape-me",
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318"
        })
      )
      expect(config.logLevel).toBe("warning")
      expect(config.apiKeyCacheSeconds).toBe(0)
      expect(config.metricsToken && Redacted.value(config.metricsToken)).toBe("scrape-me")
      expect(config.otlpEndpoint).toBe("http://127.0.0.1:4318")
    }))

  it.effect("a wrong value is refused, naming the variable", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
        [{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
        [{ API_KEY_CACHE_SECONDS: "-1" }, "API_KEY_CACHE_SECONDS"],
        [{ API_KEY_CACHE_SECONDS: "3600" }, "API_KEY_CACHE_SECONDS"],
        [{ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT"]
      ]
      for (const [env, name] of cases) {
        const config = yield* read(env)
        expect(Either.isLeft(config), name).toBe(true)
        if (Either.isLeft(config)) expect(String(config.left)).toContain(name)
      }
    }))
})
