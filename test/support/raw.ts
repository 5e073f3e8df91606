/**
 * HTTP below `fetch`: raw bytes on a socket (for what `fetch` refuses to send,
 * like bad header bytes) and chunked bodies. Each call is bounded by a timeout
 * and reports a dropped connection instead of throwing.
 */
import { request as httpRequest } from "node:http"
import { connect } from "node:net"

export interface RawReply {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: any
}

export type RawResult = RawReply | { readonly dropped: string }

const parseBody = (text: string) => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** Writes `bytes` as is and reads one response until the server closes. */
export const rawExchange = (url: string, bytes: string, timeoutMs = 5000): Promise<RawResult> =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(url)
    const socket = connect(Number(port), hostname)
    const chunks: Array<Buffer> = []
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ dropped: "timeout" })
    }, timeoutMs)
    socket.on("data", (c) => chunks.push(c))
    socket.on("error", () => {})
    socket.on("close", () => {
      clearTimeout(timer)
      const text = Buffer.concat(chunks).toString("utf8")
      const match = /^HTTP\/1\.1 (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(text)
      if (match === null) return resolve({ dropped: text === "" ? "closed without an answer" : "unparsable answer" })
      const headers: Record<string, string> = {}
      for (const line of match[2]!.split("\r\n")) {
        const at = line.indexOf(":")
        headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim()
      }
      resolve({ status: Number(match[1]), headers, body: parseBody(match[3]!) })
    })
    socket.write(bytes)
  })

/** A request whose body goes out in chunks (no Content-Length). */
export const chunkedRequest = (
  url: string,
  options: { readonly method: string; readonly headers: Record<string, string>; readonly chunks: Iterable<string> },
  timeoutMs = 10_000
): Promise<RawResult> =>
  new Promise((resolve) => {
    const req = httpRequest(url, { method: options.method, headers: options.headers, timeout: timeoutMs }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c) => chunks.push(c))
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parseBody(Buffer.concat(chunks).toString("utf8")) })
      )
      res.on("error", (e) => resolve({ dropped: e.message }))
    })
    req.on("timeout", () => req.destroy(new Error("timeout")))
    req.on("error", (e) => resolve({ dropped: e.message }))
    const write = async () => {
      for (const chunk of options.chunks) {
        if (req.destroyed) return
        if (!req.write(chunk)) await new Promise<void>((r) => req.once("drain", () => r()).once("close", () => r()))
      }
      req.end()
    }
    void write()
  })
