/**
 * The input policy, applied by the edge to every request before any handler
 * sees it: a body is read while counting its bytes, must be JSON at most 32
 * levels deep, without NUL or a lone UTF-16 surrogate in any string (values
 * and field names) and with numbers that survive a round trip; query values and
 * path segments follow the same string rule. Every refusal names the offending
 * `param` so the client knows what to fix.
 *
 * A lone surrogate (`"\ud800"` in JSON, half of a pair) is no Unicode text:
 * PostgreSQL refuses it in `jsonb` and `text` would keep U+FFFD instead, so it
 * is refused here like NUL, before anything is stored. (Raw bytes that are not
 * UTF-8 become U+FFFD when the body is decoded, and a query or path cannot
 * carry one: its percent-encoding is UTF-8.)
 */
import type { IncomingMessage } from "node:http"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { ParameterInvalid, PayloadTooLarge } from "../../schema/Errors.js"
import type { Answer, EdgeRequest } from "./EdgeRequest.js"
import { formatParam } from "./Failures.js"

export const maxBodyBytes = 2 * 1024 * 1024
export const maxDepth = 32
/** Longer path segments cannot be an id or a route of ours. */
export const maxSegmentLength = 100
/**
 * The body as text, counted while streaming (chunked or not); `413` as soon as it passes `maxBytes`, the rest
 * left unread (the edge answers, then drops it: `Linger.ts`).
 */
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
      else {
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

const nativeWellFormed = (String.prototype as { readonly isWellFormed?: (this: string) => boolean }).isWellFormed
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** Whether `text` has no lone surrogate (`String.prototype.isWellFormed`, Node 20; a pattern before). */
export const isWellFormed: (text: string) => boolean =
  nativeWellFormed === undefined ? (text) => !loneSurrogate.test(text) : (text) => nativeWellFormed.call(text)

/** What is wrong with a string of a request, if anything: NUL, or a lone surrogate. */
const stringFault = (text: string): "nul" | "surrogate" | undefined =>
  text.includes("\u0000") ? "nul" : isWellFormed(text) ? undefined : "surrogate"

/** A field or query name as a `param`: NUL and lone surrogates written as `\u` escapes. */
const escapeName = (name: string) =>
  name.replace(
    // eslint-disable-next-line no-control-regex -- NUL is one of the characters escaped
    /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
  )

const surrogateMessage =
  "must not contain a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape): send valid Unicode text"

/** The first string with NUL or a lone surrogate, or number that does not round-trip, walked without recursion. */
export const checkValue = (
  value: unknown,
  root: ReadonlyArray<PropertyKey> = [],
  inexact?: number
): ParameterInvalid | undefined => {
  const stack: Array<readonly [unknown, ReadonlyArray<PropertyKey>]> = [[value, root]]
  while (stack.length > 0) {
    const [current, path] = stack.pop()!
    if (typeof current === "string") {
      const fault = stringFault(current)
      if (fault === "nul") return invalid(path, "strings must not contain the NUL character (U+0000)")
      if (fault === "surrogate") return invalid(path, `strings ${surrogateMessage}`)
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
        const fault = stringFault(key)
        if (fault === "nul") return invalid([...path, escapeName(key)], "field names must not contain NUL")
        if (fault === "surrogate") return invalid([...path, escapeName(key)], `field names ${surrogateMessage}`)
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

/**
 * NUL in a query name or value; a lone surrogate too, though `URLSearchParams`
 * decodes percent-escapes as UTF-8 and so never yields one (kept for any other source of params).
 */
export const checkQuery = (search: URLSearchParams): ParameterInvalid | undefined => {
  for (const [name, value] of search) {
    if (pagingParams.has(name)) continue
    const fault = stringFault(name) ?? stringFault(value)
    if (fault !== undefined) {
      const param = escapeName(name)
      return new ParameterInvalid({
        message:
          fault === "nul"
            ? `${param}: query values must not contain the NUL character (U+0000)`
            : `${param}: query values ${surrogateMessage}`,
        param
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

/** The edge's step for the path (as sent, before any decoding) and the query. */
export const checkPathAndQuery = (incoming: EdgeRequest, next: Answer): Answer => {
  const refused =
    checkPath(incoming.request.url.split("?", 1)[0]!) ??
    (incoming.search === undefined ? undefined : checkQuery(incoming.search))
  return refused === undefined ? next : Effect.fail(refused)
}

export { excerpt }
