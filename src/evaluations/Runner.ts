/**
 * An evaluation run's job: each case asked in order, through the same answering a conversation's reply uses
 * (`conversations/Answering.ts`: retrieval, glossary, the AI provider), without writing a conversation or
 * counting usage. Each case's result is written as it comes, so the run shows its progress; the run ends
 * `completed` with its score, and `evaluation.run_completed`, in one transaction.
 *
 * An attempt that stops before the end (its process killed) starts the run again from its first case. A
 * transient provider failure is retried with backoff; a lasting one, or the last attempt, fails the run
 * (`ai_failed`) with `evaluation.run_failed`; attempts that kept dying fail it `internal_error` (`giveUp`).
 */
import type { Agent } from "../../schema/Agents.js"
import { agentLanguageOf } from "../languages/AgentLanguages.js"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { AiError } from "../../layers/Ai.js"
import { type GiveUpHow, type Job, Outcome } from "../../layers/JobQueue.js"
import type { AiUnavailable } from "../../schema/Errors.js"
import type { CaseResult, EvaluationCase } from "../../schema/Evaluations.js"
import type { EvaluationRunId } from "../../schema/Ids.js"
import { tenantOfRow } from "../../schema/Tenant.js"
import { Agents } from "../agents/Agents.js"
import { type Answer, Answering } from "../conversations/Answering.js"
import { Outbox } from "../events/Outbox.js"
import { now } from "../Time.js"
import { EvaluationsRepo, type RunRow, toRun } from "./EvaluationsRepo.js"
import { RunPayload } from "./Evaluations.js"

/** Attempts of one run, and the wait before each retry of a transient failure. */
export const runMaxAttempts = 4
export const runRetryDelayMillis = (attempts: number) => 10_000 * 4 ** attempts

const internalMessage = "The run stopped before its end at every attempt; start it again"

/** Case and spacing folded: what `contains` compares. */
const fold = (text: string) => text.toLowerCase().replace(/\s+/g, " ").trim()

/** Whether `answer` is what the case expects. */
export const passes = (expectation: EvaluationCase["expect"], answer: Answer): boolean => {
  if ("declines" in expectation) return answer.outcome === "fallback"
  if ("source_id" in expectation) return answer.sources.some((s) => s.type === "chunk" && s.id === expectation.source_id)
  return answer.outcome === "answered" && fold(answer.content).includes(fold(expectation.contains))
}

const decodePayload = Schema.decodeUnknownOption(RunPayload)

export class Runner extends Effect.Service<Runner>()("Evaluations/Runner", {
  effect: Effect.gen(function* () {
    const repo = yield* EvaluationsRepo
    const agents = yield* Agents
    const answering = yield* Answering
    const outbox = yield* Outbox


    /** The run ended: its status written and its event emitted together. */
    const finish = (ended: Option.Option<RunRow>) =>
      Option.match(ended, {
        onNone: () => Effect.void,
        onSome: (run) => {
          // the event names the run and its score; its results are read from the API
          const { results: _results, ...summary } = toRun(run)
          return outbox
            .emit({
              ...tenantOfRow(run),
              type: run.status === "completed" ? "evaluation.run_completed" : "evaluation.run_failed",
              data: { run: summary }
            })
            .pipe(Effect.asVoid)
        }
      })

    const fail = (runId: EvaluationRunId, error: { readonly code: "ai_failed" | "internal_error"; readonly message: string }) =>
      repo.transaction(Effect.flatMap(now, (at) => Effect.flatMap(repo.failRun(runId, error, at), finish)))

    /** Every case, in order; false when the run stopped being ours (deleted). */
    const runCases = (run: RunRow, cases: ReadonlyArray<EvaluationCase>, agent: Agent) =>
      Effect.gen(function* () {
        const tenant = tenantOfRow(run)
        for (const c of cases) {
          const answer = yield* answering.answerOnce({
            tenant,
            agentId: run.agent_id,
            question: c.question,
            instructions: agent.instructions,
            agentLanguage: agentLanguageOf(agent)
          })
          const result: CaseResult = {
            question: c.question,
            expect: c.expect,
            passed: passes(c.expect, answer),
            outcome: answer.outcome,
            reply: answer.content,
            sources: answer.sources
          }
          if (Option.isNone(yield* repo.appendResult(run.id, result))) return false
        }
        return true
      })

    const handle = (job: Job): Effect.Effect<Outcome> =>
      Effect.gen(function* () {
        const payload = decodePayload(job.payload)
        if (Option.isNone(payload)) return Outcome.failed("unreadable payload")
        const runId = payload.value.run_id
        const found = yield* repo.runById(runId)
        if (Option.isNone(found) || found.value.status === "completed" || found.value.status === "failed") return Outcome.done
        const evaluation = yield* repo.evaluationById(found.value.evaluation_id)
        const agent = yield* Effect.option(agents.retrieve(tenantOfRow(found.value), found.value.agent_id))
        if (Option.isNone(evaluation)) return Outcome.done
        if (Option.isNone(agent)) {
          yield* fail(runId, { code: "internal_error", message: "The agent was deleted before the run" })
          return Outcome.done
        }
        const started = yield* repo.startRun(runId, evaluation.value.cases.length, yield* now)
        if (Option.isNone(started)) return Outcome.done
        return yield* runCases(started.value, evaluation.value.cases, agent.value).pipe(
          Effect.flatMap((whole) =>
            whole ? repo.transaction(Effect.flatMap(now, (at) => Effect.flatMap(repo.completeRun(runId, at), finish))) : Effect.void
          ),
          Effect.as(Outcome.done),
          Effect.catchAll((error: AiError | AiUnavailable) =>
            Effect.gen(function* () {
              yield* Effect.logWarning(`evaluation run ${runId} failed: ${error.message}`)
              const transient = error._tag === "AiUnavailable" || error.transient
              if (!transient || job.attempts + 1 >= runMaxAttempts) {
                yield* fail(runId, { code: "ai_failed", message: `The AI provider failed: ${error.message}` })
                // the run shows why; the job is failed too, as the queue's other given-up work is
                return Outcome.failed(error.message)
              }
              const at = yield* now
              return Outcome.retryAt(new Date(at.getTime() + runRetryDelayMillis(job.attempts)), error.message)
            })
          )
        )
      }).pipe(Effect.withSpan("Evaluations.run"))

    /** The queue's `onGiveUp`: the run's last attempt died, or its attempts stopped their process. */
    const giveUp = (job: Job, _reason: string, _how: GiveUpHow): Effect.Effect<void> =>
      Option.match(decodePayload(job.payload), {
        onNone: () => Effect.void,
        onSome: (payload) => fail(payload.run_id, { code: "internal_error", message: internalMessage })
      })

    return { handle, giveUp } as const
  }),
  dependencies: [EvaluationsRepo.Default]
}) {}
