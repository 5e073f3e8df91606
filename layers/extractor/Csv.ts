/**
 * `csv_qa` content: rows of `question,answer[,category]`, parsed by csv-parse
 * (quoted fields, commas and newlines inside quotes, a BOM, CRLF, LF or CR line
 * endings, mixed). A first row that
 * names the columns is a header and skipped. Every bad row is reported with
 * the line it starts on; one bad row refuses the whole import.
 */
import { CsvError, parse } from "csv-parse/sync"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

export interface CsvQa {
  readonly question: string
  readonly answer: string
  readonly category: string | null
}

export interface CsvRowError {
  readonly line: number
  readonly message: string
}

// with `info: true` each record comes with where it ended; the library's types do not say so
const Records = Schema.Array(
  Schema.Struct({ record: Schema.Array(Schema.String), info: Schema.Struct({ lines: Schema.Number }) })
)
const decodeRecords = Schema.decodeUnknownEither(Records)

const lineOf = (error: unknown): number =>
  error instanceof CsvError && typeof error.lines === "number" ? error.lines : 1

const isHeader = (row: ReadonlyArray<string>) =>
  row[0]?.trim().toLowerCase() === "question" && row[1]?.trim().toLowerCase() === "answer"

export const parseCsvQa = (content: string): Either.Either<ReadonlyArray<CsvQa>, ReadonlyArray<CsvRowError>> => {
  const errors: Array<CsvRowError> = []
  let parsed: unknown
  try {
    // one line ending for the whole file: csv-parse takes the first line's for every line, so a file of CRLF then
    // LF lines (pasted together from two sources) would run rows into each other
    parsed = parse(content.replace(/\r\n?/g, "\n"), {
      bom: true,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
      // a malformed row (a stray quote) is reported and the parse goes on
      skip_records_with_error: true,
      on_skip: (error: CsvError | undefined) => {
        if (error !== undefined) errors.push({ line: lineOf(error), message: error.message })
      }
    })
  } catch (error) {
    return Either.left([{ line: lineOf(error), message: error instanceof Error ? error.message : String(error) }])
  }
  const decoded = decodeRecords(parsed)
  if (Either.isLeft(decoded)) return Either.left([{ line: 1, message: "the CSV could not be read" }])
  const records = decoded.right
  const rows: Array<CsvQa> = []
  records.forEach(({ record, info }, index) => {
    if (index === 0 && isHeader(record)) return
    // `info.lines` is the line the record ends on; a quoted newline makes it span several
    const line = info.lines - (record.join(",").match(/\n/g)?.length ?? 0)
    const [question = "", answer = "", category = ""] = record.map((f) => f.trim())
    if (record.length < 2 || record.length > 3) {
      errors.push({ line, message: `expected 2 or 3 fields (question,answer[,category]), got ${record.length}` })
    } else if (question === "" || answer === "") {
      errors.push({ line, message: question === "" ? "the question is empty" : "the answer is empty" })
    } else {
      rows.push({ question, answer, category: category === "" ? null : category })
    }
  })
  if (errors.length > 0) return Either.left(errors.sort((a, b) => a.line - b.line))
  if (rows.length === 0) return Either.left([{ line: 1, message: "no question,answer rows" }])
  return Either.right(rows)
}
