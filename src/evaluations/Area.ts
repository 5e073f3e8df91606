/**
 * The evaluations area as the composition root uses it: its programs, its API group, its run worker, which
 * answers through the conversations area's `Answering` (with retrieval of its own, as that area's replies), and
 * the `KnowledgeChanged` port it serves (its automatic runs, `Triggers.ts`) with their worker.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import { Agents } from "../agents/Agents.js"
import { queueWorker } from "../Background.js"
import { AppConfig } from "../Config.js"
import { Answering } from "../conversations/Answering.js"
import { Retrieval } from "../knowledge/Retrieval.js"
import { evaluationQueue, Evaluations } from "./Evaluations.js"
import { EvaluationsHttp } from "./Http.js"
import { Runner, runMaxAttempts } from "./Runner.js"
import { evaluationTriggerQueue, KnowledgeChangedLive, Triggers } from "./Triggers.js"

export const Live = Layer.mergeAll(Evaluations.Default, Runner.Default, Triggers.Default.pipe(Layer.provide(Evaluations.Default))).pipe(
  Layer.provide([Answering.Default.pipe(Layer.provide(Retrieval.Default)), Agents.Default])
)

/** The port the knowledge and Q&A areas tell of their changes (`events/KnowledgeChanged.ts`). */
export { KnowledgeChangedLive }

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = EvaluationsHttp
export const ApiServices = [Authentication, Evaluations] as const

/**
 * Runs of different agents side by side, two at a time; an agent's runs one at a time (the job's key), and a
 * workspace's runs hold one slot at most, so one workspace's long evaluation never holds every slot.
 */
const RunWorkers = Layer.unwrapEffect(
  Effect.gen(function* () {
    const runner = yield* Runner
    const config = yield* AppConfig
    return queueWorker({
      queue: evaluationQueue,
      concurrency: 2,
      perGroup: 1,
      pollMillis: config.qaRegeneratePollMillis,
      maxAttempts: runMaxAttempts,
      onGiveUp: runner.giveUp,
      handle: runner.handle
    })
  })
)

/** Knowledge changes' automatic runs, queued when due: a few statements per agent, one at a time per agent. */
const TriggerWorkers = Layer.unwrapEffect(
  Effect.gen(function* () {
    const triggers = yield* Triggers
    const config = yield* AppConfig
    return queueWorker({
      queue: evaluationTriggerQueue,
      concurrency: 2,
      pollMillis: config.qaRegeneratePollMillis,
      handle: triggers.handle
    })
  })
)

export const Workers = Layer.merge(RunWorkers, TriggerWorkers)
