/** `npm start`: the service with layers chosen from the environment. */
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { layerPg, layerPglite } from "../layers/Database.js"
import { layerLive as idsLive } from "../layers/IdGenerator.js"
import * as Fetcher from "../layers/Fetcher.js"
import * as Ai from "../layers/Ai.js"
import * as FileStorage from "../layers/FileStorage.js"
import * as Logging from "../layers/Logging.js"
import * as Mailer from "../layers/Mailer.js"
import * as Ocr from "../layers/Ocr.js"
import * as RateLimitStore from "../layers/RateLimitStore.js"
import { describeConfigError, fromEnv } from "./Config.js"
import { makeServer } from "./Server.js"

/**
 * Tesseract starts its worker on the first image instead of at boot: the
 * worker costs seconds of start-up and memory that most instances never use.
 */
const lazyTesseract = Layer.scoped(
  Ocr.Ocr,
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const ocr = yield* Effect.cached(
      Effect.map(Layer.buildWithScope(Ocr.layerTesseract, scope), (context) => Context.get(context, Ocr.Ocr))
    )
    return Ocr.Ocr.of({ recognize: (image) => Effect.flatMap(ocr, (o) => o.recognize(image)) })
  })
)

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
 * Beside the bundle (`dist/`), `npm run build` leaves an initialised and
 * migrated empty database; from sources there is none and PGlite runs initdb.
 */
const pgliteTemplate = fileURLToPath(new URL("./pglite-template.tar.gz", import.meta.url))

/** A wrong variable stops the process before anything starts: one line naming it, exit code 1, no stack. */
const configOrExit = fromEnv.pipe(
  Effect.catchAll((error) =>
    Effect.sync(() => {
      process.stderr.write(`${describeConfigError(error)}\n`)
      return process.exit(1)
    })
  )
)

const program = Effect.gen(function* () {
  const config = yield* configOrExit
  const database = Option.match(config.databaseUrl, {
    onSome: (url) => layerPg({ url }),
    onNone: () => layerPglite({ dataDir: join(config.dataDir, "pglite"), template: pgliteTemplate })
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
      ocr: lazyTesseract,
      fileStorage: FileStorage.layerDirectory(join(config.dataDir, "files"))
    })
  // loaded only when asked for: no OpenTelemetry code (or cost) otherwise
  const tracing = config.otlpEndpoint === undefined ? tracingOff : tracingTo(config.otlpEndpoint)
  return yield* Layer.launch(server).pipe(
    Effect.provide(Layer.merge(Logging.layerJson({ level: config.logLevel ?? "info" }), tracing))
  )
})

// the JSON logger replaces the pretty one
NodeRuntime.runMain(program, { disablePrettyLogger: true })
