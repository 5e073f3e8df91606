/**
 * The HTTP plumbing as the composition root uses it: the edge's stores, the middlewares endpoints run after
 * routing, the idempotency sweeper, and the listeners with their drain.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { background } from "../Background.js"
import type { Server as NodeServer } from "node:http"
import type { AppConfigShape } from "../Config.js"
import { defaultGraceMillis, makeDrain } from "./Drain.js"
import { BodyPolicy, Idempotency, RouteName } from "../../schema/Endpoint.js"
import { BodyPolicyLive } from "./BodyPolicy.js"
import { RouteNameLive } from "./RouteName.js"
import { IdempotencyLive, StoredResponses } from "./Idempotency.js"
import { IdempotencyRepo } from "./IdempotencyRepo.js"
import { listening, makeNodeServer } from "./NodeServer.js"
import { Paginator } from "./Pagination.js"
import { RequestRateLimiter } from "./RateLimit.js"
import { supervise } from "../../layers/Supervise.js"

export const Live = Layer.mergeAll(IdempotencyRepo.Default, StoredResponses.Default, Paginator.Default, RequestRateLimiter.Default)

/** The middlewares the contract puts on every endpoint (`schema/Api.ts`), and the services they are. */
export const ApiMiddlewares = Layer.mergeAll(RouteNameLive, BodyPolicyLive, IdempotencyLive)
export const ApiServices = [RouteName, BodyPolicy, Idempotency] as const

/** Sweeps of idempotency records are batched at least this far apart. */
const sweepMinGapMillis = 10 * 60_000

/** The idempotency records' sweeper. */
export const Workers = Layer.unwrapEffect(
  Effect.map(IdempotencyRepo, (store) =>
    background(
      supervise(
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

/**
 * The API served on `config.port`, and on `config.formsPort` when set (the spec's `{forms_url}`; the main port
 * serves it too), with the drain of those listeners for a stop.
 */
export const makeServing = (config: AppConfigShape) => {
  // every listener this server opens, for the shutdown drain
  const listeners: Array<NodeServer> = []
  const makeListener = makeNodeServer({ docsUrl: `${config.publicUrl}/docs/errors` })
  const nodeServer = () => {
    const server = makeListener()
    listeners.push(server)
    return server
  }
  const drain = makeDrain({ servers: () => listeners, graceMillis: config.shutdownGraceMillis ?? defaultGraceMillis })
  const FormsListener =
    config.formsPort === undefined
      ? Layer.empty
      : HttpApiBuilder.serve().pipe(
          HttpServer.withLogAddress,
          Layer.provide(listening(nodeServer, { port: config.formsPort, host: config.host }))
        )
  const Serving = Layer.mergeAll(HttpApiBuilder.serve(), FormsListener).pipe(
    HttpServer.withLogAddress,
    Layer.provideMerge(listening(nodeServer, { port: config.port, host: config.host }))
  )
  return { Serving, drain }
}
