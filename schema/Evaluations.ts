/**
 * Evaluations: an agent's set of test questions, each with what a good answer holds, run in the background
 * (one agent's runs one at a time) whenever the workspace asks, each run kept with its results and its score so
 * runs can be compared over time.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import type { Plan } from "./Auth.js"
import { Authentication, RequiredScope } from "./Auth.js"
import { MessageOutcome, MessageSource } from "./Conversations.js"
import { Deleted, Envelope, ListEnvelope, PageParams, Timestamp } from "./Envelope.js"
import { ApiError, InvalidCursor, InvalidLimit, LimitReached, ParameterInvalid, ResourceMissing } from "./Errors.js"
import { AgentId, EvaluationId, EvaluationRunId, SourceId } from "./Ids.js"
import { StrictStruct } from "./Payload.js"
import { reference } from "./Reference.js"

/** Most cases in one evaluation. */
export const maxCases = 100
/** Most evaluations one agent keeps. */
export const maxEvaluations = 50
export const maxQuestionChars = 2_000
export const maxExpectedChars = 500
export const maxNameChars = 200
/** Runs a workspace may start per calendar month (UTC) and environment; null: no cap. They cost no credit. */
export const monthlyRunCap: Record<Plan, number | null> = { free: 20, starter: 200, pro: 2_000, enterprise: null }

const Name = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(maxNameChars, { message: () => `name must be at most ${maxNameChars} characters` })
)
const Question = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "question must not be empty" }),
  Schema.maxLength(maxQuestionChars, { message: () => `question must be at most ${maxQuestionChars} characters` })
)
const Expected = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "contains must not be empty" }),
  Schema.maxLength(maxExpectedChars, { message: () => `contains must be at most ${maxExpectedChars} characters` })
)

export const ExpectContains = StrictStruct({
  contains: Expected.annotations({
    description: "Text the reply must contain (case and spacing ignored); a fallback reply never passes"
  })
}).annotations({ identifier: "ExpectContains" })
export const ExpectDeclines = StrictStruct({
  declines: Schema.Literal(true).annotations({
    description: "The agent must decline: find nothing relevant and give the fallback (outcome `fallback`)"
  })
}).annotations({ identifier: "ExpectDeclines" })
export const ExpectSource = StrictStruct({
  source_id: SourceId.annotations({ description: "A knowledge source of the agent the reply must draw on" })
}).annotations({ identifier: "ExpectSource" })

export const Expectation = Schema.Union(ExpectContains, ExpectDeclines, ExpectSource).annotations({
  identifier: "EvaluationExpectation",
  description: "Exactly one of `contains`, `declines: true` or `source_id`"
})
export type Expectation = typeof Expectation.Type

export const EvaluationCase = StrictStruct({
  question: Question,
  expect: Expectation
}).annotations({ identifier: "EvaluationCase" })
export type EvaluationCase = typeof EvaluationCase.Type

const Cases = Schema.Array(EvaluationCase).pipe(
  Schema.minItems(1, { message: () => "cases must hold at least one case" }),
  Schema.maxItems(maxCases, { message: () => `cases holds at most ${maxCases} cases` })
)

/** Wait after the agent's last knowledge change before its automatic runs start (a burst of changes: one run). */
export const knowledgeChangeDebounceMillis = 60_000

const RunOnKnowledgeChange = Schema.Boolean.annotations({
  description:
    "Run it by itself when the agent's knowledge changes (a source indexed, refreshed with changes or deleted; a Q&A " +
    "item written or deleted; Q&A regenerated), a minute after the last change"
})

export const CreateEvaluation = StrictStruct({
  name: Name,
  cases: Cases,
  run_on_knowledge_change: Schema.optional(RunOnKnowledgeChange.annotations({ default: false }))
}).annotations({ identifier: "CreateEvaluation" })
export type CreateEvaluation = typeof CreateEvaluation.Type

