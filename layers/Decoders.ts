/**
 * Decoders: where untrusted bytes are read (documents, CSVs, audio headers,
 * images' text), in a pool of child processes, so that a decoder's failure costs
 * the one input it was reading and never the service.
 *
 * A worker thread is not enough: sharp (libvips) is native code and tesseract.js
 * throws from an event handler, and a native abort or an uncaught error ends
 * every thread of its process. Each decoder process (`extractor/Child.ts`)
 * reads one input at a time; the pool keeps them between inputs (an ordinary
 * document pays one message each way, an image a warm OCR engine) and replaces
 * each a few minutes after it started. An input:
 * - that its reader refuses fails `unreadable` with the reader's reason, and the
 *   process reads the next one;
 * - that breaks its decoder (an error nothing caught, a crash, a signal) fails
 *   `crashed`, and a fresh process reads the next one;
 * - that takes longer than the time limit (by the Clock) fails `timeout`, and
 *   its process is killed;
 * - that takes more memory than the limit fails `memory`: a V8 heap limit in the
 *   process, and its resident size watched (native and WASM memory too), grown
 *   past the limit over what the process held before the input.
 *
 * `Extractor.layerDecoders` and `Ocr.layerDecoders` are the services built on it.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Pool from "effect/Pool"
import * as Schema from "effect/Schema"
import { type ChildProcess, fork } from "node:child_process"
import { readFileSync } from "node:fs"
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { Languages } from "./extractor/Images.js"
import { randomBytes } from "node:crypto"
import {
  bytesOf,
  type DecodeAnswers,
  type DecodeMessage,
  type DecodePiece,
  type DecodeReply,
  type DecodeRequest,
  isPiece,
  nounOf,
  ready,
  withBytes
} from "./extractor/Protocol.js"

/**
 * Why an input yielded nothing: `unreadable` (malformed, not what it claims to be), `crashed` (it broke its
 * decoder), `timeout` (over the time limit), `memory` (over the memory limit). `message` is for the person
 * who added it.
 */
export class ExtractError extends Data.TaggedError("ExtractError")<{
  readonly reason: "unreadable" | "crashed" | "timeout" | "memory"
  readonly message: string
}> {}

export interface DecodersShape {
  readonly decode: <T extends DecodeRequest>(request: T) => Effect.Effect<DecodeAnswers[T["_tag"]], ExtractError>
}

export class Decoders extends Context.Tag("Layers/Decoders")<Decoders, DecodersShape>() {}

export interface ProcessOptions {
  /** Inputs read at once (processes in the pool). */
  readonly processes: number
  /** Longest an input may take to read, by the Clock. */
  readonly timeoutMillis: number
  /** Memory an input may take to read, in megabytes. */
  readonly memoryMb: number
  /** Where the folder of traineddata links is made (default: the system's temporary folder). */
  readonly languagesParent?: string | undefined
  /**
   * The module each process runs (default: the service's readers, `extractor/Child.ts`); tests give one that
   * breaks on cue, built on the same `extractor/Serve.ts`.
   */
  readonly entry?: URL | undefined
}

const Descriptor = Schema.Struct({ code: Schema.String, gzip: Schema.Boolean, langPath: Schema.String })

/**
 * tesseract.js reads every language from one `langPath`, and the two packages ship in two folders: a scoped
 * temporary folder links each package's file (found by the package's own `langPath` and `gzip`) under one path.
 */
export const languageFolder = (parent: string) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const require = createRequire(import.meta.url)
      const descriptors = yield* Effect.forEach(["@tesseract.js-data/eng", "@tesseract.js-data/spa"], (pkg) =>
        Schema.decodeUnknown(Descriptor)(require(pkg))
      )
      const gzip = descriptors.every((d) => d.gzip)
      if (!descriptors.every((d) => d.gzip === gzip)) return yield* Effect.dieMessage("traineddata packages differ in gzip")
      const dir = yield* Effect.promise(() => mkdtemp(join(parent, "traineddata-")))
      const suffix = gzip ? ".traineddata.gz" : ".traineddata"
      yield* Effect.forEach(descriptors, (d) => Effect.promise(() => symlink(join(d.langPath, `${d.code}${suffix}`), join(dir, `${d.code}${suffix}`))))
      return { dir, gzip, codes: descriptors.map((d) => d.code) } satisfies Languages
    }).pipe(Effect.orDie),
    ({ dir }) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

/** One decoder process, what it wrote to stderr last, and whether V8 said its heap limit was reached. */
interface Decoder {
  readonly process: ChildProcess
  stderrTail: string
  outOfHeap: boolean
}

/**
 * Bundled (`dist/`): the process's own entry beside this chunk. From sources (tsx, vitest): the TypeScript
 * file, through tsx's loader.
 */
