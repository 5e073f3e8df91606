/**
 * Evaluations: an agent's test questions run in the background through the same answering a conversation uses.
 * Three cases, two the knowledge holds (a Q&A item's text, a text source drawn on) and one it does not, complete
 * with two passed and a score of 2/3; a second run is kept beside the first; the run's end is an event; a run
 * writes no conversation and counts no reply; bad bodies are refused in the envelope, another agent is 404,
 * and the plan's monthly runs are a bound (402) that a new month lifts.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { monthlyRunCap } from "../../schema/Evaluations.js"
import { addQa } from "../conversations/support.js"
import { createAgent, eventsOfType, waitSettled } from "../knowledge/support.js"
import { eventually } from "../support/eventually.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"

const waitRun = (h: HarnessShape, key: string, agentId: string, evaluationId: string, runId: string) =>
  eventually(
    Effect.map(h.call("GET", `/v1/agents/${agentId}/evaluations/${evaluationId}/runs/${runId}`, { key }), (r) => r.body.data),
    (run) => run?.status === "completed" || run?.status === "failed",
    { tries: 3000, label: "run ended" }
  )

/** An agent that knows delivery times (a Q&A item) and opening hours (a text source). */
const shopAgent = (h: HarnessShape, key: string) =>
  Effect.gen(function* () {
    const agentId = yield* createAgent(h, key)
    yield* addQa(h, key, agentId, "How long does delivery take?", "Orders arrive within five business days.")
    const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
      key,
      body: {
        type: "text",
        title: "Opening hours",
        content: "# Opening hours\n\nThe shop in Lisbon opens at nine in the morning on weekdays and closes at six."
      }
    })
    expect(created.status, created.text).toBe(201)
    const sourceId = created.body.data.id as string
    const [settled] = yield* waitSettled(h, key, agentId, [sourceId])
    expect(settled.status).toBe("indexed")
    return { agentId, sourceId }
  })

