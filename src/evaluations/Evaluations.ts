/**
 * Evaluation programs: an agent's evaluations kept, listed and deleted, and their runs started and read. A run
 * is one job on `evaluationQueue`, keyed by the agent, so one agent's runs go one at a time in the order asked
 * for (a run asked for while another runs waits, `queued`). Runs cost no credit; a workspace's runs per month
 * are bounded by its plan (`monthlyRunCap`), counted under a lock of the workspace so two requests cannot both
 * take the last one.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Environment } from "../../schema/Auth.js"
import type { PageParams } from "../../schema/Envelope.js"
import { LimitReached, ParameterInvalid, ResourceMissing } from "../../schema/Errors.js"
import {
  type CreateEvaluation,
  maxEvaluations,
  monthlyRunCap,
  type RunTrigger,
  type UpdateEvaluation
} from "../../schema/Evaluations.js"
import { type AgentId, EvaluationId, EvaluationRunId, WorkspaceId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { JobQueue } from "../../layers/JobQueue.js"
import { Agents } from "../agents/Agents.js"
import { Paginator, toPage } from "../http/Pagination.js"
import { now } from "../Time.js"
import { type EvaluationRow, EvaluationsRepo, toEvaluation, toRun } from "./EvaluationsRepo.js"

export const evaluationQueue = "evaluation-run"

/** What a run's job carries: its run, and whose it is. */
export const RunPayload = Schema.Struct({ workspace_id: WorkspaceId, environment: Environment, run_id: EvaluationRunId })

const monthStart = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1))

const noEvaluation = (id: string) =>
  new ResourceMissing({ message: `No such evaluation: '${id}'`, param: "evaluation_id" })

