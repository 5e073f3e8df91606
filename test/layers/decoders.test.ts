/**
 * The decoder processes, for real: each input is read in a child process, and
 * an input that breaks its decoder (a native abort, a signal, an error thrown
 * from an event handler, a promise nobody awaited, an endless loop, memory in
 * or out of V8's heap) fails alone with its reason; the next input is read by a
 * fresh process, and this process goes on.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { execFileSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { gzipSync } from "node:zlib"
import { layerProcesses, type ProcessOptions } from "../../layers/Decoders.js"
import { Extractor, layerDecoders } from "../../layers/Extractor.js"
import { answerPieceChars } from "../../layers/extractor/Protocol.js"
import { eventually } from "../support/eventually.js"

const bytes = (text: string) => new TextEncoder().encode(text)
const ordinary = bytes("<html><head><title>Hours</title></head><body><h1>Hours</h1><p>Open nine to five.</p></body></html>")

const decoders = (options: Partial<ProcessOptions> = {}) =>
  layerDecoders.pipe(Layer.provide(layerProcesses({ processes: 1, timeoutMillis: 30_000, memoryMb: 128, ...options })))

/** Decoder processes whose reader breaks as each document's text says (`test/support/hostileDecoder.ts`). */
const hostile = (options: Partial<ProcessOptions> = {}) => decoders({ entry: new URL("../support/hostileDecoder.ts", import.meta.url), ...options })

const read = (text: string) => Effect.flatMap(Extractor, (extractor) => extractor.extract({ kind: "html", bytes: bytes(text), fallbackTitle: text }))

const readOrdinary = Effect.flatMap(Extractor, (extractor) => extractor.extract({ kind: "html", bytes: ordinary, fallbackTitle: "next" }))

