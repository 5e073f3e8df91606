import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import sharp from "sharp"
import * as Ocr from "../../layers/Ocr.js"

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

const words = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}%]+/gu, " ").trim()

describe("Ocr (tesseract.js, traineddata from npm)", () => {
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
      }).pipe(Effect.provide(Ocr.layerTesseract)),
    60_000
  )

  it.scoped(
    "an image of 4 MB or more is downscaled first and still read",
    () =>
      Effect.gen(function* () {
        const ocr = yield* Ocr.Ocr
        const big = yield* drawn(["Large scanned page"], { width: 4000, fontSize: 220, uncompressed: true })
        expect(big.byteLength).toBeGreaterThanOrEqual(Ocr.downscaleBytes)
        const prepared = yield* Ocr.prepare(big)
        expect(prepared.downscaled).toBe(true)
        const size = yield* Effect.promise(() => sharp(prepared.bytes).metadata())
        expect(Math.max(size.width ?? 0, size.height ?? 0)).toBe(Ocr.downscaleSide)
        expect(prepared.bytes.byteLength).toBeLessThan(Ocr.downscaleBytes)
        expect(words(yield* ocr.recognize(big))).toBe("large scanned page")
        // under 4 MB the bytes go as they are
        const small = yield* drawn(["x"], { width: 200, fontSize: 40 })
        expect((yield* Ocr.prepare(small)).downscaled).toBe(false)
      }).pipe(Effect.provide(Ocr.layerTesseract)),
    60_000
  )

  it.effect("the layer's temporary traineddata folder is gone when its scope closes", () =>
    Effect.gen(function* () {
      // a parent of its own: other tests and processes make and remove such folders in the shared tmpdir
      const parent = mkdtempSync(join(tmpdir(), "ocr-test-"))
      const folders = () => readdirSync(parent)
      const during = yield* Effect.map(Ocr.Ocr, () => folders()).pipe(Effect.provide(Ocr.layerTesseractIn(parent)))
      // the worker holds the languages once created: the links are removed right after
      expect(during).toEqual([])
      expect(folders()).toEqual([])
      rmSync(parent, { recursive: true })
    }), 60_000)

  it.effect("bytes that are no PNG, JPEG or WEBP fail with OcrError", () =>
    Effect.gen(function* () {
      const notImage = yield* Effect.either(Ocr.prepare(new TextEncoder().encode("%PDF-1.7 not an image")))
      expect(Either.isLeft(notImage) && notImage.left._tag).toBe("OcrError")
      const gif = yield* Effect.promise(() =>
        sharp({ create: { width: 4, height: 4, channels: 3, background: "white" } }).gif().toBuffer()
      )
      const refused = yield* Effect.either(Ocr.prepare(new Uint8Array(gif)))
      expect(Either.isLeft(refused) && refused.left.message).toContain("unsupported image format gif")
    }))

  it.effect("the fixed layer returns its text", () =>
    Effect.gen(function* () {
      const ocr = yield* Ocr.Ocr
      expect(yield* ocr.recognize(new Uint8Array([1, 2, 3]))).toBe("fixed text")
    }).pipe(Effect.provide(Ocr.layerFixed("fixed text"))))
})
