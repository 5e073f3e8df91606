/**
 * The extraction threads' limits, on real threads: a document over the time
 * limit (by the Clock) or over the memory limit fails with its reason, its
 * thread is stopped, and the next document is read on a fresh one.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { Extractor, layerThreads } from "../../layers/Extractor.js"
import { eventually } from "../support/eventually.js"

const bytes = (text: string) => new TextEncoder().encode(text)
const ordinary = bytes("<html><head><title>Hours</title></head><body><h1>Hours</h1><p>Open nine to five.</p></body></html>")

/** A page Readability takes seconds over (many subtrees just under the depth where it is skipped). */
const slow = bytes(`<html><body>${`${"<div>".repeat(190)}<p>${"text ".repeat(50)}</p>${"</div>".repeat(190)}`.repeat(60)}</body></html>`)

describe("extraction threads", () => {
  it.scoped("HTML, text, a CSV, audio headers and an unreadable PDF on a thread", () =>
    Effect.gen(function* () {
      const extractor = yield* Extractor
      expect(yield* extractor.extract({ kind: "html", bytes: ordinary, fallbackTitle: "fallback" })).toEqual({
        title: "Hours",
        text: "Open nine to five."
      })
      expect(yield* extractor.extract({ kind: "text", bytes: bytes("# Notes\r\nline"), fallbackTitle: "f" })).toEqual({
        title: "Notes",
        text: "# Notes\nline"
      })
      const csv = yield* extractor.csvQa("question,answer\nOpen?,Nine to five,Hours\n,no question")
      expect(csv).toEqual(Either.left([{ line: 3, message: "the question is empty" }]))
      const rows = yield* extractor.csvQa("Open?,Nine to five,Hours")
      expect(rows).toEqual(Either.right([{ question: "Open?", answer: "Nine to five", category: "Hours" }]))
      expect(yield* extractor.audioSeconds(bytes("not audio at all"), "audio/wav")).toEqual(Option.none())
      const pdf = yield* Effect.flip(extractor.extract({ kind: "pdf", bytes: bytes("%PDF-1.4 nonsense"), fallbackTitle: "f" }))
      expect(pdf).toMatchObject({ reason: "unreadable", message: expect.stringContaining("the PDF could not be read") })
    }).pipe(Effect.provide(layerThreads({ threads: 1, timeoutMillis: 30_000, memoryMb: 128 })))
  )

  it.scoped("one thread reads many documents without gathering listeners", () =>
    Effect.gen(function* () {
      const extractor = yield* Extractor
      const warnings: Array<string> = []
      const onWarning = (warning: Error) => warnings.push(warning.name)
      process.on("warning", onWarning)
      yield* Effect.addFinalizer(() => Effect.sync(() => process.off("warning", onWarning)))
      for (let i = 0; i < 15; i++) yield* extractor.extract({ kind: "html", bytes: ordinary, fallbackTitle: `page ${i}` })
      // a warning is emitted on a tick queued when the listener is added: a tick queued after it runs after it
      yield* Effect.async<void>((resume) => process.nextTick(() => resume(Effect.void)))
      expect(warnings).not.toContain("MaxListenersExceededWarning")
    }).pipe(Effect.provide(layerThreads({ threads: 1, timeoutMillis: 30_000, memoryMb: 128 })))
  )

  it.scoped("over the time limit: fails with a timeout, and the next document gets a fresh thread", () =>
    Effect.gen(function* () {
      const extractor = yield* Extractor
      // the thread is up and answering first, so the slow document is what the clock times
      yield* extractor.extract({ kind: "html", bytes: ordinary, fallbackTitle: "warm" })
      const limits = Effect.map(TestClock.sleeps(), (deadlines) => Chunk.filter(deadlines, (at) => at === 30_000).length)
      const before = yield* limits
      const reading = yield* Effect.fork(Effect.flip(extractor.extract({ kind: "html", bytes: slow, fallbackTitle: "slow" })))
      // the slow document's time limit is on the clock
      yield* eventually(limits, (n) => n > before, { label: "the slow document's time limit set" })
      yield* TestClock.adjust("31 seconds")
      expect(yield* Fiber.join(reading)).toMatchObject({ reason: "timeout", message: "the document took longer than 30 s to read" })
      expect((yield* extractor.extract({ kind: "html", bytes: ordinary, fallbackTitle: "next" })).title).toBe("Hours")
    }).pipe(Effect.provide(layerThreads({ threads: 1, timeoutMillis: 30_000, memoryMb: 128 })))
  )

  it.scoped("over the memory limit: fails with its reason, and the next document gets a fresh thread", () =>
    Effect.gen(function* () {
      const extractor = yield* Extractor
      const huge = bytes(`<html><body>${"<p>x</p>".repeat(3_000_000)}</body></html>`)
      const error = yield* Effect.flip(extractor.extract({ kind: "html", bytes: huge, fallbackTitle: "huge" }))
      expect(error).toMatchObject({ reason: "memory", message: "the document needs more than 96 MB of memory to read" })
      expect((yield* extractor.extract({ kind: "html", bytes: ordinary, fallbackTitle: "next" })).title).toBe("Hours")
    }).pipe(Effect.provide(layerThreads({ threads: 1, timeoutMillis: 600_000, memoryMb: 96 })))
  )
})
