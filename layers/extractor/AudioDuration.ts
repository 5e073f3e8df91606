/**
 * How long an audio file plays, read from its headers alone (nothing is
 * decoded): WAV from the `fmt ` byte rate and the `data` size; MP3 from the
 * Xing/Info or VBRI frame count, else (constant bit rate) from the first
 * frame's bit rate and the size; OGG from the last page's granule position
 * and the Vorbis or Opus header's rate; M4A from the `mvhd` box. Undefined
 * when the headers do not tell.
 */
/** The audio formats whose length is read from their headers. */
export type AudioKind = "audio/mpeg" | "audio/wav" | "audio/mp4" | "audio/ogg"

const text = (bytes: Uint8Array, at: number, length: number) =>
  at + length <= bytes.length ? String.fromCharCode(...bytes.subarray(at, at + length)) : ""

const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)

const wav = (bytes: Uint8Array): number | undefined => {
  const dv = view(bytes)
  let byteRate: number | undefined
  // chunks after "RIFF" size "WAVE"; bounded by the buffer
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = text(bytes, at, 4)
    const size = dv.getUint32(at + 4, true)
    if (id === "fmt " && at + 16 <= bytes.length) byteRate = dv.getUint32(at + 16, true)
    if (id === "data") {
      if (byteRate === undefined || byteRate === 0) return undefined
      // a streaming writer leaves the size unset: count the bytes present
      const length = size === 0 || size === 0xffffffff ? bytes.length - at - 8 : size
      return length / byteRate
    }
    at += 8 + size + (size % 2)
  }
  return undefined
}

const mp3Bitrates = {
  v1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
}
const mp3Rates: Record<number, ReadonlyArray<number>> = {
  3: [44100, 48000, 32000],
  2: [22050, 24000, 16000],
  0: [11025, 12000, 8000]
}

const mp3 = (bytes: Uint8Array): number | undefined => {
  const dv = view(bytes)
  let start = 0
  if (text(bytes, 0, 3) === "ID3" && bytes.length >= 10) {
    const size = ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f)
    start = 10 + size + (bytes[5]! & 0x10 ? 10 : 0)
  }
  // the first frame header within 64 KiB of the tag
  const limit = Math.min(bytes.length - 4, start + 64 * 1024)
  for (let at = start; at <= limit; at++) {
    const b1 = bytes[at + 1]!
    const b2 = bytes[at + 2]!
    if (bytes[at] !== 0xff || (b1 & 0xe0) !== 0xe0) continue
    const version = (b1 >> 3) & 3
    const layer = (b1 >> 1) & 3
    const bitrateIndex = b2 >> 4
    const rateIndex = (b2 >> 2) & 3
    if (version === 1 || layer !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) continue
    const rate = mp3Rates[version]![rateIndex]!
    const samples = version === 3 ? 1152 : 576
    const mono = bytes[at + 3]! >> 6 === 3
    const side = version === 3 ? (mono ? 17 : 32) : mono ? 9 : 17
    const xing = at + 4 + side
    const tag = text(bytes, xing, 4)
    if ((tag === "Xing" || tag === "Info") && xing + 12 <= bytes.length && dv.getUint32(xing + 4) & 1) {
      return (dv.getUint32(xing + 8) * samples) / rate
    }
    if (text(bytes, at + 36, 4) === "VBRI" && at + 54 <= bytes.length) return (dv.getUint32(at + 50) * samples) / rate
    const kbps = (version === 3 ? mp3Bitrates.v1 : mp3Bitrates.v2)[bitrateIndex]!
    const trailer = text(bytes, bytes.length - 128, 3) === "TAG" ? 128 : 0
    return ((bytes.length - at - trailer) * 8) / (kbps * 1000)
  }
  return undefined
}

const ogg = (bytes: Uint8Array): number | undefined => {
  const dv = view(bytes)
  if (bytes.length < 28) return undefined
  const data = 27 + bytes[26]!
  let rate: number | undefined
  let skip = 0
  if (text(bytes, data, 7) === "\u0001vorbis" && data + 16 <= bytes.length) rate = dv.getUint32(data + 12, true)
  else if (text(bytes, data, 8) === "OpusHead" && data + 12 <= bytes.length) {
    // Opus granules always count 48 kHz samples, after the pre-skip
    rate = 48000
    skip = dv.getUint16(data + 10, true)
  }
  if (rate === undefined || rate === 0) return undefined
  // the last page's granule position: the stream's length in samples
  for (let at = bytes.length - 27; at >= 0; at--) {
    if (text(bytes, at, 4) !== "OggS") continue
    const granule = Number(dv.getBigUint64(at + 6, true))
    return Math.max(0, granule - skip) / rate
  }
  return undefined
}

const m4a = (bytes: Uint8Array): number | undefined => {
  const dv = view(bytes)
  const walk = (from: number, to: number): number | undefined => {
    for (let at = from; at + 8 <= to; ) {
      let size = dv.getUint32(at)
      const type = text(bytes, at + 4, 4)
      let header = 8
      if (size === 1 && at + 16 <= to) {
        size = Number(dv.getBigUint64(at + 8))
        header = 16
      } else if (size === 0) size = to - at
      if (size < header) return undefined
      if (type === "moov") return walk(at + header, Math.min(to, at + size))
      if (type === "mvhd") {
        const body = at + header
        const v1 = bytes[body] === 1
        if (body + (v1 ? 32 : 20) > bytes.length) return undefined
        const timescale = dv.getUint32(body + (v1 ? 20 : 12))
        const duration = v1 ? Number(dv.getBigUint64(body + 24)) : dv.getUint32(body + 16)
        return timescale === 0 ? undefined : duration / timescale
      }
      at += size
    }
    return undefined
  }
  return walk(0, bytes.length)
}

/** Seconds of audio, when the headers tell. */
export const audioSeconds = (bytes: Uint8Array, kind: AudioKind): number | undefined => {
  const seconds = kind === "audio/wav" ? wav(bytes) : kind === "audio/mpeg" ? mp3(bytes) : kind === "audio/ogg" ? ogg(bytes) : m4a(bytes)
  return seconds !== undefined && Number.isFinite(seconds) ? seconds : undefined
}

/** The longest audio a lesson source may hold: 10 minutes. */
export const MAX_AUDIO_SECONDS = 600

export const describeSeconds = (seconds: number) => `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`
