/**
 * Text in images. Live (`layerDecoders`): sharp and tesseract.js on the
 * decoder processes (`Decoders.ts`, `extractor/Images.ts`), with the English
 * and Spanish traineddata shipped in npm: nothing is downloaded, and an image
 * that breaks a decoder costs that image. Fixed: a given text, for tests.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Decoders } from "./Decoders.js"

export class OcrError extends Schema.TaggedError<OcrError>()("OcrError", { message: Schema.String }) {}

export interface OcrShape {
  /** Text in an image (PNG, JPEG, WEBP); images of 4 MB or more are downscaled first. */
  readonly recognize: (image: Uint8Array) => Effect.Effect<string, OcrError>
}

export class Ocr extends Context.Tag("Layers/Ocr")<Ocr, OcrShape>() {}

/** Every image read on the decoder processes. */
export const layerDecoders: Layer.Layer<Ocr, never, Decoders> = Layer.effect(
  Ocr,
  Effect.map(Decoders, (decoders) =>
    Ocr.of({
      recognize: (bytes) => Effect.mapError(decoders.decode({ _tag: "Image", bytes }), (error) => new OcrError({ message: error.message }))
    })
  )
)

/** Tests: every input reads as `text`. */
export const layerFixed = (text: string): Layer.Layer<Ocr> =>
  Layer.succeed(Ocr, Ocr.of({ recognize: () => Effect.succeed(text) }))
