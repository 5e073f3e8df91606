/**
 * What Node refuses before any request reaches the API, answered in the error envelope on the raw socket
 * (no response object exists to answer through): bytes it cannot parse (headers over 16 KB, malformed header
 * bytes, bytes that are not HTTP at all), and `CONNECT`, a tunnel this service never opens.
 *
 * Such a refusal can come while requests that arrived before it on the same connection (pipelined, or sent
 * in the same write) are still being answered. They were carried out, so each gets its own answer first, in
 * order; only then do the refusal and the close go out. Writing the refusal at once would end the socket
 * under them: the client would be told that a request it made failed (and retry it) while its effect stays,
 * and a streamed answer would be cut mid-way.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import { HeadersTooLarge, MethodNotAllowed, ParameterInvalid, RouteNotFound } from "../../schema/Errors.js"
import { catalogued, type RawFailure, rawAnswer } from "./RawAnswer.js"
import { methodsFor } from "./Endpoints.js"

/** Node's parser error codes mapped to our failure, with a message that says what to fix. */
const parseFailure = (code: string | undefined): RawFailure =>
  code === "HPE_HEADER_OVERFLOW"
    ? { ...catalogued(HeadersTooLarge), message: "The request headers exceed 16 KB; send fewer or shorter headers" }
    : code === "HPE_INVALID_HEADER_TOKEN" || code === "HPE_INVALID_HEADER_VALUE" || code === "HPE_LF_EXPECTED"
      ? { ...catalogued(ParameterInvalid), message: "A request header contains bytes that are not allowed" }
      : { ...catalogued(ParameterInvalid), message: "The request is not valid HTTP/1.1" }

/**
 * `CONNECT` as the edge answers any method a path does not serve: `405` with `Allow` on a path of the
 * contract, `404` elsewhere (its usual target, `host:port`, is no path of ours).
 */
const connectFailure = (target: string): { readonly failure: RawFailure; readonly allow: ReadonlyArray<string> } => {
  const path = target.startsWith("/") ? new URL(target, "http://edge").pathname : undefined
  const allow = path === undefined ? [] : methodsFor(path)
  const shown = JSON.stringify(target.length <= 80 ? target : `${target.slice(0, 80)}…`)
  return allow.length > 0
    ? { failure: { ...catalogued(MethodNotAllowed), message: `CONNECT is not allowed on ${shown}; use ${allow.join(", ")}` }, allow }
    : { failure: { ...catalogued(RouteNotFound), message: `Unrecognized request URL (CONNECT ${shown}): this service opens no tunnels` }, allow }
}

/**
 * How long a refused connection waits for its client to close after the answer (its last bytes are read and
 * dropped meanwhile); a plain timer, as Node's own keep-alive timeout is, because no fiber exists here to
 * measure it with the Clock.
 */
const closeWaitMillis = 5_000

/** The answers still owed on one connection, and what to write once none is. */
interface Owed {
  count: number
  then: (() => void) | undefined
}

/** A connection being refused: whether the refusal is written, and whether the client has closed its side. */
interface Refusal {
  written: boolean
  peerEnded: boolean
}

export const makeRefusals = (options: { readonly docsUrl: string }) => {
  const owed = new WeakMap<Duplex, Owed>()
  const refusals = new WeakMap<Duplex, Refusal>()

  /** Counts a response owed on its request's socket until it is finished or abandoned ('close' is both). */
  const owe = (request: IncomingMessage, response: ServerResponse): void => {
    const socket = request.socket
    let entry = owed.get(socket)
    if (entry === undefined) {
      entry = { count: 0, then: undefined }
      owed.set(socket, entry)
    }
    const counted = entry
    counted.count++
    response.once("close", () => {
      if (--counted.count > 0 || counted.then === undefined) return
      const then = counted.then
      counted.then = undefined
      then()
    })
  }

  /** Writes `answer` and closes, once every answer owed on the socket is out. */
  const refuseLast = (socket: Duplex, answer: () => string): void => {
    const refusal: Refusal = { written: false, peerEnded: false }
    refusals.set(socket, refusal)
    socket.once("end", () => {
      refusal.peerEnded = true
      if (refusal.written) socket.destroy()
    })
    const refuse = () => {
      // an earlier answer asked to close the connection, or the client left: Node is closing it already
      if (!socket.writable) return
      refusal.written = true
      // the client's last bytes are left to arrive before the close, or closing on them unread would reset
      // the connection and could take the answer with it
      socket.end(answer(), () => {
        if (refusal.peerEnded) socket.destroy()
      })
      const timer = setTimeout(() => socket.destroy(), closeWaitMillis).unref()
      socket.once("close", () => clearTimeout(timer))
    }
    const entry = owed.get(socket)
    if (entry !== undefined && entry.count > 0) entry.then = refuse
    else refuse()
  }

  /** The `clientError` listener. */
  const onClientError = (error: Error & { readonly code?: string }, socket: Duplex): void => {
    // the failed parser reports every later byte, and the client's end, as one more error
    if (refusals.has(socket)) return
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy()
      return
    }
    refuseLast(socket, () => rawAnswer({ ...parseFailure(error.code), docsUrl: options.docsUrl }))
  }

  /** The `connect` listener (without one, Node closes the socket without a word). */
  const onConnect = (request: IncomingMessage, socket: Duplex): void => {
    const { allow, failure } = connectFailure(request.url ?? "")
    refuseLast(socket, () =>
      rawAnswer({ ...failure, docsUrl: options.docsUrl }, allow.length > 0 ? { Allow: allow.join(", ") } : {})
    )
    // Node no longer reads this socket (it was handed over for a tunnel): whatever else comes is dropped
    socket.resume()
  }

  return { owe, onClientError, onConnect }
}
