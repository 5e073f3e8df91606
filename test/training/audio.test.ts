/**
 * Audio lesson sources with the `local` AI provider: without a transcript the
 * source fails with a clear error, with one it is indexed; audio over 10
 * minutes is refused at creation; a transcription that runs past the job's
 * lease (under TestClock) keeps its lease, is not claimed again, and ends.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { Ai, makeLocal } from "../../layers/Ai.js"
import { PHASE_WRITE_DELAY } from "../../src/knowledge/PhaseWriter.js"
import { eventsOfType } from "../knowledge/support.js"
import { eventually } from "../support/eventually.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { m4a, wav } from "./audioBytes.js"
import { addSource, course, listSources, settledSources } from "./support.js"

// a transcription of a file named `slow.wav` waits for the test to let it go; others are the local provider's
let releaseSlow: (() => void) | undefined
let slowStarted = 0
const slowAi = Layer.sync(Ai, () => {
  const local = makeLocal()
  return {
    ...local,
    transcribe: (audio) =>
      audio.filename === "slow.wav"
        ? Effect.promise(
            () =>
              new Promise<void>((resolve) => {
                slowStarted++
                releaseSlow = resolve
              })
          ).pipe(Effect.as({ text: "The glaze must dry for a whole day before the second firing.", seconds: undefined }))
        : local.transcribe(audio)
  }
})

const upload = (h: HarnessShape, key: string, filename: string, contentType: string, bytes: Uint8Array) =>
  Effect.gen(function* () {
    const declared = yield* h.call("POST", "/v1/files", { key, body: { filename, content_type: contentType, size_bytes: bytes.length } })
    expect(declared.status, JSON.stringify(declared.body)).toBe(201)
    const id = declared.body.data.id as string
    const put = yield* Effect.promise(() =>
      fetch(`${h.url}/v1/files/${id}/content`, {
        method: "PUT",
        headers: { authorization: `Bearer ${key}`, "content-type": contentType },
        body: new Uint8Array(bytes)
      })
    )
    expect(put.status).toBeLessThan(300)
    yield* h.call("POST", `/v1/files/${id}/confirm`, { key })
    return id
  })

const leaseOf = (knowledgeSourceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ locked_until: Date | string | null; claims: number }>`
      select locked_until, claims from jobs where queue = 'ingest' and payload like ${`%${knowledgeSourceId}%`}`
  ).pipe(
    Effect.map((rows) => rows.map((r) => ({ lockedUntil: r.locked_until === null ? null : new Date(r.locked_until).getTime(), claims: Number(r.claims) }))),
    Effect.orDie
  )

layer(testServer({}, { ai: slowAi }))("audio lesson sources", (it) => {
  it.effect("local provider: no transcript fails the source clearly; a transcript is indexed", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const { agentId, lessonId } = yield* course(h, key)
      const fileId = yield* upload(h, key, "talk.wav", "audio/wav", wav(2))
      const bare = yield* addSource(h, key, agentId, { lesson_id: lessonId, type: "audio", file_id: fileId })
      expect(bare).toMatchObject({ type: "audio", source_ref: fileId, title: "talk.wav", is_primary: true })
      const [failed] = yield* settledSources(h, key, agentId, lessonId)
      expect(failed).toMatchObject({ status: "failed", error_code: "transcription_failed" })
      expect(failed.error).toContain("transcript")
      const failures = yield* eventsOfType(ws.workspace.id, "course.lesson.source.failed")
      expect(failures[0].data.error.code).toBe("transcription_failed")

      const told = yield* addSource(h, key, agentId, {
        lesson_id: lessonId,
        type: "audio",
        file_id: fileId,
        title: "Kiln talk",
        transcript: "Load the kiln from the back shelf first and never open it above two hundred degrees."
      })
      const settled = yield* settledSources(h, key, agentId, lessonId)
      expect(settled.find((s) => s.id === told.id)).toMatchObject({ status: "indexed", type: "audio", title: "Kiln talk" })
      const indexed = yield* eventsOfType(ws.workspace.id, "course.lesson.source.indexed")
      expect(indexed.map((e) => e.data.source.id)).toEqual([told.id])
    })
  )

  it.effect("audio over 10 minutes is refused at creation; non-audio files and stray transcripts too", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const { agentId, lessonId } = yield* course(h, key)
      const post = (body: Record<string, unknown>) => h.call("POST", `/v1/agents/${agentId}/sources`, { key, body })
      const long = yield* upload(h, key, "lecture.m4a", "audio/mp4", m4a(11 * 60))
      const refused = yield* post({ lesson_id: lessonId, type: "audio", file_id: long, transcript: "words" })
      expect(refused.status).toBe(400)
      expect(refused.body.error).toMatchObject({ code: "parameter_invalid", param: "file_id" })
      expect(refused.body.error.message).toContain("11 min 0 s")
      expect(refused.body.error.message).toContain("10 minutes")
      const longWav = yield* upload(h, key, "long.wav", "audio/wav", wav(601, 64))
      expect((yield* post({ lesson_id: lessonId, type: "audio", file_id: longWav })).status).toBe(400)

      const text = yield* upload(h, key, "notes.txt", "text/plain", new TextEncoder().encode("plain notes"))
      const notAudio = yield* post({ lesson_id: lessonId, type: "audio", file_id: text })
      expect([notAudio.status, notAudio.body.error.param]).toEqual([400, "file_id"])
      const stray = yield* post({ lesson_id: lessonId, type: "text", title: "T", content: "x", transcript: "y" })
      expect([stray.status, stray.body.error.param]).toEqual([400, "transcript"])
      const noFile = yield* post({ lesson_id: lessonId, type: "audio" })
      expect([noFile.status, noFile.body.error.code, noFile.body.error.param]).toEqual([400, "parameter_missing", "file_id"])
      expect(yield* listSources(h, key, agentId, lessonId)).toEqual([])
    })
  )

  it.effect("a transcription running past the lease keeps it: extended, never claimed again, then indexed", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const { agentId, lessonId } = yield* course(h, key)
      const fileId = yield* upload(h, key, "slow.wav", "audio/wav", wav(3))
      const created = yield* addSource(h, key, agentId, { lesson_id: lessonId, type: "audio", file_id: fileId })
      yield* eventually(
        Effect.sync(() => slowStarted),
        (n) => n === 1,
        { label: "transcription started" }
      )
      // a phase is shown once it has lasted PHASE_WRITE_DELAY
      yield* TestClock.adjust(PHASE_WRITE_DELAY)
      const [running] = yield* eventually(listSources(h, key, agentId, lessonId), ([s]) => s?.phase === "extracting", {
        label: "extracting shown"
      })
      expect(running).toMatchObject({ status: "processing", phase: "extracting", attempts: 1 })
      const knowledgeId = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ id: string }>`select knowledge_source_id as id from lesson_sources where id = ${created.id}`
      ).pipe(Effect.map((rows) => rows[0]!.id), Effect.orDie)
      const [first] = yield* leaseOf(knowledgeId)
      expect(first!.claims).toBe(1)

      // ten minutes in 30-second steps: the 60-second lease is extended every 20 seconds
      let lastLease = first!.lockedUntil!
      for (let step = 1; step <= 20; step++) {
        yield* TestClock.adjust("30 seconds")
        const now = yield* TestClock.currentTimeMillis
        const [lease] = yield* eventually(leaseOf(knowledgeId), (rows) => (rows[0]?.lockedUntil ?? 0) > now, {
          label: `lease extended past step ${step}`
        })
        expect(lease!.claims).toBe(1)
        lastLease = lease!.lockedUntil!
      }
      expect(lastLease).toBeGreaterThan(first!.lockedUntil! + 9 * 60_000)
      expect(slowStarted).toBe(1)
      const [still] = yield* listSources(h, key, agentId, lessonId)
      expect(still).toMatchObject({ status: "processing", phase: "extracting", attempts: 1 })

      releaseSlow!()
      const [done] = yield* settledSources(h, key, agentId, lessonId)
      expect(done).toMatchObject({ status: "indexed", attempts: 1 })
      expect(slowStarted).toBe(1)
      const indexed = yield* eventsOfType(ws.workspace.id, "course.lesson.source.indexed")
      expect(indexed.map((e) => e.data.source.id)).toEqual([created.id])
    })
  )
})
