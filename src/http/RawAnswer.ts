/**
 * Answers written below the framework (Node's own refusals, the gap before the API is attached, a `CONNECT`):
 * the same error envelope and `Request-Id` the edge gives, built by hand because no platform request exists.
 */
import { randomBytes } from "node:crypto"
import { STATUS_CODES } from "node:http"

export const requestId = () => `req_${randomBytes(18).toString("base64url").replace(/[-_]/g, "0").slice(0, 24)}`

/** A catalogued failure (`schema/Errors.ts`) with the message for this request. */
export interface RawFailure {
  readonly status: number
  readonly type: string
  readonly code: string
  readonly message: string
}

/** A catalogue entry's status, type and code. */
export const catalogued = (entry: { readonly status: number; readonly type: string; readonly code: string }) => ({
  status: entry.status,
  type: entry.type,
  code: entry.code
})

export const envelope = (failure: RawFailure, docsUrl: string, id: string) =>
  JSON.stringify({
    error: { type: failure.type, code: failure.code, message: failure.message, doc_url: `${docsUrl}#${failure.code}` },
    meta: { request_id: id }
  })

/** A whole HTTP/1.1 answer in the envelope that closes the connection, for a socket no response object owns. */
export const rawAnswer = (
  failure: RawFailure & { readonly docsUrl: string },
  headers: Record<string, string> = {}
): string => {
  const id = requestId()
  const body = envelope(failure, failure.docsUrl, id)
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("")
  return (
    `HTTP/1.1 ${failure.status} ${STATUS_CODES[failure.status] ?? ""}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `Request-Id: ${id}\r\n${extra}Connection: close\r\n\r\n${body}`
  )
}
