/**
 * Text drawn in an image, read inside a decoder process (`Child.ts`), never in
 * the service's: sharp (libvips, native) checks and shrinks the image, and
 * tesseract.js (its own worker thread, WASM) recognises the text with the
 * English and Spanish traineddata shipped in npm. A malformed image may make
 * either of them throw, abort or crash: in a decoder process that costs the
 * one image.
 */
import { Unreadable } from "./Documents.js"

/** Images this size or larger are downscaled before recognition. */
export const downscaleBytes = 4 * 1024 * 1024
/** Longest side after downscaling: still well above what tesseract needs for body text. */
export const downscaleSide = 2500
/**
 * Most pixels an image may declare: the header is read before anything is decoded, so an image that claims
 * tens of thousands of pixels a side over a few bytes is refused before a decoder allocates for it.
 */
export const maxPixels = 50_000_000

const formats = new Set(["png", "jpeg", "webp"])

// loaded on the first image: a process that reads only documents never pays for them
const loadSharp = () => import("sharp").then((module) => module.default)
const loadTesseract = () => import("tesseract.js").then((module) => module.default)

/**
 * The bytes tesseract reads: PNG, JPEG and WEBP are checked by their content and their declared size;
 * from 4 MB up the image is turned upright, shrunk to fit `downscaleSide` (never enlarged) and greyscaled,
 * so a phone photo does not cost a minute.
 */
export const prepare = async (image: Uint8Array): Promise<{ readonly bytes: Uint8Array; readonly downscaled: boolean }> => {
  const sharp = await loadSharp()
  // the header alone (nothing is decoded): its declared size is checked below, with a reason
  const metadata = await sharp(image, { limitInputPixels: false })
    .metadata()
    .catch(() => {
      throw new Unreadable("the file is not a readable image")
    })
  if (metadata.format === undefined || !formats.has(metadata.format)) {
    throw new Unreadable(`unsupported image format ${metadata.format ?? "unknown"}: PNG, JPEG or WEBP expected`)
  }
  const pixels = (metadata.width ?? 0) * (metadata.height ?? 0)
  if (pixels > maxPixels) {
    throw new Unreadable(`the image declares ${metadata.width} × ${metadata.height} pixels; at most ${maxPixels / 1_000_000} million are read`)
  }
  if (image.byteLength < downscaleBytes) return { bytes: image, downscaled: false }
  const bytes = await sharp(image, { limitInputPixels: maxPixels })
    .rotate()
    .resize({ width: downscaleSide, height: downscaleSide, fit: "inside", withoutEnlargement: true })
    .greyscale()
    .png()
    .toBuffer()
    .catch(() => {
      throw new Unreadable("the image could not be decoded")
    })
  return { bytes, downscaled: true }
}

type TesseractWorker = Awaited<ReturnType<Awaited<ReturnType<typeof loadTesseract>>["createWorker"]>>

/** Where the traineddata of both languages is linked under one folder (made by the service, see `layers/Decoders.ts`). */
export interface Languages {
  readonly dir: string
  readonly gzip: boolean
  readonly codes: ReadonlyArray<string>
}

let worker: Promise<TesseractWorker> | undefined

/**
 * One eng+spa worker per process, started on its first image. Its errors are handed to the recognition that
 * caused them (by default tesseract.js throws them from an event handler, which would end the process).
 */
const tesseract = (languages: Languages) => {
  worker ??= loadTesseract().then((Tesseract) =>
    Tesseract.createWorker([...languages.codes], Tesseract.OEM.LSTM_ONLY, {
      langPath: languages.dir,
      gzip: languages.gzip,
      cacheMethod: "none",
      errorHandler: () => {}
    })
  )
  return worker
}

/** The text in an image; throws `Unreadable` with a reason a person understands. */
export const recognize = async (image: Uint8Array, languages: Languages): Promise<string> => {
  const { bytes } = await prepare(image)
  const ocr = await tesseract(languages)
  try {
    const result = await ocr.recognize(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    return result.data.text.replace(/[ \t]+\n/g, "\n").trim()
  } catch (cause) {
    // the worker may be left in any state by an image it choked on: the next image gets a new one
    worker = undefined
    void ocr.terminate().catch(() => {})
    const said = String(cause instanceof Error ? cause.message : cause).replace(/^(Error: )+/, "")
    // leptonica's "Error attempting to read image": the header parsed, the pixels did not
    throw new Unreadable(
      /attempting to read image/i.test(said) ? "the image could not be read: its pixel data is damaged or cut short" : `the image could not be read: ${said}`
    )
  }
}
