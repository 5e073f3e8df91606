/**
 * `isolate(A, B)(layer)`: `layer` built with only the services `A` and `B` from
 * the context around it (the type checks that they are all it needs).
 *
 * Why: Effect copies a fiber's whole context (a `Map`) at every
 * `provideService`, `Effect.scoped` and context merge, and a request meets about
 * six of them (the platform's, the router's, the API group's, the caller's, each
 * SQL statement's). A request's fiber starts from the context the HTTP server was
 * built in, each API group merges in the context it was built in, and a
 * background worker's fibers start from the context of its layer. Built inside
 * everything, each held every service of the process (about 55), and copying
 * them was a fifth of a `GET`'s instructions. Built here, they hold what they use.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export const isolate =
  <const Tags extends ReadonlyArray<Context.Tag<any, any>>>(...tags: Tags) =>
  <ROut, E, RIn extends Context.Tag.Identifier<Tags[number]>>(
    layer: Layer.Layer<ROut, E, RIn>
  ): Layer.Layer<ROut, E, Context.Tag.Identifier<Tags[number]>> =>
    Layer.scopedContext(
      Effect.gen(function* () {
        const context = yield* Effect.context<Context.Tag.Identifier<Tags[number]>>()
        const memoMap = yield* Layer.CurrentMemoMap
        const scope = yield* Effect.scope
        const only = Context.pick(...tags)(context) as Context.Context<RIn>
        // the same memo map: layers built elsewhere already (the database, the programs) are shared, not rebuilt
        return yield* Layer.buildWithMemoMap(layer, memoMap, scope).pipe(Effect.mapInputContext(() => only))
      })
    ) as Layer.Layer<ROut, E, Context.Tag.Identifier<Tags[number]>>
