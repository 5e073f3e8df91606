/**
 * The order of a stop, named once: `makeServer` builds its running layer from it, and test/http/drain.test.ts
 * holds it as observed.
 */
import * as Layer from "effect/Layer"

/**
 * What a stop closes, first to last (see http/Drain.ts): the listeners (new connections refused), the workers
 * (their jobs handed back at once), the requests in flight (for at most the grace), the HTTP server. The
 * services and the database, which all of them use, close after them.
 */
export const shutdownOrder = ["listeners", "workers", "requests", "server"] as const
export type ShutdownStage = (typeof shutdownOrder)[number]

type Stages = { readonly [K in ShutdownStage]: Layer.Layer.Any }

/** What stages `K` give (per stage: `Layer.Success` of a union is not the union of theirs). */
type StagesGive<K extends ShutdownStage, S extends Stages> = { [N in K]: Layer.Layer.Success<S[N]> }[K]

/** What stages `Names` need from outside: each may use what the stages after it give (they are built before it). */
type StagesNeed<Names extends ReadonlyArray<ShutdownStage>, S extends Stages> = Names extends readonly [
  infer First extends ShutdownStage,
  ...infer Rest extends ReadonlyArray<ShutdownStage>
]
  ? Exclude<Layer.Layer.Context<S[First]>, StagesGive<Rest[number], S>> | StagesNeed<Rest, S>
  : never

/** The stages built last to first: a scope closes what it built in the reverse order. */
export const inShutdownOrder = <S extends Stages>(stages: S) =>
  shutdownOrder
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- stages of any type, composed in order
    .map((name) => stages[name] as Layer.Layer<any, any, any>)
    .reduceRight((later, stage) => stage.pipe(Layer.provideMerge(later))) as Layer.Layer<
    StagesGive<ShutdownStage, S>,
    { [N in ShutdownStage]: Layer.Layer.Error<S[N]> }[ShutdownStage],
    StagesNeed<typeof shutdownOrder, S>
  >