layer(testServer())("evaluations", (it) => {
  describe("runs", () => {
    it.effect("three cases, two held by the knowledge: completed with two passed and a score; a second run kept beside the first", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const { agentId, sourceId } = yield* shopAgent(h, key)
        const usageBefore = (yield* h.call("GET", "/v1/usage", { key })).body.data

        const created = yield* h.call("POST", `/v1/agents/${agentId}/evaluations`, {
          key,
          body: {
            name: "Shop basics",
            cases: [
              { question: "How long does delivery take?", expect: { contains: "five  BUSINESS days" } },
              { question: "When does the shop in Lisbon open on weekdays?", expect: { source_id: sourceId } },
              { question: "Can I pay with bitcoin?", expect: { contains: "bitcoin accepted" } }
            ]
          }
        })
        expect(created.status, created.text).toBe(201)
        const evaluation = created.body.data
        expect(evaluation).toMatchObject({ object: "evaluation", agent_id: agentId, name: "Shop basics" })
        expect(evaluation.id).toMatch(/^evl_/)
        expect(evaluation.cases).toHaveLength(3)
        expect(evaluation.latest_run).toMatchObject({ object: "evaluation_run", status: "queued", total: 3, score: null })

        const first = yield* waitRun(h, key, agentId, evaluation.id, evaluation.latest_run.id)
        expect(first.status, JSON.stringify(first)).toBe("completed")
        expect(first.passed).toBe(2)
        expect(first.score).toBeCloseTo(2 / 3, 4)
        expect(first.error).toBeNull()
        expect(first.results.map((r: any) => [r.question, r.passed, r.outcome])).toEqual([
          ["How long does delivery take?", true, "answered"],
          ["When does the shop in Lisbon open on weekdays?", true, "answered"],
          ["Can I pay with bitcoin?", false, "fallback"]
        ])
        expect(first.results[0].reply).toContain("five business days")
        expect(first.results[0].sources[0]).toMatchObject({ type: "qa" })
        expect(first.results[1].sources.map((s: any) => s.id)).toContain(sourceId)

        // GET shows where it stands: its latest run with status, results and score
        const read = yield* h.call("GET", `/v1/agents/${agentId}/evaluations/${evaluation.id}`, { key })
        expect(read.status, read.text).toBe(200)
        expect(read.body.data.latest_run).toMatchObject({ id: first.id, status: "completed", passed: 2 })

        // run again: a new run, the first kept beside it
        const again = yield* h.call("POST", `/v1/agents/${agentId}/evaluations/${evaluation.id}/runs`, { key })
        expect(again.status, again.text).toBe(201)
        expect(again.body.data).toMatchObject({ status: "queued", evaluation_id: evaluation.id })
        const second = yield* waitRun(h, key, agentId, evaluation.id, again.body.data.id)
        expect(second).toMatchObject({ status: "completed", passed: 2, total: 3 })
        const runs = yield* h.call("GET", `/v1/agents/${agentId}/evaluations/${evaluation.id}/runs`, { key })
        expect(runs.status, runs.text).toBe(200)
        expect(runs.body.data.map((r: any) => [r.id, r.status, r.score])).toEqual([
          [second.id, "completed", first.score],
          [first.id, "completed", first.score]
        ])
        const page = yield* h.call("GET", `/v1/agents/${agentId}/evaluations/${evaluation.id}/runs?limit=1`, { key })
        expect(page.body.data.map((r: any) => r.id)).toEqual([second.id])
        expect(page.body.meta.pagination.has_more).toBe(true)
        const rest = yield* h.call(
          "GET",
          `/v1/agents/${agentId}/evaluations/${evaluation.id}/runs?limit=1&starting_after=${page.body.meta.pagination.next_cursor}`,
          { key }
        )
        expect(rest.body.data.map((r: any) => r.id)).toEqual([first.id])
        // a cursor belongs to its list: the runs' is no cursor of the evaluations list
        const misplaced = yield* h.call(
          "GET",
          `/v1/agents/${agentId}/evaluations?starting_after=${page.body.meta.pagination.next_cursor}`,
          { key }
        )
        expect(misplaced.status, misplaced.text).toBe(400)
        expect(misplaced.body.error).toMatchObject({ code: "invalid_cursor", param: "starting_after" })

        // each run's end is an event, without the results
        const completed = yield* eventsOfType(ws.workspace.id, "evaluation.run_completed")
        expect(completed.map((e) => e.data.run.id)).toEqual([first.id, second.id])
        expect(completed[0].data.run).toMatchObject({ status: "completed", passed: 2, total: 3, evaluation_id: evaluation.id })
        expect(completed[0].data.run.results).toBeUndefined()

        // no conversation written, no reply counted
        const conversations = yield* h.call("GET", `/v1/conversations?agent_id=${agentId}`, { key })
        expect(conversations.body.data).toEqual([])
        const usageAfter = (yield* h.call("GET", "/v1/usage", { key })).body.data
        expect(usageAfter).toEqual(usageBefore)

        // the list shows it with its latest run
        const list = yield* h.call("GET", `/v1/agents/${agentId}/evaluations`, { key })
        expect(list.body.data.map((e: any) => [e.id, e.latest_run.id])).toEqual([[evaluation.id, second.id]])
      })
    )

    it.effect("a question the knowledge does not hold passes `declines`; deleting removes the evaluation and its runs", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const agentId = yield* createAgent(h, key)
        yield* addQa(h, key, agentId, "How long does delivery take?", "Orders arrive within five business days.")
        const created = yield* h.call("POST", `/v1/agents/${agentId}/evaluations`, {
          key,
          body: {
            name: "Declines",
            cases: [
              { question: "Can I pay with bitcoin?", expect: { declines: true } },
              { question: "How long does delivery take?", expect: { declines: true } }
            ]
          }
        })
        expect(created.status, created.text).toBe(201)
        const run = yield* waitRun(h, key, agentId, created.body.data.id, created.body.data.latest_run.id)
        expect(run.results.map((r: any) => r.passed)).toEqual([true, false])
        expect(run.score).toBe(0.5)

        const removed = yield* h.call("DELETE", `/v1/agents/${agentId}/evaluations/${created.body.data.id}`, { key })
        expect(removed.status, removed.text).toBe(200)
        expect(removed.body.data).toEqual({ id: created.body.data.id, object: "evaluation", deleted: true })
        const gone = yield* h.call("GET", `/v1/agents/${agentId}/evaluations/${created.body.data.id}/runs/${run.id}`, { key })
        expect(gone.status).toBe(404)
        expect(gone.body.error.code).toBe("resource_missing")
      })
    )

    it.effect("the plan's monthly runs are a bound: 402 past it, nothing created; a new month lifts it", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed({ plan: "free" })
        const key = ws.secretTest
        const agentId = yield* createAgent(h, key)
        const body = { name: "One", cases: [{ question: "Hello?", expect: { declines: true } }] }
        const created = yield* h.call("POST", `/v1/agents/${agentId}/evaluations`, { key, body })
        expect(created.status, created.text).toBe(201)
        const evaluationId = created.body.data.id as string
        const run = yield* h.call("POST", `/v1/agents/${agentId}/evaluations/${evaluationId}/runs`, { key })
        expect(run.status, run.text).toBe(201)
        yield* waitRun(h, key, agentId, evaluationId, run.body.data.id)
        // the rest of the free plan's month, run already (copies of the second run)
        const sql = yield* SqlClient.SqlClient
        yield* sql`
          insert into evaluation_runs (id, workspace_id, environment, agent_id, evaluation_id, status, total, passed, created_at)
          select 'evr_filler' || n || 'x0000000', workspace_id, environment, agent_id, evaluation_id, status, total, passed, created_at
          from evaluation_runs, generate_series(1, ${monthlyRunCap.free! - 2}) n where id = ${run.body.data.id}`.pipe(Effect.orDie)
        const refused = yield* h.call("POST", `/v1/agents/${agentId}/evaluations/${evaluationId}/runs`, { key })
        expect(refused.status, refused.text).toBe(402)
        expect(refused.body.error.code).toBe("limit_reached")
        const refusedCreate = yield* h.call("POST", `/v1/agents/${agentId}/evaluations`, { key, body })
        expect(refusedCreate.status).toBe(402)
        const list = yield* h.call("GET", `/v1/agents/${agentId}/evaluations`, { key })
        expect(list.body.data).toHaveLength(1)

        // the month's runs become last month's (a jump of the TestClock by a month would run every periodic
        // fiber's month of wake-ups): the cap counts this calendar month's only
        yield* sql`update evaluation_runs set created_at = created_at - interval '32 days' where agent_id = ${agentId}`.pipe(
          Effect.orDie
        )
        const lifted = yield* h.call("POST", `/v1/agents/${agentId}/evaluations/${evaluationId}/runs`, { key })
        expect(lifted.status, lifted.text).toBe(201)
      })
    )
  })

  describe("bad requests", () => {
    it.effect("validation errors in the envelope; an unknown agent or evaluation is 404", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const agentId = yield* createAgent(h, key)
        const post = (body: unknown) => h.call("POST", `/v1/agents/${agentId}/evaluations`, { key, body })
        const refused = (reply: { status: number; body: any; text: string }, param: string) => {
          expect(reply.status, reply.text).toBe(400)
          expect(reply.body.error.type).toBe("invalid_request")
          expect(["parameter_invalid", "parameter_missing"]).toContain(reply.body.error.code)
          // an expectation that is none of the three is named by its path (or the field inside it that does not fit)
          expect(reply.body.error.param === param || reply.body.error.param.startsWith(`${param}.`), reply.text).toBe(true)
          expect(reply.body.meta.request_id).toMatch(/^req_/)
        }
        const ok = { question: "Hello?", expect: { declines: true } }
        refused(yield* post({ cases: [ok] }), "name")
        refused(yield* post({ name: "  ", cases: [ok] }), "name")
        refused(yield* post({ name: "X", cases: [] }), "cases")
        refused(yield* post({ name: "X", cases: Array.from({ length: 101 }, () => ok) }), "cases")
        refused(yield* post({ name: "X", cases: [ok, { question: "", expect: { declines: true } }] }), "cases[1].question")
        refused(yield* post({ name: "X", cases: [{ question: "Q?", expect: { contains: "a", declines: true } }] }), "cases[0].expect")
        refused(yield* post({ name: "X", cases: [{ question: "Q?", expect: {} }] }), "cases[0].expect")
        refused(yield* post({ name: "X", cases: [{ question: "Q?", expect: { declines: false } }] }), "cases[0].expect")
        refused(yield* post({ name: "X", cases: [{ question: "Q?", expect: { source_id: "qa_12345678" } }] }), "cases[0].expect")
        refused(yield* post({ name: "X", cases: [ok], extra: 1 }), "extra")

        const unknownAgent = yield* h.call("POST", "/v1/agents/agt_unknown000/evaluations", {
          key,
          body: { name: "X", cases: [ok] }
        })
        expect(unknownAgent.status, unknownAgent.text).toBe(404)
        expect(unknownAgent.body.error.code).toBe("resource_missing")
        const unknownList = yield* h.call("GET", "/v1/agents/agt_unknown000/evaluations", { key })
        expect(unknownList.status).toBe(404)
        const unknownEvaluation = yield* h.call("GET", `/v1/agents/${agentId}/evaluations/evl_unknown000`, { key })
        expect(unknownEvaluation.status).toBe(404)
        expect(unknownEvaluation.body.error.param).toBe("evaluation_id")
        const unknownRun = yield* h.call("POST", `/v1/agents/${agentId}/evaluations/evl_unknown000/runs`, { key })
        expect(unknownRun.status).toBe(404)

        // another workspace's agent is not found either
        const other = yield* h.seed()
        const foreign = yield* h.call("GET", `/v1/agents/${agentId}/evaluations`, { key: other.secretTest })
        expect(foreign.status).toBe(404)
      })
    )
  })
})
