/** How programs meet a failing AI provider: an outage is the caller's typed 503, anything else a defect. */
import * as Effect from "effect/Effect"
import type { AiError } from "../layers/Ai.js"

/**
 * An outage (a timeout, a 5xx, the provider's rate limit, no connection: `transient`) becomes the failure
 * `onOutage` builds, worth a retry by the client; any other provider failure (a refused key, a malformed
 * answer) is ours: a defect.
 */
export const providerFailure =
  <E>(onOutage: (message: string) => E) =>
  (error: AiError): Effect.Effect<never, E> =>
    error.transient
      ? Effect.fail(onOutage(`The AI provider did not answer; retry later (${error.message})`))
      : Effect.die(error)

/** `Ai.embed`'s vectors for `count` texts: another number of them is a broken provider, a defect. */
export const vectorsFor = <A>(count: number, vectors: ReadonlyArray<A>): Effect.Effect<ReadonlyArray<A>> =>
  vectors.length === count ? Effect.succeed(vectors) : Effect.dieMessage("Ai.embed gave a vector count unlike its inputs")
