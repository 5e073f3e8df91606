/**
 * Evaluation runs that cannot succeed end `failed` with a readable error and `evaluation.run_failed`: a provider
 * that keeps failing transiently is retried with backoff on the TestClock, then gives up (`ai_failed`); one that
 * refuses fails at once; a run whose attempts die is given up by the queue (`internal_error`), never left
 * `running`. Another agent's run meanwhile completes.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { Ai, AiError, makeLocal } from "../../layers/Ai.js"
import { runMaxAttempts, runRetryDelayMillis } from "../../src/evaluations/Runner.js"
import { addQa } from "../conversations/support.js"
import { createAgent, eventsOfType } from "../knowledge/support.js"
import { eventually } from "../support/eventually.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"

/** The local provider, but answering a question with "outage" fails transiently, "refused" for good, "crash" dies. */
const troubledAi = Layer.sync(Ai, () => {
  const local = makeLocal()
  return {
    ...local,
    answer: (input) =>
      input.question.includes("outage")
        ? Stream.fail(new AiError({ message: "upstream timed out", transient: true }))
        : input.question.includes("refused")
          ? Stream.fail(new AiError({ message: "the model refused the request", transient: false }))
          : input.question.includes("crash")
            ? Stream.die(new TypeError("Cannot read properties of undefined (reading 'choices')"))
            : local.answer(input)
  }
})

/** Attempts the run's job made. */
const jobAttempts = (runId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ attempts: number }>`select attempts from jobs where queue = 'evaluation-run' and payload like ${`%${runId}%`}`
  ).pipe(
    Effect.map((rows) => rows[0]?.attempts),
    Effect.orDie
  )

const runOf = (h: HarnessShape, key: string, agentId: string, evaluation: any) =>
  Effect.map(
    h.call("GET", `/v1/agents/${agentId}/evaluations/${evaluation.id}/runs/${evaluation.latest_run.id}`, { key }),
    (r) => r.body.data
  )

const evaluate = (h: HarnessShape, key: string, question: string) =>
  Effect.gen(function* () {
    const agentId = yield* createAgent(h, key)
    yield* addQa(h, key, agentId, "How long does delivery take?", "Orders arrive within five business days.")
    const created = yield* h.call("POST", `/v1/agents/${agentId}/evaluations`, {
      key,
      body: { name: "Troubled", cases: [{ question, expect: { contains: "five business days" } }] }
    })
    expect(created.status, created.text).toBe(201)
    return { agentId, evaluation: created.body.data }
  })

layer(testServer({}, { ai: troubledAi }))("evaluation runs that fail", (it) => {
  describe("the provider", () => {
    it.effect("failing transiently: retried with backoff, then failed ai_failed with evaluation.run_failed", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const { agentId, evaluation } = yield* evaluate(h, key, "How long does delivery take in an outage?")
        // each retry waits longer (`runRetryDelayMillis`): the TestClock moves past each wait until the last attempt
        const failed = yield* eventually(
          Effect.zipLeft(runOf(h, key, agentId, evaluation), TestClock.adjust(runRetryDelayMillis(runMaxAttempts))),
          (r) => r.status === "failed",
          { tries: 3000, label: "run failed" }
        )
        const attempts = yield* jobAttempts(failed.id)
        expect(attempts).toBe(runMaxAttempts)
        expect(failed.error).toEqual({ code: "ai_failed", message: "The AI provider failed: upstream timed out" })
        expect(failed.score).toBeNull()
        const events = yield* eventsOfType(ws.workspace.id, "evaluation.run_failed")
        expect(events.map((e) => e.data.run.id)).toEqual([failed.id])
        expect(events[0].data.run).toMatchObject({ status: "failed", error: { code: "ai_failed" } })
      })
    )

    it.effect("refusing: failed at once; another agent's run still completes", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const refused = yield* evaluate(h, key, "How long does delivery take when refused?")
        const fine = yield* evaluate(h, key, "How long does delivery take?")
        const failed = yield* eventually(runOf(h, key, refused.agentId, refused.evaluation), (r) => r.status === "failed", {
          tries: 3000,
          label: "run failed"
        })
        expect(failed.error).toEqual({ code: "ai_failed", message: "The AI provider failed: the model refused the request" })
        const done = yield* eventually(runOf(h, key, fine.agentId, fine.evaluation), (r) => r.status === "completed", {
          tries: 3000,
          label: "other run completed"
        })
        expect(done).toMatchObject({ passed: 1, total: 1, score: 1 })
      })
    )

    it.effect("dying at every attempt: given up by the queue, failed internal_error, never left running", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const { agentId, evaluation } = yield* evaluate(h, key, "How long does delivery take after a crash?")
        const failed = yield* eventually(
          Effect.zipLeft(runOf(h, key, agentId, evaluation), TestClock.adjust("10 minutes")),
          (r) => r.status === "failed",
          { tries: 3000, label: "run given up" }
        )
        expect(failed.error.code).toBe("internal_error")
        expect(failed.error.message).toMatch(/start it again/)
        const events = yield* eventsOfType(ws.workspace.id, "evaluation.run_failed")
        expect(events.map((e) => e.data.run.id)).toEqual([failed.id])
      })
    )
  })
})
