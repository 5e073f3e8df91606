/**
 * The `openai` provider's transcription against a fake OpenAI-compatible
 * server on 127.0.0.1: a real multipart upload to `/audio/transcriptions`
 * (file, model, response format), its text indexed as the lesson source, and
 * a server that reports more than 10 minutes failing the source.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { Ai, layerOpenAi, makeLocal } from "../../layers/Ai.js"
import { eventsOfType } from "../knowledge/support.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { json, loopbackServer, type Received } from "../support/loopback.js"
import { wav } from "./audioBytes.js"
import { addSource, course, settledSources } from "./support.js"

/** Every request the fake server received (uploads are multipart: read `bytes`). */
const uploads: Array<Received> = []

/** Answers `/v1/audio/transcriptions` in `verbose_json`; a file named `long.wav` is reported as 11 minutes long. */
const fakeServer = Effect.map(
  loopbackServer((request, res) => {
    uploads.push(request)
    json(res, 200, {
      task: "transcribe",
      language: "english",
      duration: request.bytes.includes('filename="long.wav"') ? 660 : 2,
      text: "Centre the clay on the wheel before you open it with your thumbs."
    })
  }),
  (server) => ({ baseUrl: `${server.origin}/v1` })
)

/** The local provider for everything but transcription, which goes to the fake server through the openai layer. */
const transcribingAi = Layer.unwrapScoped(
  Effect.map(fakeServer, ({ baseUrl }) =>
    Layer.effect(
      Ai,
      Effect.map(Ai, (openai) => ({ ...makeLocal(), transcribe: openai.transcribe }))
    ).pipe(
      Layer.provide(
        layerOpenAi({
          baseUrl,
          apiKey: Redacted.make("sk-fake"),
          chatModel: "chat",
          embeddingModel: "embed",
          transcriptionModel: "whisper-test"
        })
      )
    )
  )
)

const upload = (h: HarnessShape, key: string, filename: string, bytes: Uint8Array) =>
  Effect.gen(function* () {
    const declared = yield* h.call("POST", "/v1/files", {
      key,
      body: { filename, content_type: "audio/wav", size_bytes: bytes.length }
    })
    const id = declared.body.data.id as string
    yield* Effect.promise(() =>
      fetch(`${h.url}/v1/files/${id}/content`, {
        method: "PUT",
        headers: { authorization: `Bearer ${key}`, "content-type": "audio/wav" },
        body: new Uint8Array(bytes)
      })
    )
    yield* h.call("POST", `/v1/files/${id}/confirm`, { key })
    return id
  })

layer(testServer({}, { ai: transcribingAi }))("openai transcription", (it) => {
  it.effect("an audio source is uploaded as multipart to /audio/transcriptions and indexed from the text", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const { agentId, lessonId } = yield* course(h, key)
      const audio = wav(2)
      const fileId = yield* upload(h, key, "wheel.wav", audio)
      const created = yield* addSource(h, key, agentId, { lesson_id: lessonId, type: "audio", file_id: fileId, title: "Wheel" })
      const [done] = yield* settledSources(h, key, agentId, lessonId)
      expect(done, JSON.stringify(done)).toMatchObject({ id: created.id, status: "indexed", type: "audio" })
      expect(done.chunk_count).toBeGreaterThan(0)

      const sent = uploads.find((u) => u.bytes.includes('filename="wheel.wav"'))!
      expect(sent.path).toBe("/v1/audio/transcriptions")
      expect(sent.headers.authorization).toBe("Bearer sk-fake")
      const contentType = sent.headers["content-type"] ?? ""
      const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(contentType)?.[1]
      expect(boundary, contentType).toBeDefined()
      const text = sent.bytes.toString("latin1")
      expect(text).toMatch(/name="model"\r\n\r\nwhisper-test\r\n/)
      expect(text).toMatch(/name="response_format"\r\n\r\nverbose_json\r\n/)
      expect(text).toContain("Content-Type: audio/wav")
      // the file part carries the uploaded bytes unchanged
      expect(sent.bytes.includes(Buffer.from(audio))).toBe(true)

      const events = yield* eventsOfType(ws.workspace.id, "course.lesson.source.indexed")
      expect(events.map((e) => e.data.source.id)).toEqual([created.id])
      const reply = yield* h.call("POST", `/v1/agents/${agentId}/messages`, {
        key,
        body: { message: "How do I centre the clay on the wheel?", stream: false }
      })
      expect(reply.body.data.sources.some((s: any) => s.lesson?.id === lessonId), JSON.stringify(reply.body)).toBe(true)
    })
  )

  it.effect("audio the server reports as longer than 10 minutes fails the source with audio_too_long", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const { agentId, lessonId } = yield* course(h, key)
      // a header that does not tell its length (unknown data size) is let through at creation
      const bytes = wav(1)
      bytes.set([0, 0, 0, 0], 40)
      bytes.set([0, 0, 0, 0], 28)
      const fileId = yield* upload(h, key, "long.wav", bytes)
      yield* addSource(h, key, agentId, { lesson_id: lessonId, type: "audio", file_id: fileId })
      const [failed] = yield* settledSources(h, key, agentId, lessonId)
      expect(failed).toMatchObject({ status: "failed", error_code: "audio_too_long" })
      expect(failed.error).toContain("11 min 0 s")
    })
  )
})
