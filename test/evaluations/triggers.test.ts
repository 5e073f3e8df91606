/**
 * Evaluations that run by themselves when their agent's knowledge changes (`run_on_knowledge_change`), a minute
 * after the last change, moved by the TestClock: a source indexed gives one run (`trigger: knowledge_change`) of
 * each flagged evaluation and none of the others, and so does its deletion; three changes within the minute give
 * one run, after the last; at the plan's monthly cap the run is skipped and the evaluation shows when; PATCH edits
 * and its refusals are in the envelope. Also: runs listed and the latest run picked by their sequence as a
 * number, across a power of ten.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { knowledgeChangeDebounceMillis, monthlyRunCap } from "../../schema/Evaluations.js"
import { JobQueue } from "../../layers/JobQueue.js"
import { evaluationQueue } from "../../src/evaluations/Evaluations.js"
import { evaluationTriggerQueue } from "../../src/evaluations/Triggers.js"
import { addQa } from "../conversations/support.js"
import { createAgent, waitSettled } from "../knowledge/support.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"

const evaluationsPath = (agentId: string) => `/v1/agents/${agentId}/evaluations`

/** Every run of the evaluation, newest first. */
const runsOf = (h: HarnessShape, key: string, agentId: string, evaluationId: string) =>
  Effect.map(h.call("GET", `${evaluationsPath(agentId)}/${evaluationId}/runs?limit=100`, { key }), (r) => {
    expect(r.status, r.text).toBe(200)
    return r.body.data as Array<any>
  })

/** The trigger jobs' work done: nothing of the queue in flight nor due now. */
const triggersIdle = Effect.flatMap(JobQueue, (queue) => queue.awaitIdle(evaluationTriggerQueue))

/** Every run of the agents' evaluations ended. */
const runsIdle = Effect.flatMap(JobQueue, (queue) => queue.awaitIdle(evaluationQueue))

const create = (h: HarnessShape, key: string, agentId: string, body: Record<string, unknown>) =>
  Effect.map(h.call("POST", evaluationsPath(agentId), { key, body }), (r) => {
    expect(r.status, r.text).toBe(201)
    return r.body.data
  })

const cases = [{ question: "How long does delivery take?", expect: { contains: "five business days" } }]

