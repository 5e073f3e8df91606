/**
 * The Q&A area as the composition root uses it: its programs (regeneration over the `SourceTexts` port, which
 * the knowledge area serves), its API group and its regeneration worker.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import { Agents } from "../agents/Agents.js"
import { queueWorker } from "../Background.js"
import { AppConfig } from "../Config.js"
import { Categories } from "./Categories.js"
import { QaHttp } from "./Http.js"
import { QaItems } from "./QaItems.js"
import { QaRepo } from "./QaRepo.js"
import { maxAttempts, regenerateQueue, Regeneration } from "./Regeneration.js"

/** Keeps the repository in its output: tests seed Q&A items through it. */
export const Live = Layer.mergeAll(QaItems.Default, Categories.Default, Regeneration.Default).pipe(
  Layer.provide(Agents.Default),
  Layer.provideMerge(QaRepo.Default)
)

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = QaHttp
export const ApiServices = [Authentication, Categories, QaItems, Regeneration] as const

/** Regeneration of Q&A from its sources, two at a time. */
export const Workers = Layer.unwrapEffect(
  Effect.gen(function* () {
    const regeneration = yield* Regeneration
    const config = yield* AppConfig
    return queueWorker({
      queue: regenerateQueue,
      concurrency: 2,
      pollMillis: config.qaRegeneratePollMillis,
      // no record of its own to mark: a regeneration given up is in the log and `jobs_failed_total`
      maxAttempts,
      handle: regeneration.handle
    })
  })
)
