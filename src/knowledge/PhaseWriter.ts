/**
 * A source's phase and progress as processing goes, written once a phase has
 * lasted `PHASE_WRITE_DELAY`: a poller sees a slow phase (a long page, an AI
 * call that takes seconds) while it lasts, and a source that passes through
 * its phases in a few milliseconds costs no statement for each. What is still
 * unwritten when processing ends goes into the source's last write (`take`),
 * so nothing a phase recorded (its `size_bytes`) is lost.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import type { SourceProgress } from "./KnowledgeRepo.js"

/** How long a phase lasts before a poller is shown it. */
export const PHASE_WRITE_DELAY = Duration.millis(100)

export interface PhaseWriter {
  /** A new phase (and what it learned): written after the delay unless the next phase comes first. */
  readonly enter: (changes: SourceProgress) => Effect.Effect<void>
  /** Stops the pending write (waiting for one under way) and hands over what was not written. */
  readonly take: Effect.Effect<SourceProgress>
}

/**
 * A writer for one run of one source, stopped with its scope: no phase lands after the run's own last write.
 * `write` failing (the source deleted, the database away) loses only that phase: the run's last write reports it.
 */
export const makePhaseWriter = (
  write: (changes: SourceProgress) => Effect.Effect<unknown, unknown>
): Effect.Effect<PhaseWriter, never, Scope.Scope> =>
  Effect.gen(function* () {
    const pending = yield* Ref.make<SourceProgress>({})
    const timer = yield* Ref.make(Option.none<Fiber.RuntimeFiber<void>>())
    const flush = Effect.uninterruptible(
      Effect.flatMap(Ref.getAndSet(pending, {}), (changes) =>
        Object.keys(changes).length === 0 ? Effect.void : Effect.ignore(write(changes))
      )
    )
    // interrupting waits for a write already under way (it is uninterruptible), so it ends before what follows
    const stop = Effect.flatMap(Ref.getAndSet(timer, Option.none()), Option.match({ onNone: () => Effect.void, onSome: Fiber.interrupt }))
    yield* Effect.addFinalizer(() => stop)
    const enter = (changes: SourceProgress) =>
      Effect.gen(function* () {
        yield* stop
        yield* Ref.update(pending, (previous) => ({ ...previous, ...changes }))
        yield* Ref.set(timer, Option.some(yield* Effect.forkDaemon(Effect.zipRight(Effect.sleep(PHASE_WRITE_DELAY), flush))))
      })
    return { enter, take: Effect.zipRight(stop, Ref.getAndSet(pending, {})) }
  })

/**
 * A phase of one source's processing as its own span (`knowledge.<phase>`), so a trace shows where a source's
 * time goes (scripts/bench/knowledge.ts sums them); a no-op span while tracing is off.
 */
export const phaseSpan = (name: "fetch" | "extract" | "categorize" | "qa" | "chunk" | "embed" | "write" | "progress") =>
  Effect.withSpan(`knowledge.${name}`, { captureStackTrace: false })
