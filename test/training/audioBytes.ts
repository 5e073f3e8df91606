/** Audio files built byte by byte for the tests: only the headers matter, the sound is silence. */

const ascii = (s: string) => Array.from(s, (c) => c.charCodeAt(0))
const u32le = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff]
const u16le = (n: number) => [n & 0xff, (n >>> 8) & 0xff]
const u32be = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]
const u64le = (n: number) => [...u32le(n % 2 ** 32), ...u32le(Math.floor(n / 2 ** 32))]

/** 8 kHz mono 8-bit PCM: `seconds` of it, or a header declaring that much over `actualBytes` bytes. */
export const wav = (seconds: number, actualBytes?: number) => {
  const rate = 8000
  const size = Math.round(seconds * rate)
  const data = new Array<number>(actualBytes ?? size).fill(0x80)
  return Uint8Array.from([
    ...ascii("RIFF"), ...u32le(36 + size), ...ascii("WAVE"),
    ...ascii("fmt "), ...u32le(16), ...u16le(1), ...u16le(1), ...u32le(rate), ...u32le(rate), ...u16le(1), ...u16le(8),
    ...ascii("data"), ...u32le(size), ...data
  ])
}

/** MPEG-1 layer III, 128 kbit/s, 44.1 kHz, stereo: `frames` frames after an ID3v2 tag (constant bit rate). */
export const mp3Cbr = (frames: number) => {
  const frameBytes = Math.floor((144 * 128_000) / 44_100) // 417
  const frame = [0xff, 0xfb, 0x90, 0x00, ...new Array<number>(frameBytes - 4).fill(0)]
  const tag = [...ascii("ID3"), 3, 0, 0, 0, 0, 0, 10, ...new Array<number>(10).fill(0)]
  return Uint8Array.from([...tag, ...Array.from({ length: frames }, () => frame).flat()])
}

/** One MPEG-1 layer III frame holding a Xing header that counts `frames` frames. */
export const mp3Xing = (frames: number) => {
  const header = [0xff, 0xfb, 0x90, 0x00]
  const side = new Array<number>(32).fill(0)
  const xing = [...ascii("Xing"), ...u32be(1), ...u32be(frames)]
  const rest = new Array<number>(417 - header.length - side.length - xing.length).fill(0)
  return Uint8Array.from([...header, ...side, ...xing, ...rest])
}

const oggPage = (granule: number, packet: ReadonlyArray<number>) => [
  ...ascii("OggS"), 0, 0, ...u64le(granule), ...u32le(1), ...u32le(0), ...u32le(0), 1, packet.length, ...packet
]

/** An Ogg Vorbis stream of `seconds` at 44.1 kHz: the identification page and a last page. */
export const oggVorbis = (seconds: number) => {
  const id = [1, ...ascii("vorbis"), ...u32le(0), 2, ...u32le(44_100), ...u32le(0), ...u32le(128_000), ...u32le(0), 0xb8, 1]
  return Uint8Array.from([...oggPage(0, id), ...oggPage(seconds * 44_100, new Array<number>(20).fill(0))])
}

/** An Ogg Opus stream of `seconds` (48 kHz granules after a 312-sample pre-skip). */
export const oggOpus = (seconds: number) => {
  const head = [...ascii("OpusHead"), 1, 2, ...u16le(312), ...u32le(48_000), 0, 0, 0]
  return Uint8Array.from([...oggPage(0, head), ...oggPage(seconds * 48_000 + 312, new Array<number>(20).fill(0))])
}

const box = (type: string, body: ReadonlyArray<number>) => [...u32be(8 + body.length), ...ascii(type), ...body]

/** An M4A file: `ftyp`, then `moov` with an `mvhd` (version 0) of `seconds` at a 1000 Hz timescale. */
export const m4a = (seconds: number) => {
  const mvhd = box("mvhd", [0, 0, 0, 0, ...u32be(0), ...u32be(0), ...u32be(1000), ...u32be(seconds * 1000), ...new Array<number>(80).fill(0)])
  return Uint8Array.from([...box("ftyp", [...ascii("M4A "), ...u32be(0), ...ascii("isom")]), ...box("moov", mvhd), ...box("mdat", [0, 0, 0, 0])])
}
