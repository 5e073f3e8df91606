import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { SourceId } from "../../schema/Ids.js"
import { Harness, testEpoch, testServer } from "../support/harness.js"
import { createAgent, createCategory, createQa, embeddingOf, seedQa } from "./support.js"

const srcA = SourceId.make("src_aaaaaaaaaaaa")

layer(testServer())("Q&A", (it) => {

  it.effect("creates a manual Q&A with its embedding stored, never returned", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const reply = yield* createQa(h, ws.secretTest, agent, { question: "  Where is my invoice?  " })
      expect(reply.status).toBe(201)
      const qa = reply.body.data
      expect(qa).toEqual({
        id: qa.id,
        object: "qa",
        agent_id: agent,
        question: "Where is my invoice?",
        answer: "Use the link on the sign-in page.",
        category_id: null,
        origin: "manual",
        source_id: null,
        created_at: new Date(testEpoch).toISOString(),
        updated_at: new Date(testEpoch).toISOString()
      })
      expect(qa.id).toMatch(/^qa_[A-Za-z0-9]{8,64}$/)
      const embedding = yield* embeddingOf(qa.id)
      expect(embedding).toHaveLength(384)
      const norm = Math.sqrt(embedding!.reduce((s, x) => s + x * x, 0))
      expect(norm).toBeCloseTo(1, 3)
      expect(reply.text).not.toContain("embedding")
    })
  )

  it.effect("files a Q&A under a category of the same agent only", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const other = yield* createAgent(h, ws.secretTest)
      const billing = (yield* createCategory(h, ws.secretTest, agent, { name: "Billing" })).body.data.id
      const foreign = (yield* createCategory(h, ws.secretTest, other, { name: "Billing" })).body.data.id

      const filed = yield* createQa(h, ws.secretTest, agent, { category_id: billing })
      expect(filed.status).toBe(201)
      expect(filed.body.data.category_id).toBe(billing)

      const crossed = yield* createQa(h, ws.secretTest, agent, { category_id: foreign })
      expect(crossed.status).toBe(404)
      expect(crossed.body.error).toMatchObject({ code: "resource_missing", param: "category_id" })
      const malformed = yield* createQa(h, ws.secretTest, agent, { category_id: "billing" })
      expect(malformed.status).toBe(400)
      expect(malformed.body.error).toMatchObject({ code: "parameter_invalid", param: "category_id" })
    })
  )

  it.effect("validates Q&A bodies and names the offending parameter", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const cases: ReadonlyArray<readonly [unknown, string, string]> = [
        [{ answer: "A." }, "parameter_missing", "question"],
        [{ question: "Q?" }, "parameter_missing", "answer"],
        [{ question: " ", answer: "A." }, "parameter_invalid", "question"],
        [{ question: "Q?", answer: "" }, "parameter_invalid", "answer"],
        [{ question: "Q".repeat(1001), answer: "A." }, "parameter_invalid", "question"],
        [{ question: "Q?", answer: "A".repeat(10_001) }, "parameter_invalid", "answer"],
        [{ question: "Q?", answer: "A.", origin: "generated" }, "parameter_invalid", "origin"],
        [{ question: 7, answer: "A." }, "parameter_invalid", "question"]
      ]
      for (const [body, code, param] of cases) {
        const reply = yield* h.call("POST", `/v1/agents/${agent}/qa`, { key: ws.secretTest, body })
        expect(reply.status, JSON.stringify(body).slice(0, 80)).toBe(400)
        expect(reply.body.error, JSON.stringify(body).slice(0, 80)).toMatchObject({ code, param })
      }
      const listed = yield* h.call("GET", `/v1/agents/${agent}/qa`, { key: ws.secretTest })
      expect(listed.body.data).toEqual([])
    })
  )

  it.effect("lists newest first with cursor pagination and the category_id and origin filters", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const billing = (yield* createCategory(h, ws.secretTest, agent, { name: "Billing" })).body.data.id
      for (let i = 1; i <= 5; i++) {
        yield* createQa(h, ws.secretTest, agent, { question: `Q${i}?`, ...(i % 2 === 0 ? { category_id: billing } : {}) })
      }
      yield* seedQa(ws, agent, [
        { question: "G1?", origin: "generated", sourceId: srcA, categoryId: billing },
        { question: "C1?", origin: "csv", sourceId: srcA }
      ])
      const list = (query: string) => h.call("GET", `/v1/agents/${agent}/qa${query}`, { key: ws.secretTest })
      const questions = (reply: { body: any }) => reply.body.data.map((q: any) => q.question)

      const seen: Array<string> = []
      let query = "?limit=3"
      for (let page = 0; page < 5; page++) {
        const reply = yield* list(query)
        expect(reply.status).toBe(200)
        seen.push(...questions(reply))
        if (!reply.body.meta.pagination.has_more) break
        query = `?limit=3&starting_after=${reply.body.meta.pagination.next_cursor}`
      }
      expect(seen).toEqual(["C1?", "G1?", "Q5?", "Q4?", "Q3?", "Q2?", "Q1?"])

      expect(questions(yield* list(`?category_id=${billing}`))).toEqual(["G1?", "Q4?", "Q2?"])
      expect(questions(yield* list("?category_id=none"))).toEqual(["C1?", "Q5?", "Q3?", "Q1?"])
      expect(questions(yield* list("?origin=manual&limit=2"))).toEqual(["Q5?", "Q4?"])
      expect(questions(yield* list("?origin=csv"))).toEqual(["C1?"])
      const generated = yield* list(`?origin=generated&category_id=${billing}`)
      expect(generated.body.data).toMatchObject([{ question: "G1?", origin: "generated", source_id: srcA }])

      const badOrigin = yield* list("?origin=robot")
      expect(badOrigin.status).toBe(400)
      expect(badOrigin.body.error).toMatchObject({ code: "parameter_invalid", param: "origin" })
      const badCategory = yield* list("?category_id=billing")
      expect(badCategory.body.error).toMatchObject({ code: "parameter_invalid", param: "category_id" })
      expect((yield* list("?limit=0")).body.error.code).toBe("invalid_limit")
      expect((yield* list("?starting_after=forged")).body.error.code).toBe("invalid_cursor")
    })
  )

  it.effect("updates question, answer and category; an edited generated Q&A becomes manual", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const billing = (yield* createCategory(h, ws.secretTest, agent, { name: "Billing" })).body.data.id
      const created = (yield* createQa(h, ws.secretTest, agent)).body.data
      const before = yield* embeddingOf(created.id)
      yield* TestClock.adjust("1 minute")
      const path = `/v1/agents/${agent}/qa/${created.id}`

      const moved = yield* h.call("PATCH", path, { key: ws.secretTest, body: { category_id: billing } })
      expect(moved.status).toBe(200)
      expect(moved.body.data).toMatchObject({ category_id: billing, question: created.question, origin: "manual" })
      expect(moved.body.data.updated_at).toBe(new Date(testEpoch + 60_000).toISOString())
      expect(yield* embeddingOf(created.id)).toEqual(before)

      const reworded = yield* h.call("PATCH", path, {
        key: ws.secretTest,
        body: { answer: "Ask support to send a reset e-mail." }
      })
      expect(reworded.body.data).toMatchObject({ answer: "Ask support to send a reset e-mail.", category_id: billing })
      expect(yield* embeddingOf(created.id)).not.toEqual(before)

      const cleared = yield* h.call("PATCH", path, { key: ws.secretTest, body: { category_id: null } })
      expect(cleared.body.data.category_id).toBeNull()

      yield* seedQa(ws, agent, [{ question: "Generated?", origin: "generated", sourceId: srcA }])
      const generated = (yield* h.call("GET", `/v1/agents/${agent}/qa?origin=generated`, { key: ws.secretTest })).body
        .data[0]
      const recategorised = yield* h.call("PATCH", `/v1/agents/${agent}/qa/${generated.id}`, {
        key: ws.secretTest,
        body: { category_id: billing }
      })
      expect(recategorised.body.data.origin).toBe("generated")
      const corrected = yield* h.call("PATCH", `/v1/agents/${agent}/qa/${generated.id}`, {
        key: ws.secretTest,
        body: { question: "Generated, corrected?" }
      })
      expect(corrected.body.data).toMatchObject({ origin: "manual", source_id: srcA, question: "Generated, corrected?" })

      const invalid = yield* h.call("PATCH", path, { key: ws.secretTest, body: { question: "" } })
      expect(invalid.status).toBe(400)
      expect(invalid.body.error).toMatchObject({ code: "parameter_invalid", param: "question" })
      const unknownField = yield* h.call("PATCH", path, { key: ws.secretTest, body: { origin: "csv" } })
      expect(unknownField.body.error).toMatchObject({ code: "parameter_invalid", param: "origin" })
      const noCategory = yield* h.call("PATCH", path, {
        key: ws.secretTest,
        body: { category_id: "cat_000000000000000000000000" }
      })
      expect(noCategory.status).toBe(404)
      expect(noCategory.body.error).toMatchObject({ code: "resource_missing", param: "category_id" })
    })
  )

  it.effect("deletes a Q&A once; another agent's, environment's or workspace's Q&A is 404", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const sibling = yield* createAgent(h, ws.secretTest)
      const qa = (yield* createQa(h, ws.secretTest, agent)).body.data.id

      for (const method of ["PATCH", "DELETE"] as const) {
        const viaSibling = yield* h.call(method, `/v1/agents/${sibling}/qa/${qa}`, {
          key: ws.secretTest,
          ...(method === "PATCH" ? { body: { answer: "Hijacked." } } : {})
        })
        expect(viaSibling.status, method).toBe(404)
        expect(viaSibling.body.error, method).toMatchObject({ code: "resource_missing", param: "qa_id" })
      }
      const live = yield* h.call("GET", `/v1/agents/${agent}/qa`, { key: ws.secretLive })
      expect(live.status).toBe(404)
      const other = yield* h.seed()
      const foreign = yield* h.call("DELETE", `/v1/agents/${agent}/qa/${qa}`, { key: other.secretTest })
      expect(foreign.status).toBe(404)

      const deleted = yield* h.call("DELETE", `/v1/agents/${agent}/qa/${qa}`, { key: ws.secretTest })
      expect(deleted.status).toBe(200)
      expect(deleted.body.data).toEqual({ id: qa, object: "qa", deleted: true })
      const again = yield* h.call("DELETE", `/v1/agents/${agent}/qa/${qa}`, { key: ws.secretTest })
      expect(again.status).toBe(404)
      const malformed = yield* h.call("DELETE", `/v1/agents/${agent}/qa/nope`, { key: ws.secretTest })
      expect(malformed.status).toBe(400)
      expect(malformed.body.error).toMatchObject({ code: "parameter_invalid", param: "qa_id" })
    })
  )
})