const entryOf = (given: URL | undefined): { readonly path: string; readonly execArgv: ReadonlyArray<string> } => {
  const module = given ?? new URL(import.meta.url.endsWith(".ts") ? "./extractor/Child.ts" : "./decoder-process.mjs", import.meta.url)
  // the service's own flags (an `--import` hook, say), but not its debugger's port
  if (!module.pathname.endsWith(".ts")) return { path: fileURLToPath(module), execArgv: process.execArgv.filter((flag) => !flag.startsWith("--inspect")) }
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx/package.json"))
  return { path: fileURLToPath(module), execArgv: ["--import", new URL("dist/loader.mjs", tsx).href] }
}

const unstarted = new ExtractError({ reason: "crashed", message: "the decoder process could not start" })
const ended = new ExtractError({ reason: "crashed", message: "the decoder process ended before it was asked" })

/** A decoder process, answering once it listens. */
const start = (options: ProcessOptions, languages: Languages): Effect.Effect<Decoder, ExtractError> =>
  Effect.async<Decoder, ExtractError>((resume) => {
    const { execArgv, path } = entryOf(options.entry)
    const child = fork(path, [JSON.stringify(languages)], {
      execArgv: [...execArgv, `--max-old-space-size=${options.memoryMb}`],
      serialization: "advanced",
      stdio: ["ignore", "ignore", "pipe", "ipc"]
    })
    const decoder: Decoder = { process: child, stderrTail: "", outOfHeap: false }
    // an `error` event nobody listens to would be thrown in the service: a send to a process that just died, a
    // kill that failed. Each shows up anyway as the process's end, which `ask` answers.
    child.on("error", () => {})
    child.stderr!.on("error", () => {})
    // kept short and always drained: a full pipe would stall the process
    child.stderr!.on("data", (chunk: Buffer) => {
      const text = decoder.stderrTail + chunk.toString("utf8")
      if (/JavaScript heap out of memory|Reached heap limit/.test(text)) decoder.outOfHeap = true
      decoder.stderrTail = text.slice(-2048)
    })
    const onMessage = (message: unknown) => {
      if (message !== ready) return
      stop()
      resume(Effect.succeed(decoder))
    }
    const onExit = () => {
      stop()
      resume(Effect.fail(unstarted))
    }
    const stop = () => {
      child.off("message", onMessage)
      child.off("exit", onExit)
      child.off("error", onExit)
    }
    child.on("message", onMessage)
    child.on("exit", onExit)
    child.on("error", onExit)
    return Effect.sync(() => {
      stop()
      child.kill("SIGKILL")
    })
  })

const running = (decoder: Decoder) => decoder.process.exitCode === null && decoder.process.signalCode === null

/** Ends a process for good, and waits until it has. */
const kill = (decoder: Decoder) =>
  Effect.async<void>((resume) => {
    if (!running(decoder)) return resume(Effect.void)
    decoder.process.once("exit", () => resume(Effect.void))
    decoder.process.kill("SIGKILL")
  })

const megabytes = (n: number) => `${n} MB`

const outOfMemory = (request: DecodeRequest, memoryMb: number) =>
  new ExtractError({ reason: "memory", message: `the ${nounOf(request)} needs more than ${megabytes(memoryMb)} of memory to read` })

/** One request on one process: its answer, or how the process ended without one. */
/**
 * Inputs from this size on cross to the decoder through a temporary file (written off the main thread, removed
 * when the read's scope closes): structured clone copies a message whole on the main thread, and tens of
 * megabytes copied at once would hold up every request of the service.
 */
const spillBytes = 1024 * 1024

/** The message that carries `request` to a decoder: its bytes spilled to a file when they are large. */
const messageOf = (request: DecodeRequest) => {
  const bytes = bytesOf(request)
  if (bytes === undefined || bytes.length < spillBytes) return Effect.succeed<DecodeMessage>({ request })
  return Effect.acquireRelease(
    Effect.promise(async () => {
      const path = join(tmpdir(), `decoder-input-${randomBytes(8).toString("hex")}`)
      await writeFile(path, bytes, { mode: 0o600 })
      return path
    }),
    (path) => Effect.promise(() => rm(path, { force: true }))
  ).pipe(Effect.map((path): DecodeMessage => ({ request: withBytes(request, new Uint8Array(0)), spilled: path })))
}

const ask = <T extends DecodeRequest>(decoder: Decoder, request: T, message: DecodeMessage, memoryMb: number) =>
  Effect.async<DecodeAnswers[T["_tag"]], ExtractError>((resume) => {
    const child = decoder.process
    let ended = false
    const end = (outcome: Effect.Effect<DecodeAnswers[T["_tag"]], ExtractError>) => {
      if (ended) return
      ended = true
      stop()
      resume(outcome)
    }
    // the pieces of the answer's text, sent before it (`answerPieceChars`)
    const pieces: Array<string> = []
    const onMessage = (reply: DecodeReply | DecodePiece) => {
      if (isPiece(reply)) return void pieces.push(reply.piece)
      end(
        reply.ok
          ? Effect.succeed(
              (reply.pieced === true ? { ...(reply.value as object), text: pieces.join("") } : reply.value) as DecodeAnswers[T["_tag"]]
            )
          : Effect.fail(new ExtractError({ reason: reply.fatal === true ? "crashed" : "unreadable", message: reply.message }))
      )
    }
    const onExit = () =>
      end(
        Effect.fail(
          decoder.outOfHeap
            ? outOfMemory(request, memoryMb)
            : new ExtractError({ reason: "crashed", message: `processing this ${nounOf(request)} stopped its decoder` })
        )
      )
    const stop = () => {
      child.off("message", onMessage)
      child.off("close", onExit)
    }
    child.on("message", onMessage)
    // "close", not "exit": it comes once the channel is read to its end, after a last answer sent before exiting
    child.on("close", onExit)
    if (!running(decoder)) onExit()
    else child.send(message, (error) => (error === null ? undefined : onExit()))
    return Effect.sync(stop)
  })