export class Evaluations extends Effect.Service<Evaluations>()("Evaluations/Programs", {
  effect: Effect.gen(function* () {
    const repo = yield* EvaluationsRepo
    const agents = yield* Agents
    const ids = yield* IdGenerator
    const queue = yield* JobQueue
    const pages = yield* Paginator

    /** A new run of `evaluation`, counted against the month's runs and queued; inside the caller's transaction. */
    const queueRun = (tenant: Tenant, evaluation: EvaluationRow, trigger: RunTrigger = "manual") =>
      Effect.gen(function* () {
        yield* repo.lock(`evaluation-runs:${tenant.workspaceId}:${tenant.environment}`)
        const at = yield* now
        const plan = yield* repo.plan(tenant)
        const cap = monthlyRunCap[plan]
        if (cap !== null && (yield* repo.runsSince(tenant, monthStart(at))) >= cap) {
          return yield* new LimitReached({
            message: `The ${plan} plan allows ${cap} evaluation runs per month; this month's are used up.`
          })
        }
        const run = yield* repo.insertRun(
          tenant,
          evaluation.agent_id,
          { id: EvaluationRunId.make(yield* ids.make("evr")), evaluationId: evaluation.id, total: evaluation.cases.length, trigger },
          at
        )
        yield* queue.enqueue({
          queue: evaluationQueue,
          key: evaluation.agent_id,
          group: tenant.workspaceId,
          payload: Schema.encodeSync(RunPayload)({
            workspace_id: tenant.workspaceId,
            environment: tenant.environment,
            run_id: run.id
          })
        })
        return run
      })

    const create = Effect.fn("Evaluations.create")(function* (tenant: Tenant, agentId: AgentId, input: CreateEvaluation) {
      yield* agents.retrieve(tenant, agentId)
      return yield* repo.transaction(
        Effect.gen(function* () {
          yield* repo.lock(`evaluations:${agentId}`)
          if ((yield* repo.countEvaluations(tenant, agentId)) >= maxEvaluations) {
            return yield* new ParameterInvalid({
              message: `An agent keeps at most ${maxEvaluations} evaluations; delete one first`,
              param: "name"
            })
          }
          const evaluation = yield* repo.insertEvaluation(
            tenant,
            agentId,
            {
              id: EvaluationId.make(yield* ids.make("evl")),
              name: input.name,
              cases: input.cases,
              runOnKnowledgeChange: input.run_on_knowledge_change ?? false
            },
            yield* now
          )
          const run = yield* queueRun(tenant, evaluation)
          return toEvaluation(evaluation, run)
        })
      )
    })

    const findEvaluation = (tenant: Tenant, agentId: AgentId, id: EvaluationId) =>
      Effect.gen(function* () {
        yield* agents.retrieve(tenant, agentId)
        const row = yield* repo.findEvaluation(tenant, agentId, id)
        return Option.isSome(row) ? row.value : yield* noEvaluation(id)
      })

    const list = Effect.fn("Evaluations.list")(function* (tenant: Tenant, agentId: AgentId, params: PageParams) {
      yield* agents.retrieve(tenant, agentId)
      const page = yield* pages.parse(`agents/${agentId}/evaluations`, params)
      const { rows, pagination } = toPage(yield* repo.evaluationPage(tenant, agentId, page), page)
      const latest = new Map((yield* repo.latestRuns(rows.map((r) => r.id))).map((run) => [run.evaluation_id, run]))
      return { items: rows.map((row) => toEvaluation(row, latest.get(row.id))), pagination }
    })

    const retrieve = Effect.fn("Evaluations.retrieve")(function* (tenant: Tenant, agentId: AgentId, id: EvaluationId) {
      const row = yield* findEvaluation(tenant, agentId, id)
      const [latest] = yield* repo.latestRuns([row.id])
      return toEvaluation(row, latest)
    })

    const update = Effect.fn("Evaluations.update")(function* (
      tenant: Tenant,
      agentId: AgentId,
      id: EvaluationId,
      input: UpdateEvaluation
    ) {
      yield* agents.retrieve(tenant, agentId)
      const changes = { name: input.name, cases: input.cases, runOnKnowledgeChange: input.run_on_knowledge_change }
      const row = yield* repo.updateEvaluation(tenant, agentId, id, changes, yield* now)
      if (Option.isNone(row)) return yield* noEvaluation(id)
      const [latest] = yield* repo.latestRuns([row.value.id])
      return toEvaluation(row.value, latest)
    })

    /**
     * The agent's knowledge changed a while ago (`Triggers.ts`): a run of each of its evaluations that runs on
     * knowledge changes, queued in the caller's transaction; one the month's runs no longer allow is skipped, and
     * the evaluation shows when (`auto_run_skipped_at`). Nothing for an agent deleted meanwhile. The runs queued.
     */
    const queueAutomaticRuns = (tenant: Tenant, agentId: AgentId) =>
      Effect.gen(function* () {
        if (Option.isNone(yield* Effect.option(agents.retrieve(tenant, agentId)))) return 0
        let queued = 0
        for (const evaluation of yield* repo.runningOnKnowledgeChange(tenant, agentId)) {
          yield* queueRun(tenant, evaluation, "knowledge_change").pipe(
            Effect.zipRight(Effect.sync(() => queued++)),
            Effect.catchTag("LimitReached", () =>
              Effect.flatMap(now, (at) => repo.markAutoRunSkipped(evaluation.id, at)).pipe(
                Effect.zipLeft(Effect.logInfo(`evaluation ${evaluation.id}: automatic run skipped, the month's runs are used up`))
              )
            )
          )
        }
        return queued
      })

    const remove = Effect.fn("Evaluations.remove")(function* (tenant: Tenant, agentId: AgentId, id: EvaluationId) {
      yield* agents.retrieve(tenant, agentId)
      const removed = yield* repo.deleteEvaluation(tenant, agentId, id)
      if (Option.isNone(removed)) return yield* noEvaluation(id)
      return { id: removed.value, object: "evaluation" as const, deleted: true as const }
    })

    const startRun = Effect.fn("Evaluations.startRun")(function* (tenant: Tenant, agentId: AgentId, id: EvaluationId) {
      const row = yield* findEvaluation(tenant, agentId, id)
      return toRun(yield* repo.transaction(queueRun(tenant, row)))
    })

    const listRuns = Effect.fn("Evaluations.listRuns")(function* (
      tenant: Tenant,
      agentId: AgentId,
      id: EvaluationId,
      params: PageParams
    ) {
      const row = yield* findEvaluation(tenant, agentId, id)
      const page = yield* pages.parse(`agents/${agentId}/evaluations/${id}/runs`, params)
      const { rows, pagination } = toPage(yield* repo.runPage(row.id, page), page)
      return { items: rows.map(toRun), pagination }
    })

    const retrieveRun = Effect.fn("Evaluations.retrieveRun")(function* (
      tenant: Tenant,
      agentId: AgentId,
      id: EvaluationId,
      runId: EvaluationRunId
    ) {
      const row = yield* findEvaluation(tenant, agentId, id)
      const run = yield* repo.findRun(row.id, runId)
      if (Option.isNone(run)) return yield* new ResourceMissing({ message: `No such run: '${runId}'`, param: "run_id" })
      return toRun(run.value)
    })

    return { create, list, retrieve, update, remove, startRun, listRuns, retrieveRun, queueAutomaticRuns } as const
  }),
  dependencies: [EvaluationsRepo.Default]
}) {}
