import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { crc32, deflateSync } from "node:zlib"
import sharp from "sharp"
import * as Layer from "effect/Layer"
import * as Decoders from "../../layers/Decoders.js"
import * as Images from "../../layers/extractor/Images.js"
import * as Ocr from "../../layers/Ocr.js"

/** A PNG chunk; its CRC right, or zeros when `brokenCrc`. */
const chunk = (type: string, data: Buffer, brokenCrc = false) => {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, "latin1"), data])
  const crc = Buffer.alloc(4)
  if (!brokenCrc) crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

/** A PNG signature and an IHDR chunk declaring `width` × `height` 8-bit RGB pixels. */
const pngHeader = (width: number, height: number, brokenCrc = false) => {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8
  ihdr[9] = 2
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", ihdr, brokenCrc)])
}

/** A header declaring `width` × `height` over a few bytes of pixel data. */
const hugePng = (width: number, height: number) =>
  new Uint8Array(Buffer.concat([pngHeader(width, height), chunk("IDAT", deflateSync(Buffer.alloc(100))), chunk("IEND", Buffer.alloc(0))]))

/** The 73 bytes that once stopped the service: a 4000 × 4000 header and a cut IDAT, every CRC zeros. */
const crcBrokenPng = () => {
  const head = pngHeader(4000, 4000, true)
  const idat = deflateSync(Buffer.alloc(5000)).subarray(0, 73 - head.length - 12)
  return new Uint8Array(Buffer.concat([head, chunk("IDAT", idat, true)]))
}