export const UpdateEvaluation = StrictStruct({
  name: Schema.optional(Name),
  cases: Schema.optional(Cases.annotations({ description: "Replaces the cases; runs already made keep their results" })),
  run_on_knowledge_change: Schema.optional(RunOnKnowledgeChange)
}).annotations({ identifier: "UpdateEvaluation" })
export type UpdateEvaluation = typeof UpdateEvaluation.Type

export const RunTrigger = Schema.Literal("manual", "knowledge_change").annotations({
  description:
    "`manual`: started by the evaluation's creation or `POST .../runs`; `knowledge_change`: started by itself after the " +
    "agent's knowledge changed (`run_on_knowledge_change`)"
})
export type RunTrigger = typeof RunTrigger.Type

export const RunStatus = Schema.Literal("queued", "running", "completed", "failed").annotations({
  description: "`queued` (waiting behind the agent's other runs), `running`, `completed` or `failed` (see `error`)"
})
export type RunStatus = typeof RunStatus.Type

export const CaseResult = Schema.Struct({
  question: Schema.String,
  expect: Expectation,
  passed: Schema.Boolean,
  outcome: MessageOutcome.annotations({ description: "`answered` or `fallback`, as a conversation's reply would be" }),
  reply: Schema.String.annotations({ description: "The agent's reply, as a visitor would have read it" }),
  sources: Schema.Array(MessageSource).annotations({ description: "What the reply drew on" })
}).annotations({ identifier: "EvaluationCaseResult" })
export type CaseResult = typeof CaseResult.Type

export const RunError = Schema.Struct({
  code: Schema.Literal("ai_failed", "internal_error").annotations({
    description: "`ai_failed`: the AI provider kept failing or refused; `internal_error`: the run stopped before its end, at every attempt"
  }),
  message: Schema.String
}).annotations({ identifier: "EvaluationRunError" })

export const EvaluationRun = Schema.Struct({
  id: EvaluationRunId,
  object: Schema.Literal("evaluation_run"),
  evaluation_id: EvaluationId,
  agent_id: AgentId,
  status: RunStatus,
  trigger: RunTrigger,
  total: Schema.Int.annotations({ description: "The evaluation's cases" }),
  passed: Schema.Int.annotations({ description: "Cases passed so far" }),
  score: Schema.NullOr(Schema.Number).annotations({
    description: "`passed / total` (0 to 1, four decimals) once `completed`; null before, and on a failed run"
  }),
  results: Schema.Array(CaseResult).annotations({ description: "One per case run so far, in the cases' order" }),
  error: Schema.NullOr(RunError),
  created_at: Timestamp,
  started_at: Schema.NullOr(Timestamp),
  finished_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "EvaluationRun" })
export type EvaluationRun = typeof EvaluationRun.Type

