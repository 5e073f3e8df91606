/** The HTTP plumbing's services as the composition root uses them: the edge's stores and the idempotency sweeper. */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as JobQueue from "../../layers/JobQueue.js"
import { background } from "../Background.js"
import { AppConfig } from "../Config.js"
import { isolate } from "../Isolate.js"
import { IdempotencyStore } from "./Idempotency.js"
import { Paginator } from "./Pagination.js"
import { RequestRateLimiter } from "./RateLimit.js"

export const Live = Layer.mergeAll(IdempotencyStore.Default, Paginator.Default, RequestRateLimiter.Default)

/** Sweeps of idempotency records are batched at least this far apart. */
const sweepMinGapMillis = 10 * 60_000

/** Built with only what it uses (see `Isolate.ts`). */
export const Workers = isolate(AppConfig, IdempotencyStore)(
  Layer.unwrapEffect(
    Effect.map(IdempotencyStore, (store) =>
      background(
        JobQueue.supervise(
          "idempotency-sweeper",
          // sleeps until the oldest record expires (at least `sweepMinGap` apart), not on a fixed beat
          Effect.forever(
            Effect.flatMap(store.sweep(), (next) =>
              Effect.flatMap(Clock.currentTimeMillis, (at) => Effect.sleep(Math.max(sweepMinGapMillis, next - at)))
            )
          )
        )
      )
    )
  )
)
