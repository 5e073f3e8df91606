/**
 * SQL of evaluations and their runs (migration 0045), through the `db/Sql.ts` helpers: rows decoded with
 * Schema, database failures defects. Every read by the API is scoped to one workspace, environment and agent;
 * the run's job reads its run by id alone (its payload names it).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Environment, Plan } from "../../schema/Auth.js"
import type { PageRequest } from "../../schema/Envelope.js"
import { CaseResult, type Evaluation, EvaluationCase, type EvaluationRun, RunStatus, RunTrigger } from "../../schema/Evaluations.js"
import { AgentId, EvaluationId, EvaluationRunId, WorkspaceId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { DbDate, DbJson } from "../db/Columns.js"
import { decodeAll, decodeOne, decodeSingle, execute, lockWith, transaction } from "../db/Sql.js"
import { iso } from "../Time.js"

export const EvaluationRow = Schema.Struct({
  seq: Schema.String,
  id: EvaluationId,
  agent_id: AgentId,
  name: Schema.String,
  cases: DbJson(Schema.Array(EvaluationCase)),
  run_on_knowledge_change: Schema.Boolean,
  auto_run_skipped_at: Schema.NullOr(DbDate),
  created_at: DbDate,
  updated_at: DbDate
})
export type EvaluationRow = typeof EvaluationRow.Type

export const RunRow = Schema.Struct({
  seq: Schema.String,
  id: EvaluationRunId,
  workspace_id: WorkspaceId,
  environment: Environment,
  agent_id: AgentId,
  evaluation_id: EvaluationId,
  status: RunStatus,
  trigger: RunTrigger,
  total: Schema.Int,
  passed: Schema.Int,
  results: DbJson(Schema.Array(CaseResult)),
  error_code: Schema.NullOr(Schema.Literal("ai_failed", "internal_error")),
  error: Schema.NullOr(Schema.String),
  created_at: DbDate,
  started_at: Schema.NullOr(DbDate),
  finished_at: Schema.NullOr(DbDate)
})
export type RunRow = typeof RunRow.Type

/** `passed / total` to four decimals. */
export const scoreOf = (passed: number, total: number) => (total === 0 ? 0 : Math.round((passed / total) * 10_000) / 10_000)

export const toRun = (row: RunRow): EvaluationRun => ({
  id: row.id,
  object: "evaluation_run",
  evaluation_id: row.evaluation_id,
  agent_id: row.agent_id,
  status: row.status,
  trigger: row.trigger,
  total: row.total,
  passed: row.passed,
  score: row.status === "completed" ? scoreOf(row.passed, row.total) : null,
  results: row.results,
  error: row.error_code === null ? null : { code: row.error_code, message: row.error ?? "" },
  created_at: iso(row.created_at),
  started_at: row.started_at === null ? null : iso(row.started_at),
  finished_at: row.finished_at === null ? null : iso(row.finished_at)
})

