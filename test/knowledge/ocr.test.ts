/**
 * OCR end to end with the real tesseract layer: a PNG drawn here (an SVG text
 * line rendered by sharp) is uploaded, becomes a `file_id` source, and its
 * chunks hold the text that was drawn.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import sharp from "sharp"
import * as Ocr from "../../layers/Ocr.js"
import { Harness, testServer } from "../support/harness.js"
import { createAgent, waitSettled } from "./support.js"

const drawn = "Refunds take ten days"

const pngOf = (text: string) =>
  Effect.promise(() =>
    sharp(
      Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="200">` +
          `<rect width="100%" height="100%" fill="white"/>` +
          `<text x="40" y="120" font-family="DejaVu Sans, sans-serif" font-size="60" fill="black">${text}</text></svg>`
      )
    )
      .png()
      .toBuffer()
  ).pipe(Effect.map((buffer) => Uint8Array.from(buffer)))

layer(testServer({}, { ocr: Ocr.layerDecoders }), { timeout: 120_000 })("OCR", (it) => {
  it.effect(
    "a PNG with known text becomes a source whose chunks contain that text",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        const png = yield* pngOf(drawn)
        const declared = yield* h.call("POST", "/v1/files", {
          key: ws.secretTest,
          body: { filename: "notice.png", content_type: "image/png", size_bytes: png.length }
        })
        const fileId = declared.body.data.id as string
        const uploaded = yield* Effect.promise(() =>
          fetch(`${h.url}/v1/files/${fileId}/content`, {
            method: "PUT",
            headers: { authorization: `Bearer ${ws.secretTest}`, "content-type": "image/png" },
            body: png
          })
        )
        expect(uploaded.status).toBe(200)
        yield* h.call("POST", `/v1/files/${fileId}/confirm`, { key: ws.secretTest })
        const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
          key: ws.secretTest,
          body: { type: "file_id", file_id: fileId }
        })
        expect(created.status, JSON.stringify(created.body)).toBe(201)
        const [done] = yield* waitSettled(h, ws.secretTest, agentId, [created.body.data.id], 6000)
        expect(done.status, JSON.stringify(done)).toBe("indexed")
        const chunks = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ content: string }>`select content from knowledge_chunks where source_id = ${done.id}`
        ).pipe(Effect.orDie)
        expect(chunks.map((c) => c.content).join(" ").replace(/\s+/g, " ")).toContain(drawn)
      }),
    120_000
  )
})
