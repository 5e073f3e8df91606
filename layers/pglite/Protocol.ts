/**
 * The messages between `Thread.ts` (main thread) and `Worker.ts`
 * (the thread running PGlite). Request ids start at 1; the worker's first
 * message, id 0, says whether the database opened.
 */
import type { RowMode } from "@electric-sql/pglite"

export interface WorkerInput {
  readonly dataDir: string
  readonly template: string | undefined
}

/** What the main thread asks of the worker. */
export type Call =
  | { readonly op: "exec"; readonly sql: string; readonly rowMode: RowMode }
  | {
      readonly op: "query"
      readonly sql: string
      readonly params: ReadonlyArray<unknown>
      readonly rowMode: RowMode
      /** What a `copy ... from '/dev/blob'` reads. */
      readonly blob?: Blob | undefined
    }
  | { readonly op: "close" }

/** A call as posted, with the id its reply carries. */
export type Request = Call & { readonly id: number }

export type Reply =
  | { readonly id: number; readonly ok: true; readonly result: unknown }
  | { readonly id: number; readonly ok: false; readonly error: SerializedError }

/** An error's name, message and own fields whose values are plain (a database error's `code`, `detail`, …). */
export type SerializedError = Readonly<Record<string, string | number | boolean | null>>

export const serializeError = (error: unknown): SerializedError => {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) }
  const fields: Record<string, string | number | boolean | null> = { name: error.name, message: error.message }
  for (const [key, value] of Object.entries(error)) {
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) fields[key] = value as string
  }
  return fields
}

/**
 * The error as callers of PGlite see it: an `Error` with the same name,
 * message and fields (what `isUniqueViolation` and the migrator read: `code`).
 */
export const deserializeError = (fields: SerializedError): Error => {
  const error = new Error(String(fields["message"] ?? "PGlite failed"))
  Object.assign(error, fields)
  return error
}
