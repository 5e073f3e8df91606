/**
 * Evaluations that run by themselves when their agent's knowledge changes. The knowledge and Q&A areas tell the
 * `KnowledgeChanged` port inside the transaction of the change; this area serves it: the agent's runs become due
 * a minute later (`knowledgeChangeDebounceMillis`, or `EVALUATION_DEBOUNCE_MS`), pushed back by every further change, so a burst of changes
 * (a batch of sources indexed one after the other) gives one run per evaluation, after the last. The due time is
 * the agent's row of `evaluation_triggers`; a job on `evaluationTriggerQueue` (keyed by the agent) wakes at it.
 * Only a trigger that was not waiting queues a job: a job that wakes to find its trigger pushed back queues the
 * next at the new time, so an agent has one waiting job whatever the number of changes. When due, the job takes
 * the trigger and queues a run (`trigger: knowledge_change`) of each of the agent's evaluations that has
 * `run_on_knowledge_change`, skipping those the plan's month no longer allows (`Evaluations.queueAutomaticRuns`).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Environment } from "../../schema/Auth.js"
import { knowledgeChangeDebounceMillis } from "../../schema/Evaluations.js"
import { AgentId, WorkspaceId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { type Job, JobQueue, Outcome } from "../../layers/JobQueue.js"
import { AppConfig } from "../Config.js"
import { KnowledgeChanged } from "../events/KnowledgeChanged.js"
import { now } from "../Time.js"
import { Evaluations } from "./Evaluations.js"
import { TriggersRepo } from "./TriggersRepo.js"

export const evaluationTriggerQueue = "evaluation-trigger"

/** What a trigger's job carries: whose agent it is. */
export const TriggerPayload = Schema.Struct({ workspace_id: WorkspaceId, environment: Environment, agent_id: AgentId })

const decodePayload = Schema.decodeUnknownOption(TriggerPayload)

const triggerJob = (tenant: Tenant, agentId: AgentId, due: Date) => ({
  queue: evaluationTriggerQueue,
  key: agentId,
  group: tenant.workspaceId,
  payload: Schema.encodeSync(TriggerPayload)({
    workspace_id: tenant.workspaceId,
    environment: tenant.environment,
    agent_id: agentId
  }),
  runAt: due
})

/** The port's adapter: the agent's automatic runs due a minute from now, inside the caller's transaction. */
export const KnowledgeChangedLive = Layer.effect(
  KnowledgeChanged,
  Effect.gen(function* () {
    const repo = yield* TriggersRepo
    const queue = yield* JobQueue
    const debounceMillis = (yield* AppConfig).evaluationDebounceMillis ?? knowledgeChangeDebounceMillis
    return KnowledgeChanged.of({
      changed: (tenant, agentId) =>
        Effect.gen(function* () {
          const due = new Date((yield* now).getTime() + debounceMillis)
          const fresh = yield* repo.upsert(tenant, agentId, due)
          if (Option.getOrElse(fresh, () => false)) yield* queue.enqueue(triggerJob(tenant, agentId, due))
        }).pipe(Effect.withSpan("Evaluations.knowledgeChanged"))
    })
  })
).pipe(Layer.provide(TriggersRepo.Default))

export class Triggers extends Effect.Service<Triggers>()("Evaluations/Triggers", {
  effect: Effect.gen(function* () {
    const repo = yield* TriggersRepo
    const evaluations = yield* Evaluations
    const queue = yield* JobQueue

    /** The trigger's job: its runs queued when due; pushed back, the next job queued at its new time. */
    const handle = (job: Job): Effect.Effect<Outcome> =>
      Effect.gen(function* () {
        const payload = decodePayload(job.payload)
        if (Option.isNone(payload)) return Outcome.failed("unreadable payload")
        const { agent_id: agentId, environment, workspace_id } = payload.value
        const tenant: Tenant = { workspaceId: workspace_id, environment }
        const at = yield* now
        yield* repo.transaction(
          Effect.gen(function* () {
            const taken = yield* repo.takeDue(agentId, at)
            if (Option.isSome(taken)) return yield* evaluations.queueAutomaticRuns(tenant, agentId)
            const waiting = yield* repo.find(agentId)
            if (Option.isSome(waiting)) yield* queue.enqueue(triggerJob(tenant, agentId, waiting.value.due_at))
            return 0
          })
        )
        return Outcome.done
      }).pipe(Effect.withSpan("Evaluations.trigger"))

    return { handle } as const
  }),
  dependencies: [TriggersRepo.Default]
}) {}
