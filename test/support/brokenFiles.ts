/**
 * A corpus of broken files, generated here byte by byte (nothing downloaded,
 * no binary fixture): PNGs cut short, with broken CRCs, or declaring more
 * pixels than any decoder should try; JPEG, WEBP and GIF cut short or renamed;
 * PDFs without pages, with a broken cross-reference table, encrypted, or of
 * thousands of empty pages; audio with broken headers or lying durations; CSVs
 * with unbalanced quotes, a 1 MB field, a byte-order mark or mixed line
 * endings; a gzip bomb served as an HTML page; and the same bytes under each
 * upload type. Each case says how it must end: refused by the API (with the
 * status and code), or a source `indexed` or `failed` with its `error_code`.
 *
 * Shared by test/knowledge/broken-files.test.ts (in process) and
 * test/dist/broken-files.test.ts (the built bundle as a process).
 */
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { createGzip, deflateSync } from "node:zlib"
import sharp from "sharp"
import { expect } from "vitest"
import { FileContentTypes, type FileContentType } from "../../schema/Files.js"
import type { SourceErrorCode } from "../../schema/Knowledge.js"
import { m4a, mp3Xing, oggVorbis, wav } from "../training/audioBytes.js"

/** How a case ends: refused by the API at a step, or a source that settled. */
export type End =
  | { readonly at: "upload" | "create"; readonly status: number; readonly code: string }
  | { readonly at: "source"; readonly status: "indexed"; readonly code: null; readonly qa?: number }
  | { readonly at: "source"; readonly status: "failed"; readonly code: SourceErrorCode }

const refused = (at: "upload" | "create", status: number, code: string): End => ({ at, status, code })
const indexed = (qa?: number): End => ({ at: "source", status: "indexed", code: null, ...(qa === undefined ? {} : { qa }) })
const failed = (code: SourceErrorCode): End => ({ at: "source", status: "failed", code })

/** A file declared with `contentType`, its bytes PUT under the same type, confirmed, then named by a `file_id` source. */
export interface FileCase {
  readonly kind: "file"
  readonly name: string
  readonly filename: string
  readonly contentType: FileContentType
  readonly bytes: Uint8Array
  readonly ends: End
}

/** A `csv_qa` source with this content. */
export interface CsvCase {
  readonly kind: "csv"
  readonly name: string
  readonly content: string
  readonly ends: End
}

/** A `url` source: a local server answers its path with these headers and bytes. */
export interface PageCase {
  readonly kind: "page"
  readonly name: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: Uint8Array
  readonly ends: End
}

export type BrokenCase = FileCase | CsvCase | PageCase

const latin1 = (s: string) => Uint8Array.from(Buffer.from(s, "latin1"))
const utf8 = (s: string) => new TextEncoder().encode(s)
const concat = (...parts: ReadonlyArray<Uint8Array | ReadonlyArray<number>>) => Uint8Array.from(parts.flatMap((p) => Array.from(p)))
const u32be = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]

// PNG

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

/** CRC-32 of PNG chunks (ISO 3309), over the chunk type and data. */
const crc32 = (bytes: Uint8Array) => {
  let c = 0xffffffff
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

const pngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

/** One chunk: length, type, data, and its real CRC unless `crc` gives another. */
const pngChunk = (type: string, data: Uint8Array, crc?: number) => {
  const typed = concat(latin1(type), data)
  return concat(u32be(data.length), typed, u32be(crc ?? crc32(typed)))
}

/** IHDR data: width, height, bit depth 8, colour type 2 (RGB), deflate, no filter, no interlace. */
const ihdr = (width: number, height: number) => Uint8Array.from([...u32be(width), ...u32be(height), 8, 2, 0, 0, 0])

/** A valid RGB PNG of a grey gradient (filter byte 0 per row), real CRCs. */
const gradientPng = (width: number, height: number) => {
  const raw = new Uint8Array(height * (1 + width * 3))
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width * 3; x++) raw[y * (1 + width * 3) + 1 + x] = (x * 7 + y * 13) % 256
  }
  return concat(
    pngSignature,
    pngChunk("IHDR", ihdr(width, height)),
    pngChunk("IDAT", deflateSync(raw)),
    pngChunk("IEND", new Uint8Array())
  )
}

