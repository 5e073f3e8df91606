/**
 * What the areas run on, chosen by the caller (`Service.ts` from the configuration, tests with test layers):
 * the database, ids, mail, the network, the AI provider, file storage, the decoder processes and the readers
 * on them, the request limiter's store, and the configuration itself.
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Layer from "effect/Layer"
import type * as Ai from "../layers/Ai.js"
import type { Database } from "../layers/Database.js"
import * as Decoders from "../layers/Decoders.js"
import * as Extractor from "../layers/Extractor.js"
import type { Fetcher } from "../layers/Fetcher.js"
import type { FileStorage } from "../layers/FileStorage.js"
import type { IdGenerator } from "../layers/IdGenerator.js"
import * as Lifecycle from "../layers/Lifecycle.js"
import type { Mailer } from "../layers/Mailer.js"
import * as Ocr from "../layers/Ocr.js"
import type * as RateLimitStore from "../layers/RateLimitStore.js"
import { AppConfig, type AppConfigShape } from "./Config.js"
import { CursorKeyLive } from "./http/CursorSecret.js"
import type { SourceTexts } from "./qa/SourceTexts.js"

export interface ServerLayers {
  readonly config: AppConfigShape
  readonly database: Layer.Layer<SqlClient.SqlClient | Database, SqlError>
  readonly rateLimitStore: Layer.Layer<RateLimiter.RateLimiterStore>
  readonly ids: Layer.Layer<IdGenerator>
  readonly mailer: Layer.Layer<Mailer>
  readonly fetcher: Layer.Layer<Fetcher>
  readonly ai: Layer.Layer<Ai.Ai>
  /** Default: sharp and tesseract.js on the decoder processes. */
  readonly ocr?: Layer.Layer<Ocr.Ocr, never, Decoders.Decoders>
  readonly fileStorage: Layer.Layer<FileStorage>
  /** Default: the knowledge area's indexed sources. */
  readonly sourceTexts?: Layer.Layer<SourceTexts>
  /** Default: the readers on the decoder processes. */
  readonly extractor?: Layer.Layer<Extractor.Extractor, never, Decoders.Decoders>
}
export type { RateLimitStore }

/** The layers given, the decoder processes under the readers and OCR, and the services built from the configuration. */
export const makeInfrastructure = (layers: ServerLayers) => {
  const config = Layer.succeed(AppConfig, layers.config)
  return Layer.mergeAll(
    layers.ids,
    layers.mailer,
    layers.fetcher,
    layers.ai,
    Layer.merge(layers.ocr ?? Ocr.layerDecoders, layers.extractor ?? Extractor.layerDecoders).pipe(
      Layer.provide(
        Decoders.layerProcesses({
          processes: layers.config.ingest.concurrency,
          timeoutMillis: layers.config.ingest.extractTimeoutMillis,
          memoryMb: layers.config.ingest.extractMemoryMb
        })
      )
    ),
    layers.fileStorage,
    config,
    Lifecycle.layer,
    CursorKeyLive.pipe(Layer.provide(config)),
    // the request limiter takes from the store itself; the forms limiter uses `RateLimiter`
    RateLimiter.layer.pipe(Layer.provideMerge(layers.rateLimitStore))
  ).pipe(Layer.provideMerge(layers.database))
}
