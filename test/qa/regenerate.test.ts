/**
 * Regeneration through the real server and its JobQueue worker. Indexed source
 * texts come from the memory `SourceTexts` layer beside the program (the
 * knowledge area's repository is wired in its place in the service).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { type AgentId, SourceId } from "../../schema/Ids.js"
import { Ai, AiError, makeLocal } from "../../layers/Ai.js"
import type { Database } from "../../layers/Database.js"
import type { IdGenerator } from "../../layers/IdGenerator.js"
import { JobQueue } from "../../layers/JobQueue.js"
import { regenerateQueue, retryDelayMillis } from "../../src/qa/Regeneration.js"
import { type SourceText, SourceTexts } from "../../src/qa/SourceTexts.js"
import { Harness, type HarnessShape, type SeededWorkspace, testServer } from "../support/harness.js"
import { createAgent, createCategory, createQa, eventsOf, seedQa } from "./support.js"

const srcA = SourceId.make("src_aaaaaaaaaaaa")
const srcB = SourceId.make("src_bbbbbbbbbbbb")
const srcCsv = SourceId.make("src_cccccccccccc")
const srcGone = SourceId.make("src_dddddddddddd")
const srcNew = SourceId.make("src_eeeeeeeeeeee")

const billingDoc: SourceText = {
  sourceId: srcA,
  title: "Billing help",
  text: `# Billing

## Invoices
Invoices are e-mailed on the first day of every month. You can download past invoices from the billing page.

## Refunds
Refunds are paid back to the original card within five working days.

## FAQ
Q: Can I pay by bank transfer?
A: Yes, annual plans can be paid by bank transfer.
`
}
const shippingDoc: SourceText = {
  sourceId: srcB,
  title: "Shipping",
  text: `# Shipping

## Delivery times
Parcels arrive in two to four working days inside the country.

## Tracking
Every parcel has a tracking number sent by e-mail when it leaves the warehouse.
`
}

// Texts per agent, and an optional step run as the job reads them (a concurrent ingestion committing).
const texts = new Map<AgentId, ReadonlyArray<SourceText>>()
let duringRead: Effect.Effect<void> = Effect.void
const sourceTexts = Layer.succeed(SourceTexts, {
  indexedTexts: (_tenant, agentId) => Effect.zipRight(duringRead, Effect.sync(() => texts.get(agentId) ?? []))
})

// The local provider, except that generateQa fails transiently while `outages` > 0.
let outages = 0
const flakyAi = Layer.sync(Ai, () => {
  const local = makeLocal()
  return {
    ...local,
    generateQa: (doc, categories) =>
      Effect.suspend(() => {
        if (outages === 0) return local.generateQa(doc, categories)
        outages--
        return Effect.fail(new AiError({ message: "503 Service Unavailable", transient: true }))
      })
  }
})

const listQa = (h: HarnessShape, ws: SeededWorkspace, agent: AgentId, query = "") =>
  Effect.map(h.call("GET", `/v1/agents/${agent}/qa?limit=100${query}`, { key: ws.secretTest }), (r) => r.body.data as Array<any>)

const regenerate = (h: HarnessShape, ws: SeededWorkspace, agent: AgentId) =>
  Effect.gen(function* () {
    const reply = yield* h.call("POST", `/v1/agents/${agent}/qa/regenerate`, { key: ws.secretTest })
    expect(reply.status).toBe(202)
    expect(reply.body.data).toEqual({ object: "qa_regeneration", agent_id: agent, status: "queued" })
    yield* Effect.flatMap(JobQueue, (queue) => queue.awaitIdle(regenerateQueue))
  })

layer(testServer({}, { sourceTexts }))("Q&A regeneration", (it) => {
  it.effect("rebuilds generated Q&A from the indexed texts, keeps manual and CSV ones, emits qa.regenerated", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const manual = (yield* createQa(h, ws.secretTest, agent, { question: "Who answers the phone?" })).body.data
      yield* seedQa(ws, agent, [
        { question: "Imported?", origin: "csv", sourceId: srcCsv },
        { question: "Stale, from a source no longer indexed?", origin: "generated", sourceId: srcGone },
        { question: "Old billing question?", origin: "generated", sourceId: srcA }
      ])
      texts.set(agent, [billingDoc, shippingDoc])

      yield* regenerate(h, ws, agent)

      const after = yield* listQa(h, ws, agent)
      const byOrigin = (origin: string) => after.filter((q) => q.origin === origin)
      expect(byOrigin("manual").map((q) => q.id)).toEqual([manual.id])
      expect(byOrigin("csv").map((q) => q.question)).toEqual(["Imported?"])
      const generated = byOrigin("generated")
      expect(generated.length).toBeGreaterThanOrEqual(4)
      expect(generated.map((q) => q.question)).not.toContain("Old billing question?")
      expect(generated.map((q) => q.question)).not.toContain("Stale, from a source no longer indexed?")
      expect(new Set(generated.map((q) => q.source_id))).toEqual(new Set([srcA, srcB]))
      expect(generated.map((q) => q.question)).toContain("Can I pay by bank transfer?")

      // the agent had no categories: the first source set them, and the Q&A are filed under them
      const categories = (yield* h.call("GET", `/v1/agents/${agent}/categories`, { key: ws.secretTest })).body.data
      expect(categories.length).toBeGreaterThanOrEqual(1)
      const categoryIds = new Set(categories.map((c: any) => c.id))
      expect(generated.some((q) => q.category_id !== null)).toBe(true)
      for (const q of generated) if (q.category_id !== null) expect(categoryIds.has(q.category_id)).toBe(true)

      const events = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "qa.regenerated")
      expect(events).toHaveLength(1)
      expect(events[0]!.body.data).toEqual({ agent_id: agent, qa_count: generated.length })

      // again: the same set (the local provider is deterministic), new rows, a second event, nothing else touched
      yield* regenerate(h, ws, agent)
      const again = yield* listQa(h, ws, agent)
      const regenerated = again.filter((q) => q.origin === "generated")
      expect(regenerated.map((q) => q.question).sort()).toEqual(generated.map((q) => q.question).sort())
      expect(regenerated.some((q) => generated.some((g) => g.id === q.id))).toBe(false)
      expect(again.filter((q) => q.origin !== "generated").map((q) => q.id).sort()).toEqual(
        after.filter((q) => q.origin !== "generated").map((q) => q.id).sort()
      )
      const all = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "qa.regenerated")
      expect(all.map((e) => e.body.data.qa_count)).toEqual([generated.length, generated.length])
      expect((yield* h.call("GET", `/v1/agents/${agent}/categories`, { key: ws.secretTest })).body.data).toHaveLength(
        categories.length
      )
    })
  )

  it.effect("files regenerated Q&A under the agent's existing categories; no texts leaves none generated", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      const refunds = (yield* createCategory(h, ws.secretTest, agent, { name: "Refunds", description: "Money back" }))
        .body.data.id
      texts.set(agent, [billingDoc])
      yield* regenerate(h, ws, agent)
      const categories = (yield* h.call("GET", `/v1/agents/${agent}/categories`, { key: ws.secretTest })).body.data
      expect(categories.map((c: any) => c.id)).toEqual([refunds])
      const generated = yield* listQa(h, ws, agent, "&origin=generated")
      expect(generated.length).toBeGreaterThan(0)
      expect(generated.every((q) => q.category_id === null || q.category_id === refunds)).toBe(true)

      texts.set(agent, [])
      yield* regenerate(h, ws, agent)
      expect(yield* listQa(h, ws, agent, "&origin=generated")).toEqual([])
      const events = (yield* eventsOf(ws.workspace.id)).filter((e) => e.type === "qa.regenerated")
      expect(events.map((e) => e.body.data)).toEqual([
        { agent_id: agent, qa_count: generated.length },
        { agent_id: agent, qa_count: 0 }
      ])
    })
  )

  it.effect("keeps the Q&A of a source indexed while it runs", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      texts.set(agent, [shippingDoc])
      const context = yield* Effect.context<SqlClient.SqlClient | Database | IdGenerator>()
      // ingestion of another source commits after the job took its mark and before it read the texts
      duringRead = seedQa(ws, agent, [{ question: "Freshly ingested?", origin: "generated", sourceId: srcNew }]).pipe(
        Effect.asVoid,
        Effect.provide(context)
      )
      yield* regenerate(h, ws, agent).pipe(Effect.ensuring(Effect.sync(() => (duringRead = Effect.void))))
      const generated = yield* listQa(h, ws, agent, "&origin=generated")
      expect(generated.map((q) => q.question)).toContain("Freshly ingested?")
      expect(new Set(generated.map((q) => q.source_id))).toEqual(new Set([srcB, srcNew]))
    })
  )

  it.effect("unknown, other environment's and malformed agents are refused", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const live = yield* createAgent(h, ws.secretLive)
      const crossed = yield* h.call("POST", `/v1/agents/${live}/qa/regenerate`, { key: ws.secretTest })
      expect(crossed.status).toBe(404)
      expect(crossed.body.error).toMatchObject({ code: "resource_missing", param: "id" })
      const unknown = yield* h.call("POST", "/v1/agents/agt_000000000000000000000000/qa/regenerate", {
        key: ws.secretTest
      })
      expect(unknown.status).toBe(404)
      const malformed = yield* h.call("POST", "/v1/agents/bot/qa/regenerate", { key: ws.secretTest })
      expect(malformed.status).toBe(400)
      expect(malformed.body.error).toMatchObject({ code: "parameter_invalid", param: "id" })
    })
  )
})

layer(testServer({}, { sourceTexts, ai: flakyAi }))("Q&A regeneration with a failing provider", (it) => {
  it.effect("a transient provider failure is retried later on the Clock; the event comes once it succeeds", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agent = yield* createAgent(h, ws.secretTest)
      texts.set(agent, [billingDoc])
      outages = 2
      yield* regenerate(h, ws, agent)
      const regenerated = () =>
        Effect.map(eventsOf(ws.workspace.id), (events) => events.filter((e) => e.type === "qa.regenerated"))
      expect(yield* regenerated()).toEqual([])
      expect(outages).toBe(1)

      // the first retry waits retryDelayMillis(0); the second retryDelayMillis(1)
      yield* TestClock.adjust(retryDelayMillis(0))
      yield* Effect.flatMap(JobQueue, (queue) => queue.awaitIdle(regenerateQueue))
      expect(outages).toBe(0)
      expect(yield* regenerated()).toEqual([])

      yield* TestClock.adjust(retryDelayMillis(1))
      yield* Effect.flatMap(JobQueue, (queue) => queue.awaitIdle(regenerateQueue))
      const events = yield* regenerated()
      expect(events).toHaveLength(1)
      expect(events[0]!.body.data.qa_count).toBeGreaterThan(0)
      expect((yield* listQa(h, ws, agent, "&origin=generated")).length).toBe(events[0]!.body.data.qa_count)
    })
  )
})