/**
 * 73 bytes: the signature, an IHDR declaring 4000 × 4000 RGB with a CRC of zeros, then an IDAT holding
 * the deflated form of 5,000 zero bytes (28 bytes: the "first 100" of the report, all there is) with a
 * CRC of zeros, and no IEND. The file that took a whole process down through tesseract.js.
 */
const png73 = () =>
  concat(pngSignature, pngChunk("IHDR", ihdr(4000, 4000), 0), pngChunk("IDAT", deflateSync(new Uint8Array(5000)).subarray(0, 100), 0))

/** Real CRCs, a header of `side` × `side` over a few bytes of image data. */
const hugePng = (side: number) =>
  concat(
    pngSignature,
    pngChunk("IHDR", ihdr(side, side)),
    pngChunk("IDAT", deflateSync(new Uint8Array(64))),
    pngChunk("IEND", new Uint8Array())
  )

/** A valid PNG but the IDAT's CRC is off by one bit. */
const crcBrokenPng = () => {
  const bytes = gradientPng(64, 32)
  // the IDAT CRC sits 4 bytes before the IEND chunk (12 bytes)
  bytes[bytes.length - 12 - 1]! ^= 0x01
  return bytes
}

// Images made by sharp (a drawn line of text), then broken

const drawn = (format: "jpeg" | "webp" | "gif") =>
  sharp(
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="100"><rect width="100%" height="100%" fill="white"/>` +
        `<text x="20" y="60" font-family="DejaVu Sans, sans-serif" font-size="32" fill="black">Parcels ship daily</text></svg>`
    )
  )
    .toFormat(format)
    .toBuffer()
    .then((b) => Uint8Array.from(b))

const cut = (bytes: Uint8Array, fraction: number) => bytes.slice(0, Math.floor(bytes.length * fraction))

// PDF

/** A PDF of these objects (numbered from 1), its xref table right unless `brokenXref`, and `trailer` entries. */
const pdfOf = (objects: ReadonlyArray<string>, options: { readonly brokenXref?: boolean; readonly trailer?: string } = {}) => {
  let out = "%PDF-1.4\n"
  const offsets: Array<number> = []
  objects.forEach((body, i) => {
    offsets.push(out.length)
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = out.length
  // a broken table: every offset points into the middle of nowhere, and startxref past the end of the file
  const shown = options.brokenXref ? offsets.map((o) => o * 3 + 17) : offsets
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  out += shown.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${options.trailer ?? ""}>>\n`
  out += `startxref\n${options.brokenXref ? xref + 100_000 : xref}\n%%EOF\n`
  return latin1(out)
}

const textPage = (lines: ReadonlyArray<string>) => {
  const stream = ["BT", "/F1 14 Tf", "72 720 Td", "18 TL", ...lines.map((l) => `(${l}) Tj T*`), "ET"].join("\n")
  return [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
  ]
}

const shippingLines = ["Shipping policy", "Parcels leave the warehouse every weekday before noon."]

/** A readable one-page PDF with text. */
const goodPdf = () => pdfOf(textPage(shippingLines))

const brokenXrefPdf = () => pdfOf(textPage(shippingLines), { brokenXref: true })

const noPagesPdf = () => pdfOf(["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>"])

/**
 * The standard security handler (RC4, 40 bit) with owner and user entries no password opens: a reader
 * trying the empty user password is refused.
 */
const encryptedPdf = () => {
  const objects = [...textPage(shippingLines), `<< /Filter /Standard /V 1 /R 2 /O <${"a5".repeat(32)}> /U <${"5a".repeat(32)}> /P -44 >>`]
  return pdfOf(objects, { trailer: `/Encrypt 6 0 R /ID [<${"01".repeat(16)}> <${"01".repeat(16)}>] ` })
}