/** A PNG with `lines` drawn in black on white, rendered from SVG here (DejaVu Sans ships with the system). */
const drawn = (lines: ReadonlyArray<string>, options: { width: number; fontSize: number; uncompressed?: boolean }) => {
  const height = Math.round(options.fontSize * 1.6 * (lines.length + 1))
  const text = lines
    .map((line, i) => `<text x="${options.fontSize}" y="${Math.round(options.fontSize * 1.6 * (i + 1))}">${line}</text>`)
    .join("")
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${options.width}" height="${height}">
    <rect width="100%" height="100%" fill="white"/>
    <g font-family="DejaVu Sans" font-size="${options.fontSize}" fill="black">${text}</g></svg>`
  return Effect.promise(() =>
    sharp(Buffer.from(svg))
      .png(options.uncompressed ? { compressionLevel: 0 } : {})
      .toBuffer()
      .then((b) => new Uint8Array(b))
  )
}

/** sharp and tesseract.js in a decoder process, as the service runs them. */
const isolated = (languagesParent?: string) =>
  Ocr.layerDecoders.pipe(Layer.provide(Decoders.layerProcesses({ processes: 1, timeoutMillis: 60_000, memoryMb: 256, languagesParent })))

const prepare = (image: Uint8Array) => Effect.tryPromise({ try: () => Images.prepare(image), catch: (error) => error as Error })

const words = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}%]+/gu, " ").trim()

describe("Ocr (sharp and tesseract.js in a decoder process, traineddata from npm)", () => {
  it.scoped(
    "reads English and Spanish text drawn into PNG, WEBP and JPEG images",
    () =>
      Effect.gen(function* () {
        const ocr = yield* Ocr.Ocr
        const english = yield* drawn(["Refunds within 30 days", "Support opens at 9 am"], { width: 1000, fontSize: 48 })
        expect(words(yield* ocr.recognize(english))).toBe("refunds within 30 days support opens at 9 am")
        const webp = yield* Effect.promise(() => sharp(english).webp({ quality: 90 }).toBuffer())
        expect(words(yield* ocr.recognize(new Uint8Array(webp)))).toBe("refunds within 30 days support opens at 9 am")
        const spanish = yield* drawn(["Devolución gratuita", "Envío en 48 horas"], { width: 1000, fontSize: 48 })
        const jpeg = yield* Effect.promise(() => sharp(spanish).jpeg({ quality: 90 }).toBuffer())
        expect(words(yield* ocr.recognize(new Uint8Array(jpeg)))).toBe("devolución gratuita envío en 48 horas")
        // cacheMethod "none": the traineddata is never written to the working directory
        expect(existsSync("eng.traineddata")).toBe(false)
        expect(existsSync("spa.traineddata")).toBe(false)
      }).pipe(Effect.provide(isolated())),
    60_000
  )

  it.scoped(
    "an image of 4 MB or more is downscaled first and still read",
    () =>
      Effect.gen(function* () {
        const ocr = yield* Ocr.Ocr
        const big = yield* drawn(["Large scanned page"], { width: 4000, fontSize: 220, uncompressed: true })
        expect(big.byteLength).toBeGreaterThanOrEqual(Images.downscaleBytes)
        const prepared = yield* prepare(big)
        expect(prepared.downscaled).toBe(true)
        const size = yield* Effect.promise(() => sharp(prepared.bytes).metadata())
        expect(Math.max(size.width ?? 0, size.height ?? 0)).toBe(Images.downscaleSide)
        expect(prepared.bytes.byteLength).toBeLessThan(Images.downscaleBytes)
        expect(words(yield* ocr.recognize(big))).toBe("large scanned page")
        // under 4 MB the bytes go as they are
        const small = yield* drawn(["x"], { width: 200, fontSize: 40 })
        expect((yield* prepare(small)).downscaled).toBe(false)
      }).pipe(Effect.provide(isolated())),
    60_000
  )

  it.effect("the pool's temporary traineddata folder lives while the pool does, and is gone when its scope closes", () =>
    Effect.gen(function* () {
      // a parent of its own: other tests and processes make and remove such folders in the shared tmpdir
      const parent = mkdtempSync(join(tmpdir(), "ocr-test-"))
      const folders = () => readdirSync(parent)
      const during = yield* Effect.map(Ocr.Ocr, () => folders()).pipe(Effect.provide(isolated(parent)))
      expect(during).toHaveLength(1)
      expect(folders()).toEqual([])
      rmSync(parent, { recursive: true })
    }), 60_000)

  it.effect("bytes that are no PNG, JPEG or WEBP, or that declare too many pixels, are refused with a reason", () =>
    Effect.gen(function* () {
      const notImage = yield* Effect.either(prepare(new TextEncoder().encode("%PDF-1.7 not an image")))
      expect(Either.isLeft(notImage) && notImage.left.message).toBe("the file is not a readable image")
      const gif = yield* Effect.promise(() =>
        sharp({ create: { width: 4, height: 4, channels: 3, background: "white" } }).gif().toBuffer()
      )
      const refused = yield* Effect.either(prepare(new Uint8Array(gif)))
      expect(Either.isLeft(refused) && refused.left.message).toContain("unsupported image format gif")
      const huge = yield* Effect.either(prepare(hugePng(60_000, 60_000)))
      expect(Either.isLeft(huge) && huge.left.message).toBe("the image declares 60000 × 60000 pixels; at most 50 million are read")
    }))

  it.scoped("an image whose decoding fails (the 73-byte PNG with broken CRCs) fails alone, and the next image is read", () =>
    Effect.gen(function* () {
      const ocr = yield* Ocr.Ocr
      const broken = yield* Effect.flip(ocr.recognize(crcBrokenPng()))
      expect(broken).toMatchObject({ _tag: "OcrError", message: "the image could not be read: its pixel data is damaged or cut short" })
      const next = yield* drawn(["Open nine to five"], { width: 800, fontSize: 48 })
      expect(words(yield* ocr.recognize(next))).toBe("open nine to five")
    }).pipe(Effect.provide(isolated())), 60_000)

  it.effect("the fixed layer returns its text", () =>
    Effect.gen(function* () {
      const ocr = yield* Ocr.Ocr
      expect(yield* ocr.recognize(new Uint8Array([1, 2, 3]))).toBe("fixed text")
    }).pipe(Effect.provide(Ocr.layerFixed("fixed text"))))
})
