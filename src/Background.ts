/**
 * How the areas' background fibers start (each area's `Workers` in its `Area.ts`): for the life of the server,
 * forked once the port listens and `workersStartAfterMillis` later. On one PGlite session every first claim (a
 * few statements per worker, cold caches) would otherwise run ahead of the first readiness checks. JobQueue
 * workers supervise themselves; other fibers use `JobQueue.supervise`.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as JobQueue from "../layers/JobQueue.js"
import { AppConfig } from "./Config.js"

export const background = <R>(work: Effect.Effect<never, never, R>) =>
  Layer.scopedDiscard(
    Effect.flatMap(AppConfig, (config) =>
      Effect.forkScoped(
        config.workersStartAfterMillis === undefined ? work : Effect.zipRight(Effect.sleep(config.workersStartAfterMillis), work)
      )
    )
  )

/** A JobQueue worker, started like the other background fibers (what `JobQueue.layerWorker` forks at once). */
export const queueWorker = <R, P, F = never>(options: JobQueue.WorkerOptions<R, P, F>) =>
  Layer.unwrapEffect(Effect.map(JobQueue.JobQueue, (queue) => background(queue.worker(options))))
