/**
 * What a file's bytes are, read from their first bytes (magic numbers), never
 * from what the client declared. Text kinds are told apart by their content.
 */
import type { FileContentType } from "../../schema/Files.js"

const startsWith = (bytes: Uint8Array, signature: ReadonlyArray<number>, offset = 0) =>
  bytes.length >= offset + signature.length && signature.every((b, i) => bytes[offset + i] === b)

const ascii = (s: string) => Array.from(s, (c) => c.charCodeAt(0))

/** Valid UTF-8 without NUL or other binary control bytes. */
const isText = (bytes: Uint8Array): boolean => {
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, 64 * 1024))
    // eslint-disable-next-line no-control-regex -- control bytes are what this test looks for
    return !/[\u0000-\u0008\u000e-\u001a\u001c-\u001f]/.test(text)
  } catch {
    // a multi-byte character cut at the 64 KiB mark is not binary
    return bytes.length > 64 * 1024
  }
}

import type { AudioKind } from "../../layers/extractor/AudioDuration.js"

export type { AudioKind }
export type DetectedKind = "image/png" | "image/jpeg" | "image/webp" | "application/pdf" | "text/html" | "text" | AudioKind

export const isAudio = (kind: DetectedKind | undefined): kind is AudioKind =>
  kind === "audio/mpeg" || kind === "audio/wav" || kind === "audio/mp4" || kind === "audio/ogg"

/** An MPEG audio layer III frame header: 11 sync bits, a version other than "reserved", layer bits 01. */
const mp3Frame = (bytes: Uint8Array) =>
  bytes.length >= 4 && bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0 && ((bytes[1]! >> 3) & 3) !== 1 && ((bytes[1]! >> 1) & 3) === 1

export const detect = (bytes: Uint8Array): DetectedKind | undefined => {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png"
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg"
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) return "image/webp"
  if (startsWith(bytes, ascii("%PDF-"))) return "application/pdf"
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WAVE"), 8)) return "audio/wav"
  if (startsWith(bytes, ascii("OggS"))) return "audio/ogg"
  if (startsWith(bytes, ascii("ftyp"), 4)) return "audio/mp4"
  if (startsWith(bytes, ascii("ID3")) || mp3Frame(bytes)) return "audio/mpeg"
  if (!isText(bytes)) return undefined
  const head = new TextDecoder().decode(bytes.subarray(0, 1024)).replace(/^\uFEFF/, "").trimStart().toLowerCase()
  return head.startsWith("<!doctype html") || head.startsWith("<html") ? "text/html" : "text"
}

/** Whether bytes of `kind` may be stored under the declared type (HTML is text too). */
export const matches = (declared: FileContentType, kind: DetectedKind | undefined): boolean => {
  if (kind === undefined) return false
  switch (declared) {
    case "text/plain":
    case "text/markdown":
    case "text/html":
      return kind === "text" || kind === "text/html"
    default:
      return declared === kind
  }
}
