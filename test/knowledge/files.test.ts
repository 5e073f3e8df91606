/**
 * Files through the real server: declare, upload raw bytes (any of the upload
 * media types, 25 MB counted while streaming, type checked by magic bytes),
 * confirm, read, delete. Keys and isolation: test/http/security-matrix.test.ts.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { tinyPng } from "./support.js"

const put = (h: HarnessShape, key: string, path: string, body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array<ArrayBuffer>>, contentType: string) =>
  Effect.promise(async () => {
    const init: RequestInit & { duplex?: "half" } = {
      method: "PUT",
      headers: { authorization: `Bearer ${key}`, "content-type": contentType },
      body,
      ...(body instanceof ReadableStream ? { duplex: "half" } : {})
    }
    const response = await fetch(`${h.url}${path}`, init).catch((error: unknown) => error as Error)
    if (response instanceof Error) return { status: 0, body: { error: { code: response.message } } as any }
    const text = await response.text()
    return { status: response.status, body: text === "" ? null : (JSON.parse(text) as any) }
  })

const declare = (h: HarnessShape, key: string, body: Record<string, unknown> = {}) =>
  Effect.map(
    h.call("POST", "/v1/files", {
      key,
      body: { filename: "pixel.png", content_type: "image/png", size_bytes: tinyPng.length, ...body }
    }),
    (r) => {
      expect(r.status, JSON.stringify(r.body)).toBe(201)
      return r.body.data
    }
  )

layer(testServer())("files", (it) => {
  it.effect("declare, upload, confirm, read, delete", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const file = yield* declare(h, ws.secretTest)
      expect(file).toMatchObject({ object: "file", status: "pending", received: false, content_type: "image/png" })
      expect(file.id).toMatch(/^file_/)
      expect(file.upload_url).toBe(`http://127.0.0.1/v1/files/${file.id}/content`)

      const early = yield* h.call("POST", `/v1/files/${file.id}/confirm`, { key: ws.secretTest })
      expect(early.status).toBe(409)
      expect(early.body.error.code).toBe("file_not_uploaded")

      const uploaded = yield* put(h, ws.secretTest, `/v1/files/${file.id}/content`, tinyPng, "image/png")
      expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200)
      expect(uploaded.body.data).toMatchObject({ received: true, size_bytes: tinyPng.length, status: "pending" })

      const confirmed = yield* h.call("POST", `/v1/files/${file.id}/confirm`, { key: ws.secretTest })
      expect(confirmed.status).toBe(200)
      expect(confirmed.body.data.status).toBe("uploaded")
      expect(confirmed.body.data.uploaded_at).not.toBeNull()
      const again = yield* h.call("POST", `/v1/files/${file.id}/confirm`, { key: ws.secretTest })
      expect(again.body.data).toEqual(confirmed.body.data)

      const read = yield* h.call("GET", `/v1/files/${file.id}`, { key: ws.secretTest })
      expect(read.body.data).toEqual(confirmed.body.data)

      const deleted = yield* h.call("DELETE", `/v1/files/${file.id}`, { key: ws.secretTest })
      expect(deleted.body.data).toEqual({ id: file.id, object: "file", deleted: true })
      const gone = yield* h.call("GET", `/v1/files/${file.id}`, { key: ws.secretTest })
      expect(gone.status).toBe(404)
      expect(gone.body.error.code).toBe("resource_missing")
    })
  )

  it.effect("bytes must be of the declared type (magic bytes), in an upload media type", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const png = yield* declare(h, ws.secretTest)
      const text = new TextEncoder().encode("just some text, not an image")
      const mismatch = yield* put(h, ws.secretTest, `/v1/files/${png.id}/content`, text, "application/octet-stream")
      expect(mismatch.status).toBe(415)
      expect(mismatch.body.error.code).toBe("unsupported_media_type")

      const json = yield* put(h, ws.secretTest, `/v1/files/${png.id}/content`, tinyPng, "application/json")
      expect(json.status).toBe(415)
      expect(json.body.error.param).toBe("Content-Type")

      const pdf = yield* declare(h, ws.secretTest, { filename: "a.pdf", content_type: "application/pdf" })
      const notPdf = yield* put(h, ws.secretTest, `/v1/files/${pdf.id}/content`, tinyPng, "application/pdf")
      expect(notPdf.status).toBe(415)

      const md = yield* declare(h, ws.secretTest, { filename: "notes.md", content_type: "text/markdown" })
      const markdown = yield* put(h, ws.secretTest, `/v1/files/${md.id}/content`, new TextEncoder().encode("# Notes\n\nHello"), "text/markdown")
      expect(markdown.status).toBe(200)
    })
  )

  it.effect("25 MB at most: declared, announced by Content-Length, or counted while streaming", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const big = yield* h.call("POST", "/v1/files", {
        key: ws.secretTest,
        body: { filename: "big.pdf", content_type: "application/pdf", size_bytes: 25 * 1024 * 1024 + 1 }
      })
      expect(big.status).toBe(413)
      expect(big.body.error.param).toBe("size_bytes")

      const file = yield* declare(h, ws.secretTest, { filename: "a.txt", content_type: "text/plain", size_bytes: 10 })
      const limit = 25 * 1024 * 1024
      let sent = 0
      const chunk = new Uint8Array(1024 * 1024).fill(0x61)
      // no Content-Length: chunked, so only the count while streaming can stop it
      const stream = new ReadableStream<Uint8Array<ArrayBuffer>>({
        pull(controller) {
          if (sent > limit) return controller.close()
          const piece = sent + chunk.length > limit ? chunk.subarray(0, limit + 1 - sent) : chunk
          sent += piece.length
          controller.enqueue(piece)
        }
      })
      const streamed = yield* put(h, ws.secretTest, `/v1/files/${file.id}/content`, stream, "text/plain")
      // the server may answer 413 and close before the client finished sending
      if (streamed.status !== 0) {
        expect(streamed.status).toBe(413)
        expect(streamed.body.error.code).toBe("payload_too_large")
      }
      const after = yield* h.call("GET", `/v1/files/${file.id}`, { key: ws.secretTest })
      expect(after.body.data.received).toBe(false)

      const exact = yield* put(h, ws.secretTest, `/v1/files/${file.id}/content`, new Uint8Array(2 * 1024 * 1024 + 10).fill(0x62), "text/plain")
      expect(exact.status, "more than the 2 MB JSON cap is fine here").toBe(200)
    })
  )

})