/** `pages` pages without content: nothing to read, a lot to walk. */
const emptyPagesPdf = (pages: number) => {
  const kids = Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(" ")
  const page = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"
  return pdfOf(["<< /Type /Catalog /Pages 2 0 R >>", `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`, ...Array.from({ length: pages }, () => page)])
}

/**
 * One page whose content stream is `inflated` bytes (a line of text, then spaces) deflated once: about a
 * thousandth of that as a file, so the 25 MB upload limit does not bound what a reader inflates. The
 * compressed bytes go through the latin1 text of `pdfOf` unchanged (one character per byte).
 */
const pdfDeflateBomb = (inflated: number) => {
  const content = Buffer.alloc(inflated, 0x20)
  content.write("BT /F1 14 Tf 72 720 Td (Parcels leave every weekday) Tj ET ", "latin1")
  const stream = deflateSync(content, { level: 9 }).toString("latin1")
  return pdfOf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
  ])
}

/**
 * The deflate bomb's case: the decoders watch memory every 200 ms of the Clock, so the in-process test, on
 * the TestClock, reads it on its own while it moves the clock (test/knowledge/broken-files.test.ts).
 */
export const pdfDeflateBombCase = "pdf deflate bomb"

// Audio

const ascii = (s: string) => Array.from(s, (c) => c.charCodeAt(0))
const u32le = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff]

/** RIFF/WAVE whose `fmt ` chunk claims 4 GB: the chunk walk jumps past the end, no `data` is found. */
const wavBrokenHeader = () =>
  Uint8Array.from([...ascii("RIFF"), ...u32le(1000), ...ascii("WAVE"), ...ascii("fmt "), ...u32le(0xfffffff0), ...new Array<number>(64).fill(0x80)])

/** An ID3v2 tag whose (syncsafe) size says 256 MB, then nothing: no frame where the tag says audio starts. */
const mp3BrokenHeader = () => Uint8Array.from([...ascii("ID3"), 4, 0, 0, 0x7f, 0x7f, 0x7f, 0x7f, ...new Array<number>(200).fill(0)])

/** An `ftyp` box, then a `moov` box whose size (4) is smaller than its own header. */
const m4aBrokenHeader = () =>
  Uint8Array.from([...u32be(16), ...ascii("ftyp"), ...ascii("M4A "), ...u32be(0), ...u32be(4), ...ascii("moov"), ...new Array<number>(32).fill(0)])

// Pages

/**
 * `inflated` bytes of HTML (mostly spaces) gzipped once, streaming: a page served with
 * `Content-Encoding: gzip` that a reader which inflates would hold as hundreds of megabytes.
 */
export const gzipBomb = async (inflated: number) => {
  const head = utf8("<!doctype html><html><head><title>Bomb</title></head><body><p>")
  const block = new Uint8Array(1024 * 1024).fill(0x20)
  let left = inflated - head.length
  const source = Readable.from(
    (function* () {
      yield head
      while (left > 0) {
        const piece = left >= block.length ? block : block.subarray(0, left)
        left -= piece.length
        yield piece
      }
    })()
  )
  const out: Array<Buffer> = []
  const gzip = createGzip({ level: 9 })
  gzip.on("data", (chunk: Buffer) => out.push(chunk))
  await pipeline(source, gzip)
  return Uint8Array.from(Buffer.concat(out))
}

// The corpus

/** The local AI provider transcribes nothing: audio whose headers pass the length check ends here. */
const transcriptionLocal = failed("transcription_failed")

const htmlDocument = utf8(
  "<!doctype html><html><head><title>Opening hours</title></head><body><h1>Opening hours</h1>" +
    "<p>The shop opens at nine in the morning and closes at six in the evening on weekdays.</p></body></html>"
)

/** Bytes of one kind, uploaded under every upload type: only the matching ones are stored, the rest are `415`. */
const underEveryType = (label: string, bytes: Uint8Array, accepted: Partial<Record<FileContentType, End>>): ReadonlyArray<FileCase> =>
  FileContentTypes.map((contentType) => ({
    kind: "file",
    name: `${label} as ${contentType}`,
    filename: `${label}.bin`,
    contentType,
    bytes,
    ends: accepted[contentType] ?? refused("upload", 415, "unsupported_media_type")
  }))

