/**
 * `npm run cli -- evaluate`: the real CLI (a child process, not a terminal, so a plain line per change) against the
 * real server on the wall clock. Three cases from a file, two held by the agent's text source and one not: it
 * creates the evaluation, follows its run to the end, prints the failed case and a score of 2/3, exits 0; a new
 * run of it with `--json` prints the final run; an unknown evaluation, a bad cases file and
 * `--timeout-s` passed are each one error line and exit 1.
 */
import { expect, it as plain, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { EvaluationRun } from "../../schema/Evaluations.js"
import { replyStart, runLine, runReport } from "../../src/cli/Evaluate.js"
import { runCli } from "../support/cli.js"
import { Harness, testServer } from "../support/harness.js"
import { createAgent, waitSettled } from "../knowledge/support.js"

const runOf = (status: EvaluationRun["status"], results: EvaluationRun["results"], score: number | null): EvaluationRun => ({
  id: "evr_x" as EvaluationRun["id"],
  object: "evaluation_run",
  evaluation_id: "evl_x" as EvaluationRun["evaluation_id"],
  agent_id: "agt_x" as EvaluationRun["agent_id"],
  status,
  trigger: "manual",
  total: 4,
  passed: results.filter((r) => r.passed).length,
  score,
  results,
  error: null,
  created_at: "2026-12-02T00:00:00.000Z",
  started_at: null,
  finished_at: null
})

plain("a progress line: cases done of total and passed so far; the report names each failed case and the score", () => {
  const ok = { question: "Q1", expect: { contains: "a" }, passed: true, outcome: "answered", reply: "a", sources: [] } as const
  const bad = { question: "Q2", expect: { declines: true }, passed: false, outcome: "answered", reply: "Sure,\n\nwe  do.", sources: [] } as const
  expect(runLine(runOf("running", [ok, bad], null), 8)).toBe("[####----] running: 2 of 4 cases done, 1 passed")
  expect(runReport(runOf("completed", [ok, bad, ok, ok], 0.75))).toEqual([
    "  failed case 2: Q2",
    "    expected: declines (the fallback)",
    "    reply (answered): Sure, we do.",
    "Score: 3/4 (0.75)"
  ])
  expect(replyStart("x".repeat(200), 10)).toBe(`${"x".repeat(9)}…`)
})

layer(testServer(), { excludeTestServices: true })("cli evaluate", (it) => {
  it.effect(
    "creates an evaluation from a file, follows its run, prints the failed case and the score 2/3, exits 0; --json; an unknown evaluation, a bad file and a timeout exit 1",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const ws = yield* h.seed()
        const key = ws.secretTest
        const agentId = yield* createAgent(h, key)
        const source = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
          key,
          body: {
            type: "text",
            title: "Opening hours",
            content: "# Opening hours\n\nThe shop in Lisbon opens at nine in the morning on weekdays and closes at six in the evening."
          }
        })
        expect(source.status, source.text).toBe(201)
        const sourceId = source.body.data.id as string
        const [settled] = yield* waitSettled(h, key, agentId, [sourceId])
        expect(settled.status).toBe("indexed")

        const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "cli-evaluate-")))
        const file = join(dir, "shop-basics.json")
        const cases = [
          { question: "When does the shop in Lisbon open on weekdays?", expect: { source_id: sourceId } },
          { question: "When does the shop in Lisbon close on weekdays?", expect: { contains: "closes at SIX" } },
          { question: "Can I pay with bitcoin?", expect: { contains: "bitcoin accepted" } }
        ]
        yield* Effect.promise(() => writeFile(file, JSON.stringify(cases)))
        const connection = ["--url", h.url, "--interval-ms", "200"]
        const env = { API_KEY: key }

        const first = yield* runCli(["evaluate", "--agent", agentId, "--cases", file, ...connection], env)
        expect(first.code, first.stderr + first.stdout).toBe(0)
        expect(first.stdout).toMatch(
          new RegExp(`^Created evaluation evl_\\w+ "shop-basics" \\(3 cases\\) for ${agentId}; run evr_\\w+$`, "m")
        )
        expect(first.stdout).toContain("[####################] completed: 3 of 3 cases done, 2 passed")
        expect(first.stdout).toContain("  failed case 3: Can I pay with bitcoin?\n    expected: contains \"bitcoin accepted\"\n    reply (fallback): ")
        expect(first.stdout).not.toContain("failed case 1")
        expect(first.stdout).not.toContain("failed case 2")
        expect(first.stdout.trimEnd().split("\n").at(-1)).toBe("Score: 2/3 (0.6667)")
        const evaluationId = /evaluation (evl_\w+)/.exec(first.stdout)![1]!

        // a new run of the same evaluation, for a script: the final run on stdout, the people's lines on stderr
        const again = yield* runCli(["evaluate", "--agent", agentId, "--evaluation", evaluationId, "--json", ...connection], env)
        expect(again.code, again.stderr).toBe(0)
        const run = JSON.parse(again.stdout) as EvaluationRun
        expect(run).toMatchObject({ object: "evaluation_run", evaluation_id: evaluationId, status: "completed", total: 3, passed: 2 })
        expect(run.results).toHaveLength(3)
        expect(again.stderr).toContain(`Run ${run.id} of evaluation ${evaluationId} for ${agentId} (3 cases)`)
        expect(again.stderr).toContain("Score: 2/3 (0.6667)")
        const runs = yield* h.call("GET", `/v1/agents/${agentId}/evaluations/${evaluationId}/runs`, { key })
        expect(runs.body.data).toHaveLength(2)

        // given up after --timeout-s: one line that says the run goes on and where to see it
        const impatient = yield* runCli(
          ["evaluate", "--agent", agentId, "--evaluation", evaluationId, "--timeout-s", "0", ...connection],
          env
        )
        expect(impatient.code).toBe(1)
        expect(impatient.stderr).toMatch(
          new RegExp(`^error: gave up after 0 s: run evr_\\w+ is still (queued|running) .*; it goes on, see GET /v1/agents/${agentId}/evaluations/${evaluationId}/runs/evr_\\w+\n$`)
        )

        const unknown = yield* runCli(["evaluate", "--agent", agentId, "--evaluation", "evl_doesnotexist0000", ...connection], env)
        expect(unknown.code).toBe(1)
        expect(unknown.stdout).toBe("")
        expect(unknown.stderr.trimEnd().split("\n")).toHaveLength(1)
        expect(unknown.stderr).toMatch(/^error: .*(not found|no |missing|exist)/i)
        // a cases file the API would refuse: said before anything is sent, at its place
        const bad = join(dir, "bad.json")
        yield* Effect.promise(() => writeFile(bad, JSON.stringify([{ question: "Hello?" }])))
        const refused = yield* runCli(["evaluate", "--agent", agentId, "--cases", bad, ...connection], env)
        expect(refused.code).toBe(1)
        expect(refused.stderr).toBe(`error: ${bad}: [0].expect: is missing\n`)
        yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
      }).pipe(Effect.scoped),
    180_000
  )
})
