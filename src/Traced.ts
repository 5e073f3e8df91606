/**
 * `traced("Tickets.create")(function* (...) {...})`: a named program, as
 * `Effect.fn("Tickets.create")` makes it, whose span exists only while tracing
 * is on (`OTEL_EXPORTER_OTLP_ENDPOINT` set). Without a collector the service
 * turns tracing off (`Layer.setTracerEnabled(false)`), and `Effect.fn` still
 * builds a no-op span on every call: a stack capture, two copies of the fiber's
 * context and a dozen fiber steps, a few percent of a whole `GET` apiece
 * (scripts/bench/results/performance-decisions.md). Here each call reads the setting once and runs the body
 * with the span or without it.
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"

type Body = (...args: Array<unknown>) => unknown
type Pipeable = (effect: Effect.Effect<unknown, unknown, unknown>, ...args: Array<unknown>) => unknown
type Made = (...args: Array<unknown>) => Effect.Effect<unknown, unknown, unknown>

export const traced = (name: string): Effect.fn.Gen =>
  ((body: Body, ...pipeables: Array<Pipeable>) => {
    const withSpan = (Effect.fn(name) as unknown as (body: Body, ...pipeables: Array<Pipeable>) => Made)(body, ...pipeables)
    const without = (Effect.fnUntraced as unknown as (body: Body, ...pipeables: Array<Pipeable>) => Made)(body, ...pipeables)
    return function (this: unknown, ...args: Array<unknown>) {
      return Effect.withFiberRuntime<unknown, unknown, unknown>((fiber) =>
        fiber.getFiberRef(FiberRef.currentTracerEnabled) ? withSpan.apply(this, args) : without.apply(this, args)
      )
    }
  }) as unknown as Effect.fn.Gen
