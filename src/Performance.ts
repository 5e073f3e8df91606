/**
 * The performance tricks: Effect code written around Effect's own combinators, to save fiber steps and
 * copies of the fiber's context on every request, each with its reason. What each saved is in
 * `scripts/bench/results/` (`notes.md`; instruction counts of `GET /v1/agents/{id}` by
 * `scripts/bench/instructions.ts`); one that stops paying goes back to the plain way.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import type * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as Layer from "effect/Layer"

/**
 * `isolate(A, B)(layer)`: `layer` built with only the services `A` and `B` from the context around it (the
 * type checks that they are all it needs). Why: Effect copies a fiber's whole context at every
 * `provideService`, `Effect.scoped` and context merge, and a request meets several (the platform's, the
 * router's, the API group's, the caller's, each SQL statement's). An API group built inside everything
 * merges every service of the process into each request's context; built here, it holds what it uses.
 * `Server.ts` is its one user: the server and the areas' API groups.
 */
export const isolate =
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tags and FiberRefs of any type (both are invariant)
  <const Tags extends ReadonlyArray<Context.Tag<any, any>>>(...tags: Tags) =>
  <ROut, E, RIn extends Context.Tag.Identifier<Tags[number]>>(
    layer: Layer.Layer<ROut, E, RIn>
  ): Layer.Layer<ROut, E, Context.Tag.Identifier<Tags[number]>> =>
    Layer.scopedContext(
      Effect.gen(function* () {
        const context = yield* Effect.context<Context.Tag.Identifier<Tags[number]>>()
        const memoMap = yield* Layer.CurrentMemoMap
        const scope = yield* Effect.scope
        const only: Context.Context<RIn> = Context.pick(...tags)(context)
        // the same memo map: layers built elsewhere already (the database, the programs) are shared, not rebuilt
        return yield* Layer.buildWithMemoMap(layer, memoMap, scope).pipe(
          Effect.mapInputContext((_: Context.Context<Context.Tag.Identifier<Tags[number]>>) => only)
        )
      })
    )

/** A value for `setOnFiber`. */
export interface FiberValue {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tags and FiberRefs of any type (both are invariant)
  readonly ref: FiberRef.FiberRef<any>
  readonly value: unknown
}
export const fiberValue = <A>(ref: FiberRef.FiberRef<A>, value: A): FiberValue => ({ ref, value })

/**
 * Sets these FiberRefs on the current fiber for the rest of its life (nothing restores them), in one step.
 * Why: each `FiberRef.set` is a fiber step and a copy of the fiber's FiberRefs. For a fiber that is itself
 * the unit of work, like a request's (the platform runs each in a fiber of its own).
 */
export const setOnFiber = (first: FiberValue, ...rest: ReadonlyArray<FiberValue>): Effect.Effect<void> =>
  Effect.updateFiberRefs((fiberId, refs) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tags and FiberRefs of any type (both are invariant)
    const entry = (v: FiberValue): readonly [FiberRef.FiberRef<any>, readonly [readonly [FiberId.Single, unknown]]] => [
      v.ref,
      [[fiberId, v.value]]
    ]
    return FiberRefs.updateManyAs(refs, { entries: [entry(first), ...rest.map(entry)] })
  })

/**
 * The request and the fiber's Clock in one fiber step. Why: every request reads both, and the request's tag
 * plus `Clock.currentTimeNanos` take several steps (a test's `TestClock` is the fiber's Clock all the same).
 */
export const requestAndClock = Effect.withFiberRuntime<{
  readonly request: HttpServerRequest.HttpServerRequest
  readonly clock: Clock.Clock
}>((fiber) =>
  Effect.succeed({
    request: Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest),
    clock: Context.get(fiber.getFiberRef(DefaultServices.currentServices), Clock.Clock)
  })
)

/**
 * `response` with these headers, set one by one. Why: `HttpServerResponse.setHeaders` builds its headers
 * through `Headers.fromInput` and two spreads, several times the work of a few `setHeader`s.
 */
export const withHeaders = (response: HttpServerResponse.HttpServerResponse, headers: Record<string, string>) => {
  let out = response
  for (const name in headers) out = HttpServerResponse.setHeader(out, name, headers[name]!)
  return out
}
