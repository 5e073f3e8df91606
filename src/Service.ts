/**
 * The service with layers chosen from the configuration: what `main.ts` loads
 * once the configuration is known good and the embedded database is opening.
 */
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { join } from "node:path"
import { layerPg, layerPglite } from "../layers/Database.js"
import type { PgliteSession } from "../layers/pglite/Thread.js"
import { layerLive as idsLive } from "../layers/IdGenerator.js"
import * as Fetcher from "../layers/Fetcher.js"
import * as Ai from "../layers/Ai.js"
import * as FileStorage from "../layers/FileStorage.js"
import * as Logging from "./Logging.js"
import * as Mailer from "../layers/Mailer.js"
import * as RateLimitStore from "../layers/RateLimitStore.js"
import type { AppConfigShape } from "./Config.js"
import { makeServer } from "./Server.js"

/**
 * Without a collector no span is ever read, so none is made: Effect's spans
 * (`Effect.fn`, SQL statements) become no-op spans and the HTTP server's span
 * per request (a parsed URL and every header as an attribute) is skipped.
 */
const tracingOff = Layer.mergeAll(
  Layer.setTracerEnabled(false),
  Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, () => true)
)

const tracingTo = (endpoint: string) =>
  Layer.unwrapEffect(
    Effect.map(Effect.promise(() => import("../layers/Tracing.js")), (t) =>
      Layer.discard(t.layerOtlp({ endpoint, serviceName: "assistant-platform" }))
    )
  )

/**
 * Runs until interrupted. `pglite`: the embedded database `main.ts` started
 * opening (unset with `DATABASE_URL`).
 */
export const run = (config: AppConfigShape, pglite: Promise<PgliteSession> | undefined) => {
  const database = Option.match(config.databaseUrl, {
    onSome: (url) => layerPg({ url }),
    onNone: () => layerPglite({ dataDir: join(config.dataDir, "pglite"), opening: pglite })
  })
  const rateLimitStore = Option.match(config.redisUrl, {
    onSome: RateLimitStore.layerRedis,
    onNone: () => RateLimitStore.layerMemory
  })
  const mailer = Option.match(config.smtpUrl, {
    onSome: (url) => Mailer.layerSmtp({ url, from: config.mailFrom }),
    onNone: () => Mailer.layerLog({ from: config.mailFrom })
  })
  const ai =
    config.ai.provider === "openai"
      ? Ai.layerOpenAi({
          baseUrl: config.ai.baseUrl,
          apiKey: config.ai.apiKey,
          chatModel: config.ai.chatModel,
          embeddingModel: config.ai.embeddingModel,
          transcriptionModel: config.ai.transcriptionModel
        })
      : Ai.layerLocal
  const server = makeServer({
      config,
      database,
      rateLimitStore,
      ids: idsLive,
      mailer,
      fetcher: Fetcher.layerNode,
      ai,
      fileStorage: FileStorage.layerDirectory(join(config.dataDir, "files"))
    })
  // loaded only when asked for: no OpenTelemetry code (or cost) otherwise
  const tracing = config.otlpEndpoint === undefined ? tracingOff : tracingTo(config.otlpEndpoint)
  return Layer.launch(server).pipe(
    Effect.provide(Layer.merge(Logging.layerJson({ level: config.logLevel ?? "info" }), tracing))
  )
}
