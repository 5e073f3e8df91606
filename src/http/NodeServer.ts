/**
 * The Node HTTP server under the API, with the two answers the framework cannot
 * give. The port listens before the API's request handler is attached: until
 * it is, a request gets `503 service_unavailable` at once instead of waiting
 * forever. And Node's own refusals (headers over 16 KB, malformed header
 * bytes) get the error envelope through the `clientError` hook while the
 * socket can still carry it. An `Expect` other than `100-continue` (which Node
 * meets by itself) is refused in the envelope too, `417 expectation_failed`,
 * before the request reaches the API: nothing is done, whatever the method.
 */
import * as Etag from "@effect/platform/Etag"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpPlatform from "@effect/platform-node/NodeHttpPlatform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodePath from "@effect/platform-node/NodePath"
import * as Layer from "effect/Layer"
import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import { ExpectationFailed, HeadersTooLarge, ParameterInvalid, ServiceUnavailable } from "../../schema/Errors.js"

const requestId = () => `req_${randomBytes(18).toString("base64url").replace(/[-_]/g, "0").slice(0, 24)}`

const envelope = (type: string, code: string, message: string, docsUrl: string, id: string) =>
  JSON.stringify({ error: { type, code, message, doc_url: `${docsUrl}#${code}` }, meta: { request_id: id } })

const reasons: Record<number, string> = { 400: "Bad Request", 431: "Request Header Fields Too Large" }

/** Node's parser error codes mapped to our status, code and a message that says what to fix. */
const clientFailure = (code: string | undefined) =>
  code === "HPE_HEADER_OVERFLOW"
    ? { status: HeadersTooLarge.status, code: HeadersTooLarge.code, message: "The request headers exceed 16 KB; send fewer or shorter headers" }
    : code === "HPE_INVALID_HEADER_TOKEN" || code === "HPE_INVALID_HEADER_VALUE" || code === "HPE_LF_EXPECTED"
      ? { status: ParameterInvalid.status, code: ParameterInvalid.code, message: "A request header contains bytes that are not allowed" }
      : { status: ParameterInvalid.status, code: ParameterInvalid.code, message: "The request is not valid HTTP/1.1" }

export const makeNodeServer = (options: { readonly docsUrl: string }) => (): Server => {
  const server = createServer({ maxHeaderSize: 16 * 1024 })
  const notReady = (_request: IncomingMessage, response: ServerResponse) => {
    // once the API's handler is attached it answers; this one only covers the gap before
    if (server.listenerCount("request") > 1) return
    const id = requestId()
    const body = envelope(
      ServiceUnavailable.type,
      ServiceUnavailable.code,
      "The service is starting; retry in a moment",
      options.docsUrl,
      id
    )
    response.writeHead(503, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      "retry-after": "1",
      "request-id": id,
      connection: "close"
    })
    response.end(body)
  }
  server.on("request", notReady)
  // Node calls this, instead of answering a bare 417, for an Expect it does not meet (any but 100-continue); the
  // request's body, if any, is left unread and Node discards it once the answer is out (the connection stays open)
  server.on("checkExpectation", (request: IncomingMessage, response: ServerResponse) => {
    const id = requestId()
    const expect = String(request.headers["expect"] ?? "")
    const shown = JSON.stringify(expect.length <= 60 ? expect : `${expect.slice(0, 60)}…`)
    const body = envelope(
      ExpectationFailed.type,
      ExpectationFailed.code,
      `The Expect header ${shown} is not supported: only 100-continue is; send the request without it (nothing was done)`,
      options.docsUrl,
      id
    )
    response.writeHead(ExpectationFailed.status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      "request-id": id
    })
    response.end(body)
  })
  server.on("clientError", (error: Error & { readonly code?: string }, socket: Duplex) => {
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy()
      return
    }
    const failure = clientFailure(error.code)
    const id = requestId()
    const body = envelope(ParameterInvalid.type, failure.code, failure.message, options.docsUrl, id)
    socket.end(
      `HTTP/1.1 ${failure.status} ${reasons[failure.status]}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`
    )
  })
  return server
}

/**
 * The server listening on `options`, with the services the platform gives its routes (file responses,
 * ETags, the file system and paths) and no more: `NodeHttpServer.layer` also brings Node's command executor,
 * terminal and workers, which no request uses but every request's fiber would copy at each change of its
 * context (see `Performance.ts`).
 */
export const listening = (evaluate: () => Server, options: { readonly port: number; readonly host?: string }) =>
  Layer.mergeAll(
    NodeHttpServer.layerServer(evaluate, options),
    NodeHttpPlatform.layer,
    Etag.layerWeak,
    NodeFileSystem.layer,
    NodePath.layer
  )