layer(testServer())("evaluations run when knowledge changes", (it) => {
  describe("automatic runs", () => {
    it.effect("a source indexed: a minute later one run of each flagged evaluation (trigger knowledge_change), none of the others", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const agentId = yield* createAgent(h, key)
        const hours = [{ question: "When does the shop in Lisbon open on weekdays?", expect: { contains: "opens at nine" } }]
        const flagged = yield* create(h, key, agentId, { name: "Watched", cases: hours, run_on_knowledge_change: true })
        expect(flagged.run_on_knowledge_change).toBe(true)
        expect(flagged.auto_run_skipped_at).toBeNull()
        expect(flagged.latest_run.trigger).toBe("manual")
        const plain = yield* create(h, key, agentId, { name: "Plain", cases })
        expect(plain.run_on_knowledge_change).toBe(false)
        yield* runsIdle

        const added = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
          key,
          body: {
            type: "text",
            title: "Opening hours",
            content: "# Opening hours\n\nThe shop in Lisbon opens at nine in the morning on weekdays and closes at six."
          }
        })
        expect(added.status, added.text).toBe(201)
        const [settled] = yield* waitSettled(h, key, agentId, [added.body.data.id])
        expect(settled.status).toBe("indexed")

        // before the minute: nothing yet
        yield* TestClock.adjust(knowledgeChangeDebounceMillis - 1_000)
        yield* triggersIdle
        expect((yield* runsOf(h, key, agentId, flagged.id)).map((r) => r.trigger)).toEqual(["manual"])

        yield* TestClock.adjust(2_000)
        yield* triggersIdle
        const runs = yield* runsOf(h, key, agentId, flagged.id)
        expect(runs.map((r) => r.trigger)).toEqual(["knowledge_change", "manual"])
        yield* runsIdle
        const ended = (yield* h.call("GET", `${evaluationsPath(agentId)}/${flagged.id}`, { key })).body.data
        expect(ended.latest_run, JSON.stringify(ended.latest_run)).toMatchObject({
          id: runs[0].id,
          trigger: "knowledge_change",
          passed: 1,
          score: 1
        })

        // the source deleted: the agent knows less, and the evaluation runs again (now missing its answer)
        const removed = yield* h.call("DELETE", `/v1/agents/${agentId}/knowledge/${added.body.data.id}`, { key })
        expect(removed.status, removed.text).toBe(200)
        yield* TestClock.adjust(knowledgeChangeDebounceMillis + 1_000)
        yield* triggersIdle
        const afterDelete = yield* runsOf(h, key, agentId, flagged.id)
        expect(afterDelete.map((r) => r.trigger)).toEqual(["knowledge_change", "knowledge_change", "manual"])
        yield* runsIdle

        // the evaluation without the flag ran only when created
        expect((yield* runsOf(h, key, agentId, plain.id)).map((r) => r.trigger)).toEqual(["manual"])
      })
    )

    it.effect("three changes within the minute (a Q&A item created, edited, deleted): one run, a minute after the last", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const agentId = yield* createAgent(h, key)
        const evaluation = yield* create(h, key, agentId, { name: "Watched", cases, run_on_knowledge_change: true })
        yield* runsIdle

        const qaId = yield* addQa(h, key, agentId, "How long does delivery take?", "Five business days.")
        yield* TestClock.adjust("20 seconds")
        const edited = yield* h.call("PATCH", `/v1/agents/${agentId}/qa/${qaId}`, {
          key,
          body: { answer: "Orders arrive within five business days." }
        })
        expect(edited.status, edited.text).toBe(200)
        yield* TestClock.adjust("20 seconds")
        const deleted = yield* h.call("DELETE", `/v1/agents/${agentId}/qa/${qaId}`, { key })
        expect(deleted.status, deleted.text).toBe(200)

        // past a minute after the first and the second change, not the third: still nothing
        yield* TestClock.adjust("41 seconds")
        yield* triggersIdle
        expect((yield* runsOf(h, key, agentId, evaluation.id)).map((r) => r.trigger)).toEqual(["manual"])

        yield* TestClock.adjust("20 seconds")
        yield* triggersIdle
        expect((yield* runsOf(h, key, agentId, evaluation.id)).map((r) => r.trigger)).toEqual(["knowledge_change", "manual"])

        // and nothing more later
        yield* TestClock.adjust("5 minutes")
        yield* triggersIdle
        expect(yield* runsOf(h, key, agentId, evaluation.id)).toHaveLength(2)
        yield* runsIdle
      })
    )

    it.effect("the plan's monthly runs used up: the automatic run skipped, not failed, and shown on the evaluation", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed({ plan: "free" })
        const key = ws.secretTest
        const agentId = yield* createAgent(h, key)
        const evaluation = yield* create(h, key, agentId, { name: "Watched", cases, run_on_knowledge_change: true })
        yield* runsIdle
        // the rest of the free plan's month, run already (copies of the first run)
        const sql = yield* SqlClient.SqlClient
        yield* sql`
          insert into evaluation_runs (id, workspace_id, environment, agent_id, evaluation_id, status, total, passed, created_at)
          select 'evr_auto' || n || 'x0000000', workspace_id, environment, agent_id, evaluation_id, status, total, passed, created_at
          from evaluation_runs, generate_series(1, ${monthlyRunCap.free! - 1}) n where id = ${evaluation.latest_run.id}`.pipe(
          Effect.orDie
        )

        yield* addQa(h, key, agentId, "How long does delivery take?", "Orders arrive within five business days.")
        yield* TestClock.adjust(knowledgeChangeDebounceMillis + 1_000)
        yield* triggersIdle
        const skipped = (yield* h.call("GET", `${evaluationsPath(agentId)}/${evaluation.id}`, { key })).body.data
        expect(skipped.auto_run_skipped_at).not.toBeNull()
        expect(Date.parse(skipped.auto_run_skipped_at)).toBeGreaterThan(Date.parse(skipped.created_at))
        expect(skipped.latest_run.trigger).toBe("manual")
        expect(yield* runsOf(h, key, agentId, evaluation.id)).toHaveLength(monthlyRunCap.free!)

        // a new month: the next change runs it, and the skip is behind it
        yield* sql`update evaluation_runs set created_at = created_at - interval '32 days' where agent_id = ${agentId}`.pipe(
          Effect.orDie
        )
        yield* addQa(h, key, agentId, "Can I return an item?", "Within 30 days.")
        yield* TestClock.adjust(knowledgeChangeDebounceMillis + 1_000)
        yield* triggersIdle
        const ran = (yield* h.call("GET", `${evaluationsPath(agentId)}/${evaluation.id}`, { key })).body.data
        expect(ran.auto_run_skipped_at).toBeNull()
        expect(ran.latest_run.trigger).toBe("knowledge_change")
        yield* runsIdle
      })
    )
  })

  describe("PATCH", () => {
    it.effect("edits name, cases and the flag; the flag turned on makes the next change run it; refusals in the envelope", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const agentId = yield* createAgent(h, key)
        const evaluation = yield* create(h, key, agentId, { name: "Basics", cases })
        yield* runsIdle
        const path = `${evaluationsPath(agentId)}/${evaluation.id}`
        const patch = (body: unknown) => h.call("PATCH", path, { key, body })

        const renamed = yield* patch({ name: "  Shop basics  " })
        expect(renamed.status, renamed.text).toBe(200)
        expect(renamed.body.data).toMatchObject({ id: evaluation.id, name: "Shop basics", run_on_knowledge_change: false })
        expect(renamed.body.data.cases).toEqual(evaluation.cases)
        expect(renamed.body.data.latest_run.id).toBe(evaluation.latest_run.id)

        const newCases = [...cases, { question: "Can I pay with bitcoin?", expect: { declines: true } }]
        const flagged = yield* patch({ cases: newCases, run_on_knowledge_change: true })
        expect(flagged.status, flagged.text).toBe(200)
        expect(flagged.body.data).toMatchObject({ name: "Shop basics", run_on_knowledge_change: true })
        expect(flagged.body.data.cases).toEqual(newCases)
        // an edit starts no run
        expect(yield* runsOf(h, key, agentId, evaluation.id)).toHaveLength(1)

        const refused = (reply: { status: number; body: any; text: string }, param: string) => {
          expect(reply.status, reply.text).toBe(400)
          expect(reply.body.error.type).toBe("invalid_request")
          expect(["parameter_invalid", "parameter_missing"]).toContain(reply.body.error.code)
          expect(reply.body.error.param === param || reply.body.error.param.startsWith(`${param}.`), reply.text).toBe(true)
          expect(reply.body.meta.request_id).toMatch(/^req_/)
        }
        refused(yield* patch({ nmae: "X" }), "nmae")
        refused(yield* patch({ name: "  " }), "name")
        refused(yield* patch({ cases: [] }), "cases")
        refused(yield* patch({ cases: [{ question: "Q?", expect: {} }] }), "cases[0].expect")
        refused(yield* patch({ run_on_knowledge_change: "yes" }), "run_on_knowledge_change")
        refused(yield* patch({ name: "X", latest_run: null }), "latest_run")
        // nothing changed by a refusal
        const read = (yield* h.call("GET", path, { key })).body.data
        expect(read).toMatchObject({ name: "Shop basics", run_on_knowledge_change: true })

        const missing = yield* h.call("PATCH", `${evaluationsPath(agentId)}/evl_unknown000`, { key, body: { name: "X" } })
        expect(missing.status, missing.text).toBe(404)
        expect(missing.body.error).toMatchObject({ code: "resource_missing", param: "evaluation_id" })
        const foreign = yield* h.call("PATCH", path, { key: (yield* h.seed()).secretTest, body: { name: "X" } })
        expect(foreign.status).toBe(404)

        // turned on: the next change runs it, with its edited cases
        yield* addQa(h, key, agentId, "How long does delivery take?", "Orders arrive within five business days.")
        yield* TestClock.adjust(knowledgeChangeDebounceMillis + 1_000)
        yield* triggersIdle
        yield* runsIdle
        const run = (yield* h.call("GET", path, { key })).body.data.latest_run
        expect(run).toMatchObject({ trigger: "knowledge_change", total: 2, passed: 2 })

        // turned off: a change runs nothing
        expect((yield* patch({ run_on_knowledge_change: false })).status).toBe(200)
        yield* addQa(h, key, agentId, "Can I return an item?", "Within 30 days.")
        yield* TestClock.adjust(knowledgeChangeDebounceMillis + 1_000)
        yield* triggersIdle
        expect(yield* runsOf(h, key, agentId, evaluation.id)).toHaveLength(2)
      })
    )
  })

  describe("order", () => {
    it.effect("runs ordered by their sequence as a number: the list and the latest run hold across a power of ten", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed({ plan: "pro" })
        const key = ws.secretTest
        const agentId = yield* createAgent(h, key)
        // the next runs' sequence numbers cross a power of ten (…98, 99, 100, 101…), where text order is wrong
        const sql = yield* SqlClient.SqlClient
        const [{ max }] = yield* sql<{ max: string }>`select coalesce(max(seq), 0)::text as max from evaluation_runs`.pipe(Effect.orDie)
        const power = 10 ** String(Number(max) + 6).length
        yield* sql`select setval(pg_get_serial_sequence('evaluation_runs', 'seq'), ${power - 6})`.pipe(Effect.orDie)

        const evaluation = yield* create(h, key, agentId, { name: "Many", cases })
        const ids: Array<string> = [evaluation.latest_run.id]
        for (let i = 0; i < 10; i++) {
          const run = yield* h.call("POST", `${evaluationsPath(agentId)}/${evaluation.id}/runs`, { key })
          expect(run.status, run.text).toBe(201)
          ids.push(run.body.data.id)
        }
        const newestFirst = [...ids].reverse()
        expect((yield* runsOf(h, key, agentId, evaluation.id)).map((r) => r.id)).toEqual(newestFirst)
        // page by page, the same order
        const paged: Array<string> = []
        let after: string | null = null
        do {
          const query: string = after === null ? "?limit=4" : `?limit=4&starting_after=${after}`
          const page: any = (yield* h.call("GET", `${evaluationsPath(agentId)}/${evaluation.id}/runs${query}`, { key })).body
          paged.push(...page.data.map((r: any) => r.id))
          after = page.meta.pagination.has_more ? page.meta.pagination.next_cursor : null
        } while (after !== null)
        expect(paged).toEqual(newestFirst)
        const read = (yield* h.call("GET", `${evaluationsPath(agentId)}/${evaluation.id}`, { key })).body.data
        expect(read.latest_run.id).toBe(ids.at(-1))
        yield* runsIdle
      })
    )
  })
})
