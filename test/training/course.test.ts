/**
 * Modules, lessons and lesson sources through the real server: the type
 * guard, positions and reordering, wrong parents and another agent's ids,
 * deletion with and without `cascade`, `is_primary` (keys and isolation:
 * test/http/security-matrix.test.ts).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createAgent } from "../knowledge/support.js"
import { Harness, testServer } from "../support/harness.js"
import { addLesson, addModule, addSource, course, listSources, settledSources, trainingAgent } from "./support.js"

const titles = (rows: ReadonlyArray<any>) => rows.map((r) => `${r.position}:${r.title}`)

const chunkCount = (knowledgeSourceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: string }>`select count(*)::text as n from knowledge_chunks where source_id = ${knowledgeSourceId}`
  ).pipe(Effect.map((rows) => Number(rows[0]!.n)), Effect.orDie)

const knowledgeIdOf = (lessonSourceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`select knowledge_source_id as id from lesson_sources where id = ${lessonSourceId}`
  ).pipe(Effect.map((rows) => rows[0]!.id), Effect.orDie)

layer(testServer())("training course", (it) => {

  it.effect("a support agent gets 400 agent_type_mismatch on every level", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const calls = [
        h.call("POST", `/v1/agents/${agentId}/modules`, { key: ws.secretTest, body: { title: "M" } }),
        h.call("GET", `/v1/agents/${agentId}/modules`, { key: ws.secretTest }),
        h.call("GET", `/v1/agents/${agentId}/lessons?module_id=mod_00000000`, { key: ws.secretTest }),
        h.call("POST", `/v1/agents/${agentId}/sources`, {
          key: ws.secretTest,
          body: { lesson_id: "lsn_00000000", type: "text", title: "T", content: "x" }
        }),
        h.call("DELETE", `/v1/agents/${agentId}/sources/lsrc_00000000`, { key: ws.secretTest })
      ]
      for (const call of calls) {
        const r = yield* call
        expect(r.status, JSON.stringify(r.body)).toBe(400)
        expect(r.body.error).toMatchObject({ code: "agent_type_mismatch", param: "id" })
      }
    })
  )

  it.effect("modules: created last or at a position, moved, deleted; positions stay dense", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const agentId = yield* trainingAgent(h, key)
      const first = yield* addModule(h, key, agentId, { title: " Basics ", description: "Start here" })
      expect(first).toMatchObject({ object: "module", agent_id: agentId, title: "Basics", description: "Start here", position: 0 })
      expect(first.id).toMatch(/^mod_[A-Za-z0-9]{8,64}$/)
      yield* addModule(h, key, agentId, { title: "Advanced" })
      const intro = yield* addModule(h, key, agentId, { title: "Intro", position: 0 })
      yield* addModule(h, key, agentId, { title: "Extra", position: 99 })
      const list = () => Effect.map(h.call("GET", `/v1/agents/${agentId}/modules`, { key }), (r) => r.body.data)
      expect(titles(yield* list())).toEqual(["0:Intro", "1:Basics", "2:Advanced", "3:Extra"])

      const moved = yield* h.call("PATCH", `/v1/agents/${agentId}/modules/${intro.id}`, { key, body: { position: 2, title: "Welcome" } })
      expect(moved.status, JSON.stringify(moved.body)).toBe(200)
      expect(moved.body.data).toMatchObject({ title: "Welcome", position: 2 })
      expect(titles(yield* list())).toEqual(["0:Basics", "1:Advanced", "2:Welcome", "3:Extra"])

      const gone = yield* h.call("DELETE", `/v1/agents/${agentId}/modules/${first.id}`, { key })
      expect(gone.body.data).toEqual({ id: first.id, object: "module", deleted: true })
      expect(titles(yield* list())).toEqual(["0:Advanced", "1:Welcome", "2:Extra"])

      const bad = yield* h.call("POST", `/v1/agents/${agentId}/modules`, { key, body: { title: "" } })
      expect(bad.status).toBe(400)
      expect(bad.body.error.code).toBe("parameter_invalid")
    })
  )

  it.effect("lessons: listed per module in order, moved within and across modules", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const agentId = yield* trainingAgent(h, key)
      const a = yield* addModule(h, key, agentId, { title: "A" })
      const b = yield* addModule(h, key, agentId, { title: "B" })
      const one = yield* addLesson(h, key, agentId, { module_id: a.id, title: "One", content: "First lesson" })
      expect(one).toMatchObject({ object: "lesson", module_id: a.id, title: "One", content: "First lesson", position: 0 })
      expect(one.id).toMatch(/^lsn_/)
      yield* addLesson(h, key, agentId, { module_id: a.id, title: "Two" })
      const zero = yield* addLesson(h, key, agentId, { module_id: a.id, title: "Zero", position: 0 })
      const lessonsOf = (moduleId: string) =>
        Effect.map(h.call("GET", `/v1/agents/${agentId}/lessons?module_id=${moduleId}`, { key }), (r) => titles(r.body.data))
      expect(yield* lessonsOf(a.id)).toEqual(["0:Zero", "1:One", "2:Two"])

      yield* h.call("PATCH", `/v1/agents/${agentId}/lessons/${zero.id}`, { key, body: { position: 5 } })
      expect(yield* lessonsOf(a.id)).toEqual(["0:One", "1:Two", "2:Zero"])

      const across = yield* h.call("PATCH", `/v1/agents/${agentId}/lessons/${one.id}`, { key, body: { module_id: b.id } })
      expect(across.status, JSON.stringify(across.body)).toBe(200)
      expect(across.body.data).toMatchObject({ module_id: b.id, position: 0 })
      expect(yield* lessonsOf(a.id)).toEqual(["0:Two", "1:Zero"])
      expect(yield* lessonsOf(b.id)).toEqual(["0:One"])

      const missingFilter = yield* h.call("GET", `/v1/agents/${agentId}/lessons`, { key })
      expect(missingFilter.status).toBe(400)
    })
  )

  it.effect("wrong parents and another agent's ids are 404 naming the parameter", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const mine = yield* course(h, key)
      const theirs = yield* course(h, key)
      const theirSource = yield* addSource(h, key, theirs.agentId, {
        lesson_id: theirs.lessonId,
        type: "text",
        title: "T",
        content: "Some text."
      })
      const expect404 = (r: { status: number; body: any }, param: string) => {
        expect(r.status, JSON.stringify(r.body)).toBe(404)
        expect(r.body.error).toMatchObject({ code: "resource_missing", param })
      }
      const base = `/v1/agents/${mine.agentId}`
      expect404(yield* h.call("POST", `${base}/lessons`, { key, body: { module_id: theirs.moduleId, title: "L" } }), "module_id")
      expect404(yield* h.call("GET", `${base}/lessons?module_id=${theirs.moduleId}`, { key }), "module_id")
      expect404(
        yield* h.call("PATCH", `${base}/lessons/${mine.lessonId}`, { key, body: { module_id: theirs.moduleId } }),
        "module_id"
      )
      expect404(
        yield* h.call("POST", `${base}/sources`, { key, body: { lesson_id: theirs.lessonId, type: "text", title: "T", content: "x" } }),
        "lesson_id"
      )
      expect404(yield* h.call("GET", `${base}/sources?lesson_id=${theirs.lessonId}`, { key }), "lesson_id")
      expect404(yield* h.call("PATCH", `${base}/modules/${theirs.moduleId}`, { key, body: { title: "x" } }), "module_id")
      expect404(yield* h.call("DELETE", `${base}/modules/${theirs.moduleId}?cascade=true`, { key }), "module_id")
      expect404(yield* h.call("PATCH", `${base}/lessons/${theirs.lessonId}`, { key, body: { title: "x" } }), "lesson_id")
      expect404(yield* h.call("DELETE", `${base}/lessons/${theirs.lessonId}?cascade=true`, { key }), "lesson_id")
      expect404(yield* h.call("PATCH", `${base}/sources/${theirSource.id}`, { key, body: { title: "x" } }), "source_id")
      expect404(yield* h.call("DELETE", `${base}/sources/${theirSource.id}`, { key }), "source_id")
      // theirs is untouched
      expect(yield* listSources(h, key, theirs.agentId, theirs.lessonId)).toHaveLength(1)
      // a lesson source is not a knowledge source of the agent
      const knowledge = yield* h.call("GET", `/v1/agents/${theirs.agentId}/knowledge`, { key })
      expect(knowledge.body.data).toEqual([])
    })
  )

  it.effect("a parent with children is 409 resource_has_children unless ?cascade=true, which takes them along", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const { agentId, lessonId, moduleId } = yield* course(h, key)
      const source = yield* addSource(h, key, agentId, {
        lesson_id: lessonId,
        type: "text",
        title: "Notes",
        content: "Our office opens at nine every weekday morning."
      })
      yield* settledSources(h, key, agentId, lessonId)
      const knowledgeId = yield* knowledgeIdOf(source.id)
      expect(yield* chunkCount(knowledgeId)).toBeGreaterThan(0)

      const lessonRefused = yield* h.call("DELETE", `/v1/agents/${agentId}/lessons/${lessonId}`, { key })
      expect(lessonRefused.status).toBe(409)
      expect(lessonRefused.body.error).toMatchObject({ code: "resource_has_children", param: "cascade" })
      expect(lessonRefused.body.error.message).toContain("cascade=true")
      const moduleRefused = yield* h.call("DELETE", `/v1/agents/${agentId}/modules/${moduleId}?cascade=false`, { key })
      expect(moduleRefused.status).toBe(409)
      expect(moduleRefused.body.error.code).toBe("resource_has_children")

      const cascaded = yield* h.call("DELETE", `/v1/agents/${agentId}/modules/${moduleId}?cascade=true`, { key })
      expect(cascaded.status, JSON.stringify(cascaded.body)).toBe(200)
      expect(cascaded.body.data).toEqual({ id: moduleId, object: "module", deleted: true })
      expect((yield* h.call("GET", `/v1/agents/${agentId}/modules`, { key })).body.data).toEqual([])
      const lessons = yield* h.call("GET", `/v1/agents/${agentId}/lessons?module_id=${moduleId}`, { key })
      expect(lessons.status).toBe(404)
      expect(yield* chunkCount(knowledgeId)).toBe(0)

      // an empty lesson goes without cascade
      const again = yield* course(h, key)
      const plain = yield* h.call("DELETE", `/v1/agents/${again.agentId}/lessons/${again.lessonId}`, { key })
      expect(plain.status).toBe(200)
    })
  )

  it.effect("is_primary: the first source only; a PATCH sending it is refused; deleting it promotes none", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const key = ws.secretTest
      const { agentId, lessonId } = yield* course(h, key)
      const text = (title: string) => ({ lesson_id: lessonId, type: "text", title, content: `About ${title}.` })
      const first = yield* addSource(h, key, agentId, text("first"))
      expect(first).toMatchObject({ object: "lesson_source", lesson_id: lessonId, is_primary: true, position: 0, type: "text" })
      expect(first.id).toMatch(/^lsrc_/)
      const second = yield* addSource(h, key, agentId, text("second"))
      const front = yield* addSource(h, key, agentId, { ...text("front"), position: 0 })
      expect([second.is_primary, front.is_primary]).toEqual([false, false])
      expect(titles(yield* listSources(h, key, agentId, lessonId))).toEqual(["0:front", "1:first", "2:second"])

      for (const value of [false, true]) {
        const refused = yield* h.call("PATCH", `/v1/agents/${agentId}/sources/${second.id}`, { key, body: { is_primary: value } })
        expect(refused.status).toBe(400)
        expect(refused.body.error).toMatchObject({ code: "parameter_invalid", param: "is_primary" })
      }
      const moved = yield* h.call("PATCH", `/v1/agents/${agentId}/sources/${second.id}`, {
        key,
        body: { position: 0, title: "renamed" }
      })
      expect(moved.status, JSON.stringify(moved.body)).toBe(200)
      expect(moved.body.data).toMatchObject({ position: 0, title: "renamed", is_primary: false })

      yield* h.call("DELETE", `/v1/agents/${agentId}/sources/${first.id}`, { key })
      const after = yield* listSources(h, key, agentId, lessonId)
      expect(after.map((s) => [s.title, s.position, s.is_primary])).toEqual([
        ["renamed", 0, false],
        ["front", 1, false]
      ])
      const later = yield* addSource(h, key, agentId, text("later"))
      expect(later.is_primary).toBe(false)
    })
  )
})
