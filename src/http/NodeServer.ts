/**
 * The Node HTTP server under the API, with the answers the framework cannot give. The port listens before
 * the API's request handler is attached: until it is, a request gets `503 service_unavailable` at once
 * instead of waiting forever. Node's own refusals (headers over 16 KB, malformed bytes, `CONNECT`) get the
 * error envelope after the answers owed on their connection (`Refusals.ts`). An `Expect` other than
 * `100-continue` (which Node meets by itself) is refused in the envelope too, `417 expectation_failed`,
 * before the request reaches the API: nothing is done, whatever the method.
 */
import * as Etag from "@effect/platform/Etag"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpPlatform from "@effect/platform-node/NodeHttpPlatform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodePath from "@effect/platform-node/NodePath"
import * as Layer from "effect/Layer"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { ExpectationFailed, ServiceUnavailable } from "../../schema/Errors.js"
import { catalogued, envelope, requestId } from "./RawAnswer.js"
import { makeRefusals } from "./Refusals.js"

/** How long an idle keep-alive connection stays open (Node's own default is 5 seconds). */
export const keepAliveMillis = 65_000

export const makeNodeServer = (options: { readonly docsUrl: string }) => (): Server => {
  const server = createServer({ maxHeaderSize: 16 * 1024 })
  // an idle connection is kept longer than a load balancer's or a client's idle timeout (commonly a minute), so
  // the service is never the side that closes one as a request is sent on it: that request would fail unanswered
  server.keepAliveTimeout = keepAliveMillis
  const refusals = makeRefusals(options)
  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    refusals.owe(request, response)
    // once the API's handler is attached it answers; this one only covers the gap before
    if (server.listenerCount("request") > 1) return
    const id = requestId()
    const body = envelope(
      { ...catalogued(ServiceUnavailable), message: "The service is starting; retry in a moment" },
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
  server.on("request", onRequest)
  // Node calls this, instead of answering a bare 417, for an Expect it does not meet (any but 100-continue); the
  // request's body, if any, is left unread and Node discards it once the answer is out (the connection stays open)
  server.on("checkExpectation", (request: IncomingMessage, response: ServerResponse) => {
    refusals.owe(request, response)
    const id = requestId()
    const expect = String(request.headers["expect"] ?? "")
    const shown = JSON.stringify(expect.length <= 60 ? expect : `${expect.slice(0, 60)}…`)
    const body = envelope(
      {
        ...catalogued(ExpectationFailed),
        message: `The Expect header ${shown} is not supported: only 100-continue is; send the request without it (nothing was done)`
      },
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
  server.on("clientError", refusals.onClientError)
  server.on("connect", refusals.onConnect)
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
