/**
 * The phase writer: a phase is written once it has lasted PHASE_WRITE_DELAY on the Clock, a phase followed
 * sooner by the next is never written, and what is unwritten is handed to the run's last write.
 */
import { expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import type { SourceProgress } from "../../src/knowledge/KnowledgeRepo.js"
import { makePhaseWriter, PHASE_WRITE_DELAY } from "../../src/knowledge/PhaseWriter.js"

const justBefore = Duration.subtract(PHASE_WRITE_DELAY, Duration.millis(1))

const recorder = () => {
  const written: Array<SourceProgress> = []
  return { written, write: (changes: SourceProgress) => Effect.sync(() => written.push(changes)) }
}

it.scoped("a phase that lasts is written once, with what the phases before it learned", () =>
  Effect.gen(function* () {
    const { written, write } = recorder()
    const phases = yield* makePhaseWriter(write)
    yield* phases.enter({ phase: "extracting", progress: 20, size_bytes: 5000 })
    yield* TestClock.adjust(justBefore)
    yield* phases.enter({ phase: "categorizing", progress: 40 })
    yield* TestClock.adjust(justBefore)
    expect(written).toEqual([])
    yield* TestClock.adjust(Duration.millis(1))
    expect(written).toEqual([{ phase: "categorizing", progress: 40, size_bytes: 5000 }])
    yield* TestClock.adjust(Duration.seconds(10))
    expect(written).toHaveLength(1)
    expect(yield* phases.take).toEqual({})
  })
)

it.scoped("what is not written yet is handed over, and never written after", () =>
  Effect.gen(function* () {
    const { written, write } = recorder()
    const phases = yield* makePhaseWriter(write)
    yield* phases.enter({ phase: "generating_qa", progress: 60 })
    yield* phases.enter({ phase: "vectorizing", progress: 80 })
    expect(yield* phases.take).toEqual({ phase: "vectorizing", progress: 80 })
    yield* TestClock.adjust(Duration.seconds(10))
    expect(written).toEqual([])
  })
)

it.scoped("a write that fails loses only that phase", () =>
  Effect.gen(function* () {
    let calls = 0
    const phases = yield* makePhaseWriter(() => Effect.suspend(() => (calls++, Effect.fail("gone"))))
    yield* phases.enter({ phase: "extracting", progress: 20 })
    yield* TestClock.adjust(PHASE_WRITE_DELAY)
    expect(calls).toBe(1)
    expect(yield* phases.take).toEqual({})
  })
)