/**
 * Resident memory of a process (Linux's `/proc`); none where the system does not tell. Read synchronously: the
 * file is made by the kernel on the read, never waits on a disk, and the thread pool's round trips cost more.
 */
const residentBytes = (pid: number) =>
  Effect.sync(() => {
    try {
      const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
      return kb === undefined ? undefined : Number(kb) * 1024
    } catch {
      return undefined
    }
  })

/** Fails once the process holds more than `limitBytes` over what it held when the input was sent. */
const watchMemory = (decoder: Decoder, request: DecodeRequest, memoryMb: number): Effect.Effect<never, ExtractError> =>
  Effect.gen(function* () {
    const pid = decoder.process.pid
    const before = pid === undefined ? undefined : yield* residentBytes(pid)
    if (pid === undefined || before === undefined) return yield* Effect.never
    const limit = before + memoryMb * 1024 * 1024
    // a process that is gone is not watched further: its end is the answer's business
    const watch: Effect.Effect<never, ExtractError> = Effect.flatMap(residentBytes(pid), (bytes) =>
      bytes === undefined
        ? Effect.never
        : bytes > limit
          ? Effect.fail(outOfMemory(request, memoryMb))
          : Effect.zipRight(Effect.sleep("200 millis"), Effect.suspend(() => watch))
    )
    return yield* watch
  })

/** A pool of decoder processes, started on demand; each is replaced five minutes after it started. */
export const layerProcesses = (options: ProcessOptions): Layer.Layer<Decoders> =>
  Layer.scoped(
    Decoders,
    Effect.gen(function* () {
      const languages = yield* languageFolder(options.languagesParent ?? tmpdir())
      const pool = yield* Pool.makeWithTTL({
        acquire: Effect.acquireRelease(start(options, languages), kill),
        min: 0,
        max: options.processes,
        // by creation, not usage: no timer runs while the pool is empty; a process's heap and OCR engine start
        // afresh now and then, and starting one (and its OCR engine) costs more than a thread did
        timeToLive: Duration.minutes(5),
        timeToLiveStrategy: "creation"
      })
      const timeout = Duration.millis(options.timeoutMillis)
      const seconds = Math.round(options.timeoutMillis / 1000)
      // a process that ended while it waited in the pool (killed from outside, say) is not blamed on the input:
      // it goes back invalidated when the read's scope closes, and the read is tried again (see `decode`)
      const live = Effect.flatMap(Pool.get(pool), (decoder) =>
        running(decoder) ? Effect.succeed(decoder) : Effect.zipRight(Pool.invalidate(pool, decoder), Effect.fail(ended))
      )
      const read = <T extends DecodeRequest>(request: T) =>
        Effect.scoped(
          Effect.gen(function* () {
            const message = yield* messageOf(request)
            const decoder = yield* live
            // a process that did not answer, or broke, is stopped now and the pool starts a fresh one
            const discard = Effect.zipRight(kill(decoder), Pool.invalidate(pool, decoder))
            return yield* Effect.raceFirst(ask(decoder, request, message, options.memoryMb), watchMemory(decoder, request, options.memoryMb)).pipe(
              Effect.timeoutFail({
                duration: timeout,
                onTimeout: () => new ExtractError({ reason: "timeout", message: `the ${nounOf(request)} took longer than ${seconds} s to read` })
              }),
              Effect.tapError((error) =>
                error.reason === "unreadable"
                  ? Effect.void
                  : Effect.zipRight(
                      Effect.logWarning(`decoder process ${decoder.process.pid} stopped: ${error.message}`).pipe(
                        Effect.annotateLogs({ reason: error.reason, stderr: decoder.stderrTail.trim().split("\n").at(-1) ?? "" })
                      ),
                      discard
                    )
              ),
              Effect.onInterrupt(() => discard)
            )
          })
        )
      // the memory watch and the time limit end by interrupting what they race: that runs interruptibly in a
      // fiber of its own, also for a caller that is not (a handler that runs to completion waits for the answer)
      const decode = <T extends DecodeRequest>(request: T) =>
        Effect.flatMap(
          Effect.fork(Effect.interruptible(Effect.retry(read(request), { times: 3, while: (error) => error === ended }))),
          Fiber.join
        )
      return Decoders.of({ decode })
    })
  )