/** The whole corpus; `bombBytes`: what the gzip bomb page inflates to (300 MB by default). */
export const brokenFiles = async (options: { readonly bombBytes?: number } = {}): Promise<ReadonlyArray<BrokenCase>> => {
  const [jpeg, webp, gif] = await Promise.all([drawn("jpeg"), drawn("webp"), drawn("gif")])
  const png = gradientPng(64, 32)
  const pdf = goodPdf()
  const bomb = await gzipBomb(options.bombBytes ?? 300 * 1024 * 1024)
  const file = (name: string, filename: string, contentType: FileContentType, bytes: Uint8Array, ends: End): FileCase =>
    ({ kind: "file", name, filename, contentType, bytes, ends })
  const csv = (name: string, content: string, ends: End): CsvCase => ({ kind: "csv", name, content, ends })
  // a field of 1,000,000 bytes: with its row and header the content stays under the 1 MiB limit
  const megabyte = "x".repeat(1_000_000)
  return [
    // PNG
    file("png crc broken", "crc.png", "image/png", crcBrokenPng(), failed("ocr_failed")),
    file("png 73 bytes", "tiny-bomb.png", "image/png", png73(), failed("ocr_failed")),
    // 3.6 and 0.26 gigapixels: refused from the header, before a decoder allocates for them
    file("png 60000 x 60000", "huge.png", "image/png", hugePng(60_000), failed("ocr_failed")),
    file("png 16000 x 16000", "large.png", "image/png", hugePng(16_000), failed("ocr_failed")),
    // 49 megapixels, just under the 50 million read: decoded, and the few bytes of data run out
    file("png 7000 x 7000", "wide.png", "image/png", hugePng(7_000), failed("ocr_failed")),
    // JPEG, WEBP, GIF
    file("jpeg truncated", "cut.jpg", "image/jpeg", cut(jpeg, 0.5), failed("ocr_failed")),
    file("webp truncated", "cut.webp", "image/webp", cut(webp, 0.5), failed("ocr_failed")),
    file("gif truncated (no GIF upload type)", "cut.gif", "image/png", cut(gif, 0.5), refused("upload", 415, "unsupported_media_type")),
    file("jpeg renamed png", "photo.png", "image/png", jpeg, refused("upload", 415, "unsupported_media_type")),
    file("webp renamed jpeg", "photo.jpg", "image/jpeg", webp, refused("upload", 415, "unsupported_media_type")),
    file("pdf declared as png", "scan.png", "image/png", pdf, refused("upload", 415, "unsupported_media_type")),
    file("pdf named .png, declared pdf", "scan.png", "application/pdf", pdf, indexed()),
    // PDF
    file("pdf without pages", "none.pdf", "application/pdf", noPagesPdf(), failed("empty_content")),
    file("pdf broken xref", "xref.pdf", "application/pdf", brokenXrefPdf(), indexed()),
    file("pdf encrypted", "locked.pdf", "application/pdf", encryptedPdf(), failed("unsupported_type")),
    file("pdf 3000 empty pages", "blank.pdf", "application/pdf", emptyPagesPdf(3000), failed("empty_content")),
    // a 300 KB upload whose reading would hold 300 MB and more: over the decoders' memory limit
    file(pdfDeflateBombCase, "bomb.pdf", "application/pdf", pdfDeflateBomb(300 * 1024 * 1024), failed("too_large")),
    // Audio (the local AI provider transcribes nothing; lengths are read from the headers first)
    file("wav broken header", "broken.wav", "audio/wav", wavBrokenHeader(), transcriptionLocal),
    file("wav says 3 hours", "long.wav", "audio/wav", wav(3 * 3600, 800), failed("audio_too_long")),
    file("mp3 broken header", "broken.mp3", "audio/mpeg", mp3BrokenHeader(), transcriptionLocal),
    file("mp3 says 10 million frames", "long.mp3", "audio/mpeg", mp3Xing(10_000_000), failed("audio_too_long")),
    file("ogg cut to 20 bytes", "cut.ogg", "audio/ogg", oggVorbis(5).slice(0, 20), transcriptionLocal),
    file("ogg says a day", "long.ogg", "audio/ogg", oggVorbis(24 * 3600), failed("audio_too_long")),
    file("m4a broken header", "broken.m4a", "audio/mp4", m4aBrokenHeader(), transcriptionLocal),
    file("m4a says a day", "long.m4a", "audio/mp4", m4a(24 * 3600), failed("audio_too_long")),
    // CSV
    csv("csv unbalanced quotes", 'question,answer\n"Where is my parcel?,It leaves the warehouse within two days\nIs there a shop?,Yes\n', refused("create", 400, "parameter_invalid")),
    csv("csv one 1 MB field", `question,answer\nWhat is the long answer?,${megabyte}\n`, indexed(1)),
    csv("csv over 1 MiB", `question,answer\nWhat is the long answer?,${megabyte}${"y".repeat(60_000)}\n`, refused("create", 413, "payload_too_large")),
    csv("csv byte-order mark", "\uFEFFquestion,answer\nDo you ship abroad?,Yes to every country in Europe\n", indexed(1)),
    // the first line's ending is taken for every line: the rest run together into one row of 4 fields, refused
    csv("csv mixed line endings", "question,answer\r\nDo you ship abroad?,Yes\nIs there a shop?,In Valencia\rCan I pay by card?,Any card\r\n", indexed(3)),
    // a page served gzipped: the fetcher inflates it and stops at the page limit (10 MB), long before 300 MB
    { kind: "page", name: "gzip bomb page", path: "/bomb", headers: { "content-type": "text/html", "content-encoding": "gzip" }, body: bomb, ends: failed("too_large") },
    // the same bytes under each upload type
    ...underEveryType("html", htmlDocument, { "text/plain": indexed(), "text/markdown": indexed(), "text/html": indexed() }),
    ...underEveryType("wav", wav(1), { "audio/wav": transcriptionLocal }),
    ...underEveryType("png cut short", cut(png, 0.6), { "image/png": failed("ocr_failed") })
  ]
}

