/**
 * Lifecycle: whether this process is shutting down. Set once when shutdown
 * starts (the listeners close at the same moment); `/readyz` answers 503 from
 * then on, so a load balancer stops sending new work here even over
 * connections it keeps open.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"

export interface LifecycleShape {
  readonly draining: Effect.Effect<boolean>
  readonly startDraining: Effect.Effect<void>
}

export class Lifecycle extends Context.Tag("Layers/Lifecycle")<Lifecycle, LifecycleShape>() {}

export const layer = Layer.effect(
  Lifecycle,
  Effect.map(Ref.make(false), (flag) => Lifecycle.of({ draining: Ref.get(flag), startDraining: Ref.set(flag, true) }))
)
