/**
 * Text in images. Live: tesseract.js with the English and Spanish traineddata
 * shipped in npm (`@tesseract.js-data/eng`, `.../spa`): nothing is downloaded
 * and nothing is cached on disk. Fixed: a given text, for tests.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { mkdtemp, rm, symlink } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"

// sharp (a native addon with libvips) and tesseract.js are loaded on the first
// image, not at start: most instances never see one, and each costs resident memory.
const loadSharp = Effect.promise(() => import("sharp")).pipe(Effect.map((module) => module.default))
const loadTesseract = Effect.promise(() => import("tesseract.js")).pipe(Effect.map((module) => module.default))

export class OcrError extends Schema.TaggedError<OcrError>()("OcrError", { message: Schema.String }) {}

export interface OcrShape {
  /** Text in an image (PNG, JPEG, WEBP); images of 4 MB or more are downscaled first. */
  readonly recognize: (image: Uint8Array) => Effect.Effect<string, OcrError>
}

export class Ocr extends Context.Tag("Layers/Ocr")<Ocr, OcrShape>() {}

/** Images this size or larger are downscaled before recognition. */
export const downscaleBytes = 4 * 1024 * 1024
/** Longest side after downscaling: still well above what tesseract needs for body text. */
export const downscaleSide = 2500

const formats = new Set(["png", "jpeg", "webp"])

/**
 * The bytes tesseract reads: PNG, JPEG and WEBP are checked by their content;
 * from 4 MB up the image is turned upright, shrunk to fit `downscaleSide`
 * (never enlarged) and greyscaled, so a phone photo does not cost a minute.
 */
export const prepare = (image: Uint8Array): Effect.Effect<{ readonly bytes: Uint8Array; readonly downscaled: boolean }, OcrError> =>
  Effect.gen(function* () {
    const sharp = yield* loadSharp
    const metadata = yield* Effect.tryPromise({
      try: () => sharp(image).metadata(),
      catch: () => new OcrError({ message: "the file is not a readable image" })
    })
    if (metadata.format === undefined || !formats.has(metadata.format)) {
      return yield* new OcrError({ message: `unsupported image format ${metadata.format ?? "unknown"}: PNG, JPEG or WEBP expected` })
    }
    if (image.byteLength < downscaleBytes) return { bytes: image, downscaled: false }
    const bytes = yield* Effect.tryPromise({
      try: () =>
        sharp(image)
          .rotate()
          .resize({ width: downscaleSide, height: downscaleSide, fit: "inside", withoutEnlargement: true })
          .greyscale()
          .png()
          .toBuffer(),
      catch: () => new OcrError({ message: "the image could not be downscaled" })
    })
    return { bytes, downscaled: true }
  })

const Descriptor = Schema.Struct({ code: Schema.String, gzip: Schema.Boolean, langPath: Schema.String })

/**
 * A worker reads every language from one `langPath`, and the two packages
 * ship in two folders: so a scoped temporary folder links each package's file
 * (found by the package's own `langPath` and `gzip`) under one path.
 */
const languageFolder = (parent: string) => Effect.acquireRelease(
  Effect.gen(function* () {
    const require = createRequire(import.meta.url)
    const descriptors = yield* Effect.forEach(["@tesseract.js-data/eng", "@tesseract.js-data/spa"], (pkg) =>
      Schema.decodeUnknown(Descriptor)(require(pkg))
    )
    const gzip = descriptors.every((d) => d.gzip)
    if (!descriptors.every((d) => d.gzip === gzip)) return yield* Effect.dieMessage("traineddata packages differ in gzip")
    const dir = yield* Effect.promise(() => mkdtemp(join(parent, "traineddata-")))
    const suffix = gzip ? ".traineddata.gz" : ".traineddata"
    yield* Effect.forEach(descriptors, (d) =>
      Effect.promise(() => symlink(join(d.langPath, `${d.code}${suffix}`), join(dir, `${d.code}${suffix}`)))
    )
    return { dir, gzip, codes: descriptors.map((d) => d.code) }
  }).pipe(Effect.orDie),
  ({ dir }) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/**
 * One eng+spa worker per layer, terminated with the layer's scope; recognitions take turns on it. Its
 * temporary language folder is made under `parent` (tests pass a folder of their own to watch).
 */
export const layerTesseractIn = (parent: string): Layer.Layer<Ocr> => Layer.scoped(
  Ocr,
  Effect.gen(function* () {
    const Tesseract = yield* loadTesseract
    const worker = yield* Effect.acquireRelease(
      Effect.scoped(
        Effect.flatMap(languageFolder(parent), (folder) =>
          Effect.tryPromise(() =>
            Tesseract.createWorker(folder.codes, Tesseract.OEM.LSTM_ONLY, {
              langPath: folder.dir,
              gzip: folder.gzip,
              cacheMethod: "none"
            })
          )
        )
      ).pipe(Effect.orDie),
      (worker) => Effect.promise(() => worker.terminate()).pipe(Effect.ignore)
    )
    const turn = yield* Effect.makeSemaphore(1)
    return Ocr.of({
      recognize: (image) =>
        Effect.gen(function* () {
          const { bytes } = yield* prepare(image)
          const result = yield* Effect.tryPromise({
            try: () => worker.recognize(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)),
            catch: (error) => new OcrError({ message: `recognition failed: ${error instanceof Error ? error.message : String(error)}` })
          }).pipe(turn.withPermits(1))
          return result.data.text.replace(/[ \t]+\n/g, "\n").trim()
        })
    })
  })
)

export const layerTesseract: Layer.Layer<Ocr> = layerTesseractIn(tmpdir())

/** Tests: every input reads as `text`. */
export const layerFixed = (text: string): Layer.Layer<Ocr> =>
  Layer.succeed(Ocr, Ocr.of({ recognize: () => Effect.succeed(text) }))