export const Evaluation = Schema.Struct({
  id: EvaluationId,
  object: Schema.Literal("evaluation"),
  agent_id: AgentId,
  name: Schema.String,
  cases: Schema.Array(EvaluationCase),
  run_on_knowledge_change: RunOnKnowledgeChange,
  auto_run_skipped_at: Schema.NullOr(Timestamp).annotations({
    description:
      "When an automatic run was last skipped because the plan's runs of the month were used up; null once a run " +
      "was queued since, and when none was skipped"
  }),
  latest_run: Schema.NullOr(EvaluationRun).annotations({ description: "Its newest run (its status, results and score)" }),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Evaluation" })
export type Evaluation = typeof Evaluation.Type

const agentPath = HttpApiSchema.param("id", AgentId)
const evaluationPath = HttpApiSchema.param("evaluation_id", EvaluationId)
const runPath = HttpApiSchema.param("run_id", EvaluationRunId)
const missing = ApiError(ResourceMissing)
const limited = ApiError(LimitReached)

export class EvaluationsGroup extends HttpApiGroup.make("evaluations")
  .add(
    HttpApiEndpoint.post("create")`/v1/agents/${agentPath}/evaluations`
      .setPayload(CreateEvaluation)
      .addSuccess(Envelope(Evaluation), { status: 201 })
      .addError(missing)
      .addError(limited)
      .addError(ApiError(ParameterInvalid))
      .annotate(RequiredScope, "write:agents")
      .annotate(
        OpenApi.Description,
        `Body \`name\`, \`cases\` (1 to ${maxCases}, each \`question\` and \`expect\`: \`{contains}\`, \`{declines: true}\` ` +
          "or `{source_id}`), optional `run_on_knowledge_change` (default false); `201` with its first run queued (`latest_run`); " +
          "`402 limit_reached` when the month's runs are used up"
      )
      .annotate(OpenApi.Summary, "Keep a set of test questions for an agent and start its first run")
  )
  .add(
    HttpApiEndpoint.get("list")`/v1/agents/${agentPath}/evaluations`
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(Evaluation))
      .addError(missing)
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:agents")
      .annotate(OpenApi.Description, "Paginated, newest first, each with its `latest_run`")
      .annotate(OpenApi.Summary, "List an agent's evaluations")
  )
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/agents/${agentPath}/evaluations/${evaluationPath}`
      .addSuccess(Envelope(Evaluation))
      .addError(missing)
      .annotate(RequiredScope, "read:agents")
      .annotate(OpenApi.Summary, "An evaluation, with its latest run's status, results and score")
  )
  .add(
    HttpApiEndpoint.patch("update")`/v1/agents/${agentPath}/evaluations/${evaluationPath}`
      .setPayload(UpdateEvaluation)
      .addSuccess(Envelope(Evaluation))
      .addError(missing)
      .annotate(RequiredScope, "write:agents")
      .annotate(
        OpenApi.Description,
        "Body `name`, `cases` (replaces them all; earlier runs keep their results) and `run_on_knowledge_change`, each " +
          "optional; unknown fields are refused. Starts no run"
      )
      .annotate(OpenApi.Summary, "Edit an evaluation, or turn its runs on knowledge changes on or off")
  )
  .add(
    HttpApiEndpoint.del("delete")`/v1/agents/${agentPath}/evaluations/${evaluationPath}`
      .addSuccess(Envelope(Deleted(EvaluationId, "evaluation")))
      .addError(missing)
      .annotate(RequiredScope, "write:agents")
      .annotate(OpenApi.Description, "Deletes it with its runs; a run in progress stops before its next case")
      .annotate(OpenApi.Summary, "Delete an evaluation and its runs")
  )
  .add(
    HttpApiEndpoint.post("startRun")`/v1/agents/${agentPath}/evaluations/${evaluationPath}/runs`
      .addSuccess(Envelope(EvaluationRun), { status: 201 })
      .addError(missing)
      .addError(limited)
      .annotate(RequiredScope, "write:agents")
      .annotate(
        OpenApi.Description,
        "No body. `201` with the run `queued`: it runs after the agent's earlier runs; `402 limit_reached` when the month's runs are used up"
      )
      .annotate(OpenApi.Summary, "Run an evaluation again (earlier runs are kept)")
  )
  .add(
    HttpApiEndpoint.get("listRuns")`/v1/agents/${agentPath}/evaluations/${evaluationPath}/runs`
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(EvaluationRun))
      .addError(missing)
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:agents")
      .annotate(OpenApi.Description, "Paginated, newest first")
      .annotate(OpenApi.Summary, "List an evaluation's runs, to compare their scores")
  )
  .add(
    HttpApiEndpoint.get("retrieveRun")`/v1/agents/${agentPath}/evaluations/${evaluationPath}/runs/${runPath}`
      .addSuccess(Envelope(EvaluationRun))
      .addError(missing)
      .annotate(RequiredScope, "read:agents")
      .annotate(OpenApi.Summary, "A run: its status, each case's result and its score")
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    reference("evaluations", {
      maxCases,
      maxEvaluations,
      maxQuestionChars,
      maxExpectedChars,
      maxNameChars,
      freeRuns: monthlyRunCap.free ?? "no cap",
      starterRuns: monthlyRunCap.starter ?? "no cap",
      proRuns: monthlyRunCap.pro ?? "no cap",
      debounceSeconds: knowledgeChangeDebounceMillis / 1000
    })
  )
  .annotate(OpenApi.Title, "Evaluations") {}