export const toEvaluation = (row: EvaluationRow, latest: RunRow | undefined): Evaluation => ({
  id: row.id,
  object: "evaluation",
  agent_id: row.agent_id,
  name: row.name,
  cases: row.cases,
  run_on_knowledge_change: row.run_on_knowledge_change,
  auto_run_skipped_at: row.auto_run_skipped_at === null ? null : iso(row.auto_run_skipped_at),
  latest_run: latest === undefined ? null : toRun(latest),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

const CountRow = Schema.Struct({ n: Schema.Int })
const PlanRow = Schema.Struct({ plan: Plan })
const IdRow = Schema.Struct({ id: EvaluationId })

// `seq` is read as text (a bigint); lists order on the column itself (`evaluations.seq`), never on this text
// (where "10" sorts before "9"): an output column's name wins over the table's in `order by`
const evaluationCols =
  "seq::text as seq, id, agent_id, name, cases, run_on_knowledge_change, auto_run_skipped_at, created_at, updated_at"
const runCols =
  "seq::text as seq, id, workspace_id, environment, agent_id, evaluation_id, status, trigger, total, passed, results, " +
  "error_code, error, created_at, started_at, finished_at"

export class EvaluationsRepo extends Effect.Service<EvaluationsRepo>()("Evaluations/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ecols = sql.literal(evaluationCols)
    const rcols = sql.literal(runCols)
    const jsonb = (value: unknown) => sql`${JSON.stringify(value)}::text::jsonb`
    const scoped = (tenant: Tenant, agentId: AgentId) =>
      sql`workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and agent_id = ${agentId}`
    const afterSeq = (page: PageRequest) =>
      Option.isSome(page.after) ? sql`and seq < ${page.after.value}::bigint` : sql.literal("")

    const inTransaction = transaction(sql)
    /** Serialises what counts against a bound (an agent's evaluations, a workspace's runs of the month); inside a transaction. */
    const lock = (key: string) => lockWith(sql)(key)

    const plan = (tenant: Tenant) =>
      decodeSingle(PlanRow, sql`select plan from workspaces where id = ${tenant.workspaceId}`).pipe(Effect.map((r) => r.plan))

    const countEvaluations = (tenant: Tenant, agentId: AgentId) =>
      decodeSingle(CountRow, sql`select count(*)::integer as n from evaluations where ${scoped(tenant, agentId)}`).pipe(
        Effect.map((r) => r.n)
      )

    const runsSince = (tenant: Tenant, since: Date) =>
      decodeSingle(
        CountRow,
        sql`select count(*)::integer as n from evaluation_runs
          where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and created_at >= ${since}`
      ).pipe(Effect.map((r) => r.n))

    const insertEvaluation = (
      tenant: Tenant,
      agentId: AgentId,
      values: {
        readonly id: EvaluationId
        readonly name: string
        readonly cases: ReadonlyArray<EvaluationCase>
        readonly runOnKnowledgeChange: boolean
      },
      at: Date
    ) =>
      decodeSingle(
        EvaluationRow,
        sql`insert into evaluations (id, workspace_id, environment, agent_id, name, cases, run_on_knowledge_change,
            created_at, updated_at)
          values (${values.id}, ${tenant.workspaceId}, ${tenant.environment}, ${agentId}, ${values.name},
            ${jsonb(Schema.encodeSync(Schema.Array(EvaluationCase))(values.cases))}, ${values.runOnKnowledgeChange}, ${at}, ${at})
          returning ${ecols}`
      )

    /** The fields given replaced; none when there is no such evaluation. */
    const updateEvaluation = (
      tenant: Tenant,
      agentId: AgentId,
      id: EvaluationId,
      changes: {
        readonly name?: string | undefined
        readonly cases?: ReadonlyArray<EvaluationCase> | undefined
        readonly runOnKnowledgeChange?: boolean | undefined
      },
      at: Date
    ) =>
      decodeOne(
        EvaluationRow,
        sql`update evaluations set
            name = ${changes.name === undefined ? sql`name` : sql`${changes.name}`},
            cases = ${changes.cases === undefined ? sql`cases` : jsonb(Schema.encodeSync(Schema.Array(EvaluationCase))(changes.cases))},
            run_on_knowledge_change = ${
              changes.runOnKnowledgeChange === undefined ? sql`run_on_knowledge_change` : sql`${changes.runOnKnowledgeChange}`
            },
            updated_at = ${at}
          where ${scoped(tenant, agentId)} and id = ${id}
          returning ${ecols}`
      )

    /** An agent's evaluations that run by themselves when its knowledge changes, oldest first. */
    const runningOnKnowledgeChange = (tenant: Tenant, agentId: AgentId) =>
      decodeAll(
        EvaluationRow,
        sql`select ${ecols} from evaluations where ${scoped(tenant, agentId)} and run_on_knowledge_change
          order by evaluations.seq`
      )

    /** An automatic run of it was skipped at `at` (the month's runs used up). */
    const markAutoRunSkipped = (id: EvaluationId, at: Date) =>
      execute(sql`update evaluations set auto_run_skipped_at = ${at} where id = ${id}`)

    const evaluationPage = (tenant: Tenant, agentId: AgentId, page: PageRequest) =>
      decodeAll(
        EvaluationRow,
        sql`select ${ecols} from evaluations where ${scoped(tenant, agentId)} ${afterSeq(page)}
          order by evaluations.seq desc limit ${page.limit + 1}`
      )

    const findEvaluation = (tenant: Tenant, agentId: AgentId, id: EvaluationId) =>
      decodeOne(EvaluationRow, sql`select ${ecols} from evaluations where ${scoped(tenant, agentId)} and id = ${id}`)

    /** The evaluation of a run's job (no tenant: the run named it). */
    const evaluationById = (id: EvaluationId) => decodeOne(EvaluationRow, sql`select ${ecols} from evaluations where id = ${id}`)

    /** Deletes it and its runs (`on delete cascade`); its id, or none when there was none. */
    const deleteEvaluation = (tenant: Tenant, agentId: AgentId, id: EvaluationId) =>
      decodeOne(IdRow, sql`delete from evaluations where ${scoped(tenant, agentId)} and id = ${id} returning id`).pipe(
        Effect.map(Option.map((r) => r.id))
      )

    const insertRun = (
      tenant: Tenant,
      agentId: AgentId,
      values: {
        readonly id: EvaluationRunId
        readonly evaluationId: EvaluationId
        readonly total: number
        readonly trigger: RunTrigger
      },
      at: Date
    ) =>
      Effect.zipLeft(
        decodeSingle(
          RunRow,
          sql`insert into evaluation_runs (id, workspace_id, environment, agent_id, evaluation_id, status, trigger, total,
              created_at)
            values (${values.id}, ${tenant.workspaceId}, ${tenant.environment}, ${agentId}, ${values.evaluationId}, 'queued',
              ${values.trigger}, ${values.total}, ${at})
            returning ${rcols}`
        ),
        // a run queued: an earlier automatic run's skip is behind it
        execute(sql`update evaluations set auto_run_skipped_at = null
          where id = ${values.evaluationId} and auto_run_skipped_at is not null`)
      )

    /** The newest run of each of these evaluations. */
    const latestRuns = (ids: ReadonlyArray<EvaluationId>) =>
      ids.length === 0
        ? Effect.succeed([] as ReadonlyArray<RunRow>)
        : decodeAll(
            RunRow,
            sql`select distinct on (evaluation_id) ${rcols} from evaluation_runs
              where evaluation_id in ${sql.in(ids)} order by evaluation_id, evaluation_runs.seq desc`
          )

    const runPage = (evaluationId: EvaluationId, page: PageRequest) =>
      decodeAll(
        RunRow,
        sql`select ${rcols} from evaluation_runs where evaluation_id = ${evaluationId} ${afterSeq(page)}
          order by evaluation_runs.seq desc limit ${page.limit + 1}`
      )

    const findRun = (evaluationId: EvaluationId, id: EvaluationRunId) =>
      decodeOne(RunRow, sql`select ${rcols} from evaluation_runs where evaluation_id = ${evaluationId} and id = ${id}`)

    const runById = (id: EvaluationRunId) => decodeOne(RunRow, sql`select ${rcols} from evaluation_runs where id = ${id}`)

    /**
     * Starts (or starts again, after an attempt that stopped) a run not yet ended: its results so far are dropped,
     * its total the evaluation's cases now (they may have been edited since it was queued).
     */
    const startRun = (id: EvaluationRunId, total: number, at: Date) =>
      decodeOne(
        RunRow,
        sql`update evaluation_runs set status = 'running', started_at = ${at}, total = ${total}, passed = 0, results = '[]'::jsonb
          where id = ${id} and status in ('queued', 'running')
          returning ${rcols}`
      )

    /** One more case's result; none when the run is no longer running (deleted). */
    const appendResult = (id: EvaluationRunId, result: CaseResult) =>
      decodeOne(
        CountRow,
        sql`update evaluation_runs set results = results || ${jsonb([Schema.encodeSync(CaseResult)(result)])},
            passed = passed + ${result.passed ? 1 : 0}
          where id = ${id} and status = 'running'
          returning passed as n`
      )

    const completeRun = (id: EvaluationRunId, at: Date) =>
      decodeOne(
        RunRow,
        sql`update evaluation_runs set status = 'completed', finished_at = ${at}
          where id = ${id} and status = 'running'
          returning ${rcols}`
      )

    const failRun = (id: EvaluationRunId, error: { readonly code: "ai_failed" | "internal_error"; readonly message: string }, at: Date) =>
      decodeOne(
        RunRow,
        sql`update evaluation_runs set status = 'failed', error_code = ${error.code}, error = ${error.message}, finished_at = ${at}
          where id = ${id} and status in ('queued', 'running')
          returning ${rcols}`
      )

    return {
      transaction: inTransaction,
      lock,
      plan,
      countEvaluations,
      runsSince,
      insertEvaluation,
      updateEvaluation,
      runningOnKnowledgeChange,
      markAutoRunSkipped,
      evaluationPage,
      findEvaluation,
      evaluationById,
      deleteEvaluation,
      insertRun,
      latestRuns,
      runPage,
      findRun,
      runById,
      startRun,
      appendResult,
      completeRun,
      failRun
    } as const
  })
}) {}