/**
 * Checks each case ended as it says: `submitted[i]` is the source id of `corpus[i]` (or the refusal the API
 * answered), `sources` the agent's sources as the API lists them. A failed source's error is one readable
 * line: no stack, no internals.
 */
export const expectEnds = (
  corpus: ReadonlyArray<BrokenCase>,
  submitted: ReadonlyArray<string | End>,
  sources: ReadonlyMap<string, any>
) => {
  const observed = submitted.map((s): End => {
    if (typeof s !== "string") return s
    const source = sources.get(s)
    return { at: "source", status: source.status, code: source.error_code }
  })
  const withoutQa = (e: End) => ({ at: e.at, status: e.status, code: e.code })
  expect(corpus.map((c, i) => [c.name, observed[i]])).toEqual(corpus.map((c) => [c.name, withoutQa(c.ends)]))
  corpus.forEach((c, i) => {
    const id = submitted[i]
    if (typeof id !== "string") return
    const source = sources.get(id)
    if (source.status === "failed") {
      expect(source.error, c.name).toMatch(/^[^\n]{10,300}$/)
      expect(source.error, c.name).not.toMatch(/\s+at\s+\S+\s+\(|\w*Error:/)
    } else expect(source.error, c.name).toBeNull()
    if (c.ends.at === "source" && c.ends.status === "indexed" && c.ends.qa !== undefined) expect(source.qa_count, c.name).toBe(c.ends.qa)
  })
}

/**
 * A CSV whose first line ends CRLF and whose next lines end LF: every row is well formed. csv-parse takes the
 * first line's ending for all, which merged the LF rows into one (question `Do you ship abroad?`, answer
 * `Yes\nIs there a shop?`, category `In Valencia`), imported without a word; the service now reads every
 * ending as a line's end, and the two rows are imported as written.
 */
export const csvCrlfThenLf = "question,answer\r\nDo you ship abroad?,Yes\nIs there a shop?,In Valencia\r\n"
