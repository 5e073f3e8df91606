/**
 * A refusal given before the body is in (a body over the limit, an upload refused before its bytes are read)
 * closes the connection gently: the answer goes out first, then what the client is still sending is read and
 * dropped (bounded) before the close, so a client that writes its whole body before reading still gets the
 * answer instead of a reset.
 */
import { expect, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import { connect } from "node:net"
import { lingerIdle } from "../../src/http/Linger.js"
import { Harness, testServer } from "../support/harness.js"

/**
 * Sends `head` and `body` on a fresh connection, as a simple client does: the whole request first, reading
 * nothing until it is written (or the write failed), then the answer until the server closes.
 */
const sendThenRead = (url: string, head: string, body: Buffer, timeoutMs = 20_000) =>
  new Promise<{ readonly text: string; readonly error?: string }>((resolve) => {
    const { hostname, port } = new URL(url)
    const socket = connect(Number(port), hostname)
    socket.pause()
    const chunks: Array<Buffer> = []
    let error: string | undefined
    const timer = setTimeout(() => {
      error = "timeout"
      socket.destroy()
    }, timeoutMs)
    socket.on("data", (c) => chunks.push(c))
    // most clients stop at a failed write (EPIPE, reset) and never read the answer waiting for them
    socket.on("error", (e: Error & { code?: string }) => {
      error ??= e.code ?? e.message
    })
    socket.on("close", () => {
      clearTimeout(timer)
      resolve({ text: Buffer.concat(chunks).toString("utf8"), ...(error === undefined ? {} : { error }) })
    })
    socket.write(head)
    socket.end(body, () => socket.resume())
  })

layer(testServer())("lingering close after a refusal", (it) => {
  it.effect("20 of 20 over-limit bodies sent with Connection: close get their 413", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { port } = new URL(h.url)
      const body = Buffer.alloc(8 * 1024 * 1024, "x")
      const head =
        `POST /v1/agents HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${ws.secretTest}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`
      const outcomes: Array<string> = []
      for (let i = 0; i < 20; i++) {
        const { error, text } = yield* Effect.promise(() => sendThenRead(h.url, head, body))
        outcomes.push(error === undefined && /^HTTP\/1\.1 413 /.test(text) && text.includes(`"code":"payload_too_large"`) ? "413" : `${error ?? "no 413"}: ${text.slice(0, 40)}`)
      }
      expect(outcomes).toEqual(Array(20).fill("413"))
      // kept alive, the same: the answer, the rest dropped, then the close (the connection is mid-body otherwise)
      const kept = yield* Effect.promise(() => sendThenRead(h.url, head.replace("Connection: close", "Connection: keep-alive"), body))
      expect(kept.error).toBeUndefined()
      expect(kept.text).toMatch(/^HTTP\/1\.1 413 /)
      expect(kept.text).toMatch(/^connection: close\r$/im)
      // any refusal given before the body is in closes as gently: an upload's bytes (read by its handler, under
      // its own 25 MB cap) refused for an unknown key before the handler reads them
      const declared = yield* h.call("POST", "/v1/files", {
        key: ws.secretTest,
        body: { filename: "notes.txt", content_type: "text/plain", size_bytes: body.length }
      })
      expect(declared.status, declared.text).toBe(201)
      const upload =
        `PUT /v1/files/${declared.body.data.id}/content HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
        `Authorization: Bearer sk_test_unknown000000000000000000\r\nContent-Type: text/plain\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`
      const unknownKey = yield* Effect.promise(() => sendThenRead(h.url, upload, body))
      expect(unknownKey.error).toBeUndefined()
      expect(unknownKey.text).toMatch(/^HTTP\/1\.1 401 /)
      expect(unknownKey.text).toContain(`"code":"invalid_api_key"`)
    })
  )

  it.effect("a client that stops sending is closed on after the idle bound, by the Clock", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { hostname, port } = new URL(h.url)
      const answered = yield* Deferred.make<string>()
      const closed = yield* Deferred.make<void>()
      const socket = connect(Number(port), hostname)
      const chunks: Array<Buffer> = []
      socket.on("data", (c) => {
        chunks.push(c)
        const text = Buffer.concat(chunks).toString("utf8")
        if (text.endsWith("}}")) Deferred.unsafeDone(answered, Effect.succeed(text))
      })
      socket.on("error", () => {})
      socket.on("close", () => Deferred.unsafeDone(closed, Effect.void))
      // a body announced at 3 MB of which 1 MB comes, then nothing
      socket.write(
        `POST /v1/agents HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${ws.secretTest}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${3 * 1024 * 1024}\r\n\r\n${"x".repeat(1024 * 1024)}`
      )
      const text = yield* Deferred.await(answered).pipe(TestServices.provideLive, Effect.timeout("10 seconds"))
      expect(text).toMatch(/^HTTP\/1\.1 413 /)
      expect(text).toMatch(/^connection: close\r$/im)
      expect(text).toContain(`"code":"payload_too_large"`)
      // the connection stays open for the rest of the body until the client has been idle for the bound
      let waited = 0
      while (!(yield* Deferred.isDone(closed)) && waited < 60) {
        yield* TestClock.adjust("1 second")
        waited++
        // a bounded real pause for the socket's close to be reported
        yield* Deferred.await(closed).pipe(Effect.timeout("20 millis"), Effect.ignore, TestServices.provideLive)
      }
      socket.destroy()
      expect(yield* Deferred.isDone(closed)).toBe(true)
      expect(waited).toBeGreaterThanOrEqual(Duration.toSeconds(lingerIdle))
      expect(waited).toBeLessThan(30)
    })
  )
})
