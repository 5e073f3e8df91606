/**
 * The input policy, applied by the edge to every request before any handler
 * sees it: a body is read while counting its bytes, must be JSON at most 32
 * levels deep, without NUL in any string and with numbers that survive a round
 * trip; query values and path segments follow the same string rule. Every
 * refusal names the offending `param` so the client knows what to fix.
 */
import type { IncomingMessage } from "node:http"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { ParameterInvalid, PayloadTooLarge } from "../../schema/Errors.js"
import { formatParam } from "./Failures.js"

export const maxBodyBytes = 2 * 1024 * 1024
export const maxDepth = 32
/** Longer path segments cannot be an id or a route of ours. */
export const maxSegmentLength = 100
/**
 * After the limit is crossed the rest of the body is read and discarded up to
 * this much, so the client is listening when the `413` goes out; beyond it the
 * connection is closed after the answer.
 */
const drainBytes = 32 * 1024 * 1024

/** The body as text, counted while streaming (chunked or not); `413` past `maxBytes`. */
export const readBody = (source: IncomingMessage, maxBytes: number = maxBodyBytes): Effect.Effect<string, PayloadTooLarge> =>
  Effect.async<string, PayloadTooLarge>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    const finish = (result: Effect.Effect<string, PayloadTooLarge>) => {
      if (done) return
      done = true
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onEnd)
      source.off("aborted", onEnd)
      resume(result)
    }
    const tooLarge = () => new PayloadTooLarge({ message: `The request body exceeds ${maxBytes} bytes` })
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxBytes) chunks.push(chunk)
      else if (size > maxBytes + drainBytes) {
        // keep the rest unread; the answer closes the connection
        source.pause()
        finish(Effect.fail(tooLarge()))
      }
    }
    const onEnd = () =>
      finish(size > maxBytes ? Effect.fail(tooLarge()) : Effect.succeed(Buffer.concat(chunks).toString("utf8")))
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onEnd)
    source.on("aborted", onEnd)
    if (source.readableEnded) onEnd()
    return Effect.sync(() => finish(Effect.succeed("")))
  })

/** Whether the read stopped before the end of the body (the socket must then be closed). */
export const bodyLeftUnread = (source: IncomingMessage) => !source.readableEnded

const excerpt = (text: string, length = 40) =>
  text.length <= length ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, length))}…`

/**
 * One pass over JSON text, without parsing and without recursion: whether
 * `[`/`{` nest deeper than `limit`, and the first integer literal a double
 * cannot hold exactly (`12345678901234567890` would be stored as another number).
 */
export const scanJson = (text: string, limit: number): { readonly tooDeep: boolean; readonly inexact?: number } => {
  let depth = 0
  let inString = false
  let inexact: number | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) {
      if (++depth > limit) return { tooDeep: true }
    } else if (c === 125 || c === 93) depth--
    else if ((c >= 48 && c <= 57) || c === 45) {
      const literal = /^-?[0-9]+([.eE][-+0-9.eE]*)?/.exec(text.slice(i, i + 400))?.[0] ?? ""
      if (inexact === undefined && literal.length > 15 && /^-?[0-9]+$/.test(literal) && !Number.isSafeInteger(Number(literal))) {
        inexact = Number(literal)
      }
      i += Math.max(literal.length - 1, 0)
    }
  }
  return inexact === undefined ? { tooDeep: false } : { tooDeep: false, inexact }
}

const invalid = (path: ReadonlyArray<PropertyKey>, message: string) => {
  const param = formatParam(path)
  return new ParameterInvalid({ message: param ? `${param}: ${message}` : message, ...(param ? { param } : {}) })
}

/** The first string with NUL or number that does not round-trip, walked without recursion. */
export const checkValue = (
  value: unknown,
  root: ReadonlyArray<PropertyKey> = [],
  inexact?: number
): ParameterInvalid | undefined => {
  const stack: Array<readonly [unknown, ReadonlyArray<PropertyKey>]> = [[value, root]]
  while (stack.length > 0) {
    const [current, path] = stack.pop()!
    if (typeof current === "string") {
      if (current.includes("\u0000")) return invalid(path, "strings must not contain the NUL character (U+0000)")
    } else if (typeof current === "number") {
      if (!Number.isFinite(current) || current === inexact) {
        return invalid(path, "number out of range: it must be finite, and integers within ±(2^53 - 1)")
      }
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], [...path, i]])
    } else if (typeof current === "object" && current !== null) {
      const entries = Object.entries(current)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!
        if (key.includes("\u0000")) return invalid([...path, key.replaceAll("\u0000", "\\u0000")], "field names must not contain NUL")
        stack.push([child, [...path, key]])
      }
    }
  }
  return undefined
}

/** JSON text to a value that passed the policy; an empty body is `undefined`. */
export const parseJsonBody = (text: string): Either.Either<unknown, ParameterInvalid> => {
  if (text.trim() === "") return Either.right(undefined)
  const scanned = scanJson(text, maxDepth)
  if (scanned.tooDeep) {
    return Either.left(new ParameterInvalid({ message: `The JSON body nests deeper than ${maxDepth} levels` }))
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return Either.left(
      new ParameterInvalid({ message: `The request body is not valid JSON (it starts with ${excerpt(text.trim(), 20)})` })
    )
  }
  const refused = checkValue(value, [], scanned.inexact)
  return refused === undefined ? Either.right(value) : Either.left(refused)
}

/** Checked by the pagination program, which answers with their own codes. */
const pagingParams = new Set(["limit", "starting_after"])

/** NUL in a query name or value. */
export const checkQuery = (search: URLSearchParams): ParameterInvalid | undefined => {
  for (const [name, value] of search) {
    if (pagingParams.has(name)) continue
    if (name.includes("\u0000") || value.includes("\u0000")) {
      return new ParameterInvalid({
        message: `${name.replaceAll("\u0000", "\\u0000")}: query values must not contain the NUL character (U+0000)`,
        param: name.replaceAll("\u0000", "\\u0000")
      })
    }
  }
  return undefined
}

/** Bad percent-encoding or NUL in a path segment (ids are never that). */
export const checkPath = (rawPath: string): ParameterInvalid | undefined => {
  // the HTTP parser refuses a raw NUL: only an escape can hide one, or be malformed
  if (!rawPath.includes("%")) return undefined
  for (const segment of rawPath.split("/")) {
    let decoded: string
    try {
      decoded = decodeURIComponent(segment)
    } catch {
      return new ParameterInvalid({ message: `The path segment ${excerpt(segment)} is not valid percent-encoding`, param: "path" })
    }
    if (decoded.includes("\u0000")) {
      return new ParameterInvalid({ message: "Path segments must not contain the NUL character (U+0000)", param: "path" })
    }
  }
  return undefined
}

export { excerpt }
