/**
 * A real HTTP server on 127.0.0.1 and a random port, for tests that need a peer
 * of the service (webhook receivers, fake OpenAI-compatible servers, pages to
 * fetch). It reads each request's body whole before `answer` runs, records it,
 * and closes with the scope, open connections included.
 */
import * as Effect from "effect/Effect"
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The raw bytes, for multipart and other non-text bodies. */
  readonly bytes: Buffer
  /** The bytes as UTF-8. */
  readonly body: string
}

export interface Loopback {
  readonly server: Server
  readonly port: number
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** Every request, in arrival order. */
  readonly received: Array<Received>
  /** TCP connections accepted so far (keep-alive checks). */
  readonly connections: { count: number }
}

export type Answer = (request: Received, res: ServerResponse, req: IncomingMessage) => void

/** Writes a JSON answer. */
export const json = (res: ServerResponse, status: number, value: unknown): void => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(value))
}

export const loopbackServer = (answer: Answer) =>
  Effect.acquireRelease(
    Effect.async<Loopback>((resume) => {
      const received: Array<Received> = []
      const connections = { count: 0 }
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const bytes = Buffer.concat(chunks)
          const request = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, bytes, body: bytes.toString("utf8") }
          received.push(request)
          answer(request, res, req)
        })
      })
      server.on("connection", () => {
        connections.count++
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, port, origin: `http://127.0.0.1:${port}`, received, connections }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

/** The JSON requests a fake API received, as its assertions read them: path, `Authorization`, parsed body. */
export interface SeenJson {
  readonly path: string
  readonly authorization: string | undefined
  readonly body: any
}

export const seenJson = (request: Received): SeenJson => ({
  path: request.path,
  authorization: request.headers.authorization,
  body: request.body === "" ? undefined : JSON.parse(request.body)
})
