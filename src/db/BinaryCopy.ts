/**
 * Rows in PostgreSQL's binary COPY format (`copy ... from ... with (format binary)`),
 * for the column types bulk writes use. Values go as the server stores them, so it
 * parses nothing: a `real[]` of floats costs no text-to-float conversion.
 * Layout: a header, then per row its field count and each field as a length
 * (-1: NULL) and bytes, all big-endian, then a trailer.
 */

/** A column's type as encoded here. */
export type CopyType = "text" | "int4" | "float4[]" | "timestamptz"

/** The JavaScript value of each type; `null` writes NULL (whether the column allows it is the table's business). */
export interface CopyValues {
  readonly text: string
  readonly int4: number
  readonly "float4[]": ReadonlyArray<number>
  readonly timestamptz: Date
}

const signature = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00] // "PGCOPY\n\377\r\n\0"
const float4Oid = 700
/** PostgreSQL's timestamp epoch, 2000-01-01T00:00:00Z, in Unix milliseconds. */
const postgresEpochMs = 946_684_800_000

/**
 * A byte buffer that grows as it is written. Each write reserves its bytes
 * before it reads `bytes` or `view`, which a growth replaces.
 */
class Writer {
  private bytes = new Uint8Array(64 * 1024)
  private view = new DataView(this.bytes.buffer)
  length = 0

  private reserve(size: number): number {
    const at = this.length
    if (at + size > this.bytes.length) {
      const grown = new Uint8Array(Math.max(this.bytes.length * 2, at + size))
      grown.set(this.bytes.subarray(0, at))
      this.bytes = grown
      this.view = new DataView(grown.buffer)
    }
    this.length += size
    return at
  }

  int16(value: number) {
    const at = this.reserve(2)
    this.view.setInt16(at, value)
  }
  int32(value: number) {
    const at = this.reserve(4)
    this.view.setInt32(at, value)
  }
  int64(value: bigint) {
    const at = this.reserve(8)
    this.view.setBigInt64(at, value)
  }
  /** Array elements: each a length (4) and the float. */
  float4Elements(values: ReadonlyArray<number>) {
    let at = this.reserve(values.length * 8)
    for (const x of values) {
      this.view.setInt32(at, 4)
      this.view.setFloat32(at + 4, x)
      at += 8
    }
  }
  raw(bytes: ArrayLike<number>) {
    const at = this.reserve(bytes.length)
    this.bytes.set(bytes, at)
  }
  /** What was written (a view: the writer is not used after). */
  done(): Uint8Array {
    return this.bytes.subarray(0, this.length)
  }
}

const utf8 = new TextEncoder()

/** One field: its length, then its bytes. */
const writeField = (out: Writer, type: CopyType, value: unknown) => {
  if (value === null || value === undefined) return out.int32(-1)
  switch (type) {
    case "text": {
      const bytes = utf8.encode(value as string)
      out.int32(bytes.length)
      return out.raw(bytes)
    }
    case "int4":
      out.int32(4)
      return out.int32(value as number)
    case "timestamptz":
      out.int32(8)
      // microseconds since PostgreSQL's epoch; a Date holds milliseconds
      return out.int64(BigInt((value as Date).getTime() - postgresEpochMs) * 1000n)
    case "float4[]": {
      const values = value as ReadonlyArray<number>
      // an empty array has no dimensions (as PostgreSQL writes one)
      if (values.length === 0) {
        out.int32(12)
        out.int32(0) // dimensions
        out.int32(0) // has NULLs
        return out.int32(float4Oid)
      }
      out.int32(20 + values.length * 8)
      out.int32(1) // dimensions
      out.int32(0) // has NULLs
      out.int32(float4Oid)
      out.int32(values.length)
      out.int32(1) // lower bound
      return out.float4Elements(values)
    }
  }
}

/** `rows` (each a value per column, in the order of `types`) as one binary COPY stream. */
export const encodeBinaryCopy = (
  types: ReadonlyArray<CopyType>,
  rows: Iterable<ReadonlyArray<unknown>>
): Uint8Array => {
  const out = new Writer()
  out.raw(signature)
  out.int32(0) // flags
  out.int32(0) // header extension length
  for (const row of rows) {
    out.int16(types.length)
    types.forEach((type, i) => writeField(out, type, row[i]))
  }
  out.int16(-1)
  return out.done()
}