describe("decoder processes", () => {
  it.scoped("HTML, text, a CSV, audio headers, an unreadable PDF, a page's links and a sitemap in a decoder process", () =>
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
      const page = bytes(`<html><head><link rel="canonical" href="/hours"></head><body><a href="/a">A</a><a href="b">B</a></body></html>`)
      expect(yield* extractor.links({ bytes: page, url: "https://shop.example/docs/", robot: "AssistantPlatformBot" })).toEqual({
        links: ["https://shop.example/a", "https://shop.example/docs/b"],
        canonical: "https://shop.example/hours",
        noindex: false,
        nofollow: false
      })
      // a sitemap, gzip-encoded, after a few MB of entries never closed and with a reference naming no character
      const sitemap = gzipSync(
        `<urlset>${"<url>".repeat(400_000)}<url><loc>https://shop.example/&#99999999;</loc></url><url><loc>https://shop.example/a</loc></url></urlset>`
      )
      expect(yield* extractor.sitemap(sitemap, { maxBytes: 50 * 1024 * 1024, maxEntries: 10 })).toMatchObject({
        _tag: "Sitemap",
        sitemap: { pages: ["https://shop.example/a"], sitemaps: [], truncated: false }
      })
    }).pipe(Effect.provide(decoders()))
  )

  it.scoped("inputs of a megabyte and more reach their decoder through a temporary file, removed once read", () =>
    Effect.gen(function* () {
      const extractor = yield* Extractor
      const spilled = () => readdirSync(tmpdir()).filter((name) => name.startsWith("decoder-input-")).length
      const before = spilled()
      // an uncompressed sitemap of 3 MB of unclosed entries, then one whole one, and a page of 2 MB
      const sitemap = bytes(`<urlset>${"<url>".repeat(600_000)}<url><loc>https://shop.example/b</loc></url></urlset>`)
      expect(yield* extractor.sitemap(sitemap, { maxBytes: 50 * 1024 * 1024, maxEntries: 10 })).toMatchObject({
        _tag: "Sitemap",
        sitemap: { pages: ["https://shop.example/b"] }
      })
      const page = `<html><head><title>Long</title></head><body><p>${"Open nine to five. ".repeat(110_000)}</p></body></html>`
      const read = yield* extractor.extract({ kind: "html", bytes: bytes(page), fallbackTitle: "f" })
      expect(read.title).toBe("Long")
      expect(read.text.length).toBeGreaterThan(2_000_000)
      expect(spilled()).toBe(before)
    }).pipe(Effect.provide(decoders()))
  )

  it.scoped("a text of several answer pieces comes back whole, and the next answer carries none of it", () =>
    Effect.gen(function* () {
      const extractor = yield* Extractor
      // not a multiple of the piece size, with characters outside Latin-1 across the pieces' edges
      const text = Array.from({ length: 3 * answerPieceChars + 777 }, (_, i) => (i % 5 === 0 ? "é" : i % 7 === 0 ? "日" : "a")).join("")
      const long = yield* extractor.extract({ kind: "text", bytes: bytes(text), fallbackTitle: "Long" })
      expect(long).toEqual({ title: "Long", text })
      expect(yield* readOrdinary).toEqual({ title: "Hours", text: "Open nine to five." })
    }).pipe(Effect.provide(decoders()))
  )

  it.scoped("one process reads many documents without gathering listeners", () =>
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
    }).pipe(Effect.provide(decoders()))
  )

  it.scoped("over the heap limit: fails with its reason, and the next document gets a fresh process", () =>
    Effect.gen(function* () {
      const extractor = yield* Extractor
      const huge = bytes(`<html><body>${"<p>x</p>".repeat(3_000_000)}</body></html>`)
      const error = yield* Effect.flip(extractor.extract({ kind: "html", bytes: huge, fallbackTitle: "huge" }))
      expect(error).toMatchObject({ reason: "memory", message: "the document needs more than 96 MB of memory to read" })
      expect((yield* readOrdinary).title).toBe("Hours")
    }).pipe(Effect.provide(decoders({ timeoutMillis: 600_000, memoryMb: 96 })))
  )

  it.scoped("a decoder that aborts, is killed by a signal, throws from an event handler or leaves a rejection: each fails alone", () =>
    Effect.gen(function* () {
      expect(yield* Effect.flip(read("abort"))).toEqual(
        expect.objectContaining({ reason: "crashed", message: "processing this document stopped its decoder" })
      )
      expect((yield* readOrdinary).title).toBe("Hours")
      expect(yield* Effect.flip(read("segfault"))).toEqual(
        expect.objectContaining({ reason: "crashed", message: "processing this document stopped its decoder" })
      )
      expect(yield* Effect.flip(read("throw from an event handler"))).toEqual(
        expect.objectContaining({ reason: "crashed", message: "the document broke its decoder (thrown from an event handler)" })
      )
      expect(yield* Effect.flip(read("reject unawaited"))).toEqual(
        expect.objectContaining({ reason: "crashed", message: "the document broke its decoder (a promise nobody awaited)" })
      )
      expect((yield* readOrdinary).title).toBe("Hours")
    }).pipe(Effect.provide(hostile()))
  )

  it.scoped("a process that ended while it waited in the pool is replaced, and the next document is not blamed", () =>
    Effect.gen(function* () {
      yield* readOrdinary
      // the decoder process is this process's child: killed from outside, as an OOM killer would
      const children = execFileSync("pgrep", ["-P", String(process.pid)], { encoding: "utf8" }).trim().split("\n").map(Number)
      expect(children).toHaveLength(1)
      const gone = Effect.async<void>((resume) => {
        const poll = setInterval(() => {
          try {
            process.kill(children[0]!, 0)
          } catch {
            clearInterval(poll)
            resume(Effect.void)
          }
        }, 10)
        return Effect.sync(() => clearInterval(poll))
      })
      process.kill(children[0]!, "SIGKILL")
      yield* gone
      expect((yield* readOrdinary).title).toBe("Hours")
    }).pipe(Effect.provide(decoders()))
  )

  it.scoped("over the time limit (an endless loop): fails with a timeout, and the next document gets a fresh process", () =>
    Effect.gen(function* () {
      yield* readOrdinary
      const limits = Effect.map(TestClock.sleeps(), (deadlines) => Chunk.filter(deadlines, (at) => at === 30_000).length)
      const before = yield* limits
      const reading = yield* Effect.fork(Effect.flip(read("loop")))
      yield* eventually(limits, (n) => n > before, { label: "the loop's time limit set" })
      yield* TestClock.adjust("31 seconds")
      expect(yield* Fiber.join(reading)).toMatchObject({ reason: "timeout", message: "the document took longer than 30 s to read" })
      expect((yield* readOrdinary).title).toBe("Hours")
    }).pipe(Effect.provide(hostile()))
  )

  // the resident size is sampled on the live clock: this one test reads real time, bounded by the growth itself
  it.live("memory out of V8's heap (native, WASM) is bounded too", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(read("grow"))
      expect(error).toMatchObject({ reason: "memory", message: "the document needs more than 128 MB of memory to read" })
      expect((yield* readOrdinary).title).toBe("Hours")
    }).pipe(Effect.scoped, Effect.provide(hostile()))
  )
})
