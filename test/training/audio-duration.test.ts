/** Audio kinds by magic bytes and durations from headers, on generated files. */
import { describe, expect, it } from "@effect/vitest"
import { audioSeconds } from "../../layers/extractor/AudioDuration.js"
import { detect } from "../../src/files/Magic.js"
import { m4a, mp3Cbr, mp3Xing, oggOpus, oggVorbis, wav } from "./audioBytes.js"

describe("audio headers", () => {
  it("recognises each kind by its bytes", () => {
    expect(detect(wav(1))).toBe("audio/wav")
    expect(detect(mp3Cbr(3))).toBe("audio/mpeg")
    expect(detect(mp3Xing(10))).toBe("audio/mpeg")
    expect(detect(oggVorbis(1))).toBe("audio/ogg")
    expect(detect(m4a(1))).toBe("audio/mp4")
    expect(detect(new TextEncoder().encode("just some text"))).toBe("text")
  })

  it("WAV: the data size over the byte rate, also when the data is cut short", () => {
    expect(audioSeconds(wav(2.5), "audio/wav")).toBeCloseTo(2.5, 5)
    expect(audioSeconds(wav(660, 100), "audio/wav")).toBeCloseTo(660, 5)
  })

  it("MP3: a Xing frame count, else the constant bit rate over the size", () => {
    // 1000 frames of 1152 samples at 44.1 kHz
    expect(audioSeconds(mp3Xing(1000), "audio/mpeg")).toBeCloseTo((1000 * 1152) / 44_100, 5)
    // 100 frames of 417 bytes at 128 kbit/s (the frames' padding is not modelled: within 0.3%)
    expect(audioSeconds(mp3Cbr(100), "audio/mpeg")).toBeCloseTo((100 * 417 * 8) / 128_000, 5)
  })

  it("OGG: the last granule over the Vorbis rate, or 48 kHz after Opus's pre-skip", () => {
    expect(audioSeconds(oggVorbis(12), "audio/ogg")).toBeCloseTo(12, 5)
    expect(audioSeconds(oggOpus(700), "audio/ogg")).toBeCloseTo(700, 5)
  })

  it("M4A: mvhd duration over its timescale", () => {
    expect(audioSeconds(m4a(42), "audio/mp4")).toBeCloseTo(42, 5)
  })

  it("headers that do not tell give no duration", () => {
    expect(audioSeconds(Uint8Array.from([0x52, 0x49, 0x46, 0x46, 0, 0, 0, 0, 0x57, 0x41, 0x56, 0x45]), "audio/wav")).toBeUndefined()
    expect(audioSeconds(Uint8Array.from([0x4f, 0x67, 0x67, 0x53]), "audio/ogg")).toBeUndefined()
    expect(audioSeconds(new Uint8Array(16), "audio/mp4")).toBeUndefined()
  })
})
