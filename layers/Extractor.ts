/**
 * Extractor: what the untrusted inputs of a source hold (an HTML, PDF or text
 * document's readable text, a CSV's Q&A rows, an audio file's length), read
 * where no input can stall the service.
 *
 * Live (`layerThreads`): a bounded pool of worker threads. Each thread reads
 * one document at a time under a memory limit (V8's heap limit of the thread);
 * a document that takes longer than the time limit (by the Clock) has its thread
 * stopped, and one that exhausts the memory limit ends its thread: either way
 * the document fails with a reason and a fresh thread takes the next one. The
 * main thread only posts bytes and receives text, so the API of every workspace
 * answers as usual while the worst page is read.
 *
 * Inline (`extractor/Inline.ts`, for tests): the same readers on the calling
 * thread, without limits; its `extract` can be one that fails or dies on cue.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Pool from "effect/Pool"
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import type { AudioKind } from "./extractor/AudioDuration.js"
import type { CsvQa, CsvRowError } from "./extractor/Csv.js"
import type { Document, DocumentKind } from "./extractor/Documents.js"
import type { ExtractRequest, ThreadAnswers, ThreadReply, ThreadRequest } from "./extractor/Protocol.js"

export type { AudioKind, CsvQa, CsvRowError, Document, DocumentKind, ExtractRequest }

/**
 * Why a document yielded no text: `unreadable` (malformed, not what it claims to
 * be), `timeout` (over the time limit), `memory` (over the memory limit).
 */
export class ExtractError extends Data.TaggedError("ExtractError")<{
  readonly reason: "unreadable" | "timeout" | "memory"
  readonly message: string
}> {}

export interface ExtractorShape {
  /** A document's readable text. */
  readonly extract: (request: ExtractRequest) => Effect.Effect<Document, ExtractError>
  /** A `csv_qa` source's rows, or every bad row with its line. */
  readonly csvQa: (content: string) => Effect.Effect<Either.Either<ReadonlyArray<CsvQa>, ReadonlyArray<CsvRowError>>, ExtractError>
  /** How long an audio file plays, from its headers (none when they do not tell). */
  readonly audioSeconds: (bytes: Uint8Array, kind: AudioKind) => Effect.Effect<Option.Option<number>, ExtractError>
}

export class Extractor extends Context.Tag("Layers/Extractor")<Extractor, ExtractorShape>() {}

export interface ThreadOptions {
  /** Documents read at once (threads in the pool). */
  readonly threads: number
  /** Longest a document may take to read, by the Clock. */
  readonly timeoutMillis: number
  /** Heap limit of each thread, in megabytes. */
  readonly memoryMb: number
}

/**
 * Bundled (`dist/`): the thread's own entry beside this chunk. From sources
 * (tsx, vitest): the TypeScript file, loaded through tsx's loader registered in
 * the thread itself (a worker does not inherit the main thread's loader).
 */
const startThread = (memoryMb: number): Worker => {
  // what a document's reading leaves is garbage by its reply: a small young generation is collected often
  // and cheaply, where a large one stays resident in each thread of the pool
  const resourceLimits = { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: Math.min(8, memoryMb) }
  if (!import.meta.url.endsWith(".ts")) return new Worker(new URL("./extract-worker.mjs", import.meta.url), { resourceLimits })
  const tsxPackage = createRequire(import.meta.url).resolve("tsx/package.json")
  const tsx = new URL("dist/esm/api/index.mjs", pathToFileURL(tsxPackage)).href
  const source = new URL("./extractor/Thread.ts", import.meta.url).href
  const boot = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(source)}) })`
  return new Worker(boot, { eval: true, resourceLimits })
}

const megabytes = (n: number) => `${n} MB`

/** One request on one thread: its reply, or how the thread ended without one. */
const ask = <T extends ThreadRequest>(thread: Worker, request: T, memoryMb: number): Effect.Effect<ThreadAnswers[T["_tag"]], ExtractError> =>
  Effect.async<ThreadAnswers[T["_tag"]], ExtractError>((resume) => {
    // the first of the three ends the request: the other listeners go with it (the thread serves many requests)
    const end = (outcome: Effect.Effect<ThreadAnswers[T["_tag"]], ExtractError>) => {
      stopListening()
      resume(outcome)
    }
    const onMessage = (reply: ThreadReply) =>
      end(
        reply.ok
          ? Effect.succeed(reply.value as ThreadAnswers[T["_tag"]])
          : Effect.fail(new ExtractError({ reason: "unreadable", message: reply.message }))
      )
    const onError = (error: Error & { code?: string }) =>
      end(
        Effect.fail(
          error.code === "ERR_WORKER_OUT_OF_MEMORY"
            ? new ExtractError({ reason: "memory", message: `the document needs more than ${megabytes(memoryMb)} of memory to read` })
            : new ExtractError({ reason: "unreadable", message: "the document could not be read" })
        )
      )
    const onExit = () => end(Effect.fail(new ExtractError({ reason: "unreadable", message: "the document could not be read" })))
    const stopListening = () => {
      thread.off("message", onMessage)
      thread.off("error", onError)
      thread.off("exit", onExit)
    }
    thread.on("message", onMessage)
    thread.on("error", onError)
    thread.on("exit", onExit)
    thread.postMessage(request)
    return Effect.sync(stopListening)
  })

/** A pool of extraction threads, started on demand; each is replaced two minutes after it started. */
export const layerThreads = (options: ThreadOptions): Layer.Layer<Extractor> =>
  Layer.scoped(
    Extractor,
    Effect.gen(function* () {
      const pool = yield* Pool.makeWithTTL({
        acquire: Effect.acquireRelease(
          Effect.sync(() => startThread(options.memoryMb)),
          (thread) => Effect.promise(() => thread.terminate())
        ),
        min: 0,
        max: options.threads,
        // by creation, not usage: a thread is replaced two minutes after it started (its heap starts afresh), and
        // no timer runs while there is none (usage TTL wakes every period for ever, also with an empty pool)
        timeToLive: Duration.minutes(2),
        timeToLiveStrategy: "creation"
      })
      const timeout = Duration.millis(options.timeoutMillis)
      const seconds = Math.round(options.timeoutMillis / 1000)
      const run = <T extends ThreadRequest>(request: T) =>
        Effect.scoped(
          Effect.gen(function* () {
            const thread = yield* Pool.get(pool)
            return yield* ask(thread, request, options.memoryMb).pipe(
              Effect.timeoutFail({
                duration: timeout,
                onTimeout: () => new ExtractError({ reason: "timeout", message: `the document took longer than ${seconds} s to read` })
              }),
              // a thread that did not answer may still be busy or dead: stop it now, the pool starts a fresh one
              Effect.tapError((error) =>
                error.reason === "unreadable" && thread.threadId !== -1
                  ? Effect.void
                  : Effect.zipRight(Effect.promise(() => thread.terminate()), Pool.invalidate(pool, thread))
              ),
              Effect.onInterrupt(() => Effect.zipRight(Effect.promise(() => thread.terminate()), Pool.invalidate(pool, thread)))
            )
          })
        )
      return Extractor.of({
        extract: (request) => run({ _tag: "Document", request }),
        csvQa: (content) =>
          Effect.map(run({ _tag: "CsvQa", content }), (parsed) => ("rows" in parsed ? Either.right(parsed.rows) : Either.left(parsed.errors))),
        audioSeconds: (bytes, audio) => Effect.map(run({ _tag: "AudioSeconds", bytes, audio }), Option.fromNullable)
      })
    })
  )
