/**
 * Q&A regeneration: a request queues a job (queue `qa-regenerate`, key = the
 * agent, so one agent's regenerations run one at a time, in order); the job
 * draws Q&A again from every indexed source's text and, in one transaction,
 * replaces the generated Q&A of those sources and writes `qa.regenerated`.
 * Manual and CSV Q&A are never touched. Ingestion runs on its own queue, so a
 * source may be indexed while this runs: generated Q&A written before the job
 * read the texts (a mark in the Q&A sequence) are replaced, as are those of
 * every source it read; later ones, of a source it did not read, stay.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Environment } from "../../schema/Auth.js"
import { AgentId, WorkspaceId } from "../../schema/Ids.js"
import type { QaRegeneration } from "../../schema/Qa.js"
import { Ai, type AiError } from "../../layers/Ai.js"
import { type Job, JobQueue, Outcome } from "../../layers/JobQueue.js"
import { Agents } from "../agents/Agents.js"
import { vectorsFor } from "../AiFailure.js"
import type { Tenant } from "../../schema/Tenant.js"
import { KnowledgeChanged } from "../events/KnowledgeChanged.js"
import { draftLanguage } from "../languages/DocumentLanguage.js"
import { agentLanguageOf } from "../languages/AgentLanguages.js"
import { Outbox } from "../events/Outbox.js"
import { now } from "../Time.js"
import { type QaInsert, qaEmbeddingText, QaRepo } from "./QaRepo.js"
import { SourceTexts } from "./SourceTexts.js"

export const regenerateQueue = "qa-regenerate"

const Payload = Schema.Struct({ workspace_id: WorkspaceId, environment: Environment, agent_id: AgentId })

/** Attempts of one job when the provider keeps failing transiently, and the wait before each retry. */
export const maxAttempts = 4
export const retryDelayMillis = (attempts: number) => 10_000 * 4 ** attempts

// embeddings are asked for in slices, so one request to a remote provider stays small
const embedBatch = 64

export class Regeneration extends Effect.Service<Regeneration>()("Qa/Regeneration", {
  effect: Effect.gen(function* () {
    const repo = yield* QaRepo
    const agents = yield* Agents
    const ai = yield* Ai
    const texts = yield* SourceTexts
    const queue = yield* JobQueue
    const outbox = yield* Outbox
    const knowledgeChanged = yield* KnowledgeChanged

    const request = Effect.fn("Qa.regenerate")(function* (tenant: Tenant, agentId: AgentId) {
      yield* agents.retrieve(tenant, agentId)
      // the job is the whole change, one insert: no transaction to wait for, so workers wake at once
      yield* queue.enqueue({
        queue: regenerateQueue,
        key: agentId,
        payload: Schema.encodeSync(Payload)({
          workspace_id: tenant.workspaceId,
          environment: tenant.environment,
          agent_id: agentId
        })
      })
      return { object: "qa_regeneration", agent_id: agentId, status: "queued" } satisfies QaRegeneration
    })

    /** Rebuilds the agent's generated Q&A; how many it wrote, or none when the agent is gone. */
    const rebuild = (tenant: Tenant, agentId: AgentId): Effect.Effect<Option.Option<number>, AiError> =>
      Effect.gen(function* () {
        const mark = yield* repo.qaMark(tenant, agentId)
        const docs = yield* texts.indexedTexts(tenant, agentId)
        let categories = yield* repo.categoriesOf(tenant, agentId)
        const agentLanguage = yield* agents.retrieve(tenant, agentId).pipe(
          Effect.map(agentLanguageOf),
          Effect.catchTag("ResourceMissing", () => Effect.succeed("auto" as const))
        )
        const input = (doc: { readonly title: string; readonly text: string }) => ({
          title: doc.title,
          text: doc.text,
          language: draftLanguage(doc, agentLanguage)
        })
        const first = docs[0]
        // as in ingestion: with no categories yet, the first source sets them
        if (categories.length === 0 && first !== undefined) {
          const drafts = yield* ai.categorize(input(first))
          categories = yield* repo.createCategories(tenant, agentId, drafts)
        }
        const structure = categories.map((c) => ({ name: c.name, description: c.description }))
        const byName = new Map(categories.map((c) => [c.name.toLowerCase(), c.id]))
        const drafts = yield* Effect.forEach(docs, (doc) =>
          Effect.map(ai.generateQa(input(doc), structure), (qa) =>
            qa.map((d) => ({ ...d, sourceId: doc.sourceId }))
          )
        ).pipe(Effect.map((perDoc) => perDoc.flat()))
        const vectors: Array<ReadonlyArray<number>> = []
        for (let i = 0; i < drafts.length; i += embedBatch) {
          const slice = drafts.slice(i, i + embedBatch)
          vectors.push(...(yield* ai.embed(slice.map((d) => qaEmbeddingText(d.question, d.answer)))))
        }
        yield* vectorsFor(drafts.length, vectors)
        const items: ReadonlyArray<QaInsert> = drafts.map((d, i) => ({
          question: d.question,
          answer: d.answer,
          categoryId: d.category === null ? null : (byName.get(d.category.toLowerCase()) ?? null),
          origin: "generated",
          sourceId: d.sourceId,
          embedding: vectors[i]!
        }))
        return yield* repo.transaction(
          Effect.gen(function* () {
            // the agent may have been deleted while the provider worked
            const agent = yield* Effect.option(agents.retrieve(tenant, agentId))
            if (Option.isNone(agent)) return Option.none()
            yield* repo.deleteGenerated(tenant, agentId, { upTo: mark, sourceIds: docs.map((d) => d.sourceId) })
            const count = yield* repo.insertQa(tenant, agentId, items)
            yield* knowledgeChanged.changed(tenant, agentId)
            yield* outbox.emit({ ...tenant, type: "qa.regenerated", data: { agent_id: agentId, qa_count: count } })
            return Option.some(count)
          })
        )
      })

    /** The job handler: a transient provider failure is retried later, a lasting one gives up. */
    const handle = (job: Job): Effect.Effect<Outcome> =>
      Effect.gen(function* () {
        const payload = Schema.decodeUnknownOption(Payload)(job.payload)
        if (Option.isNone(payload)) return Outcome.failed("unreadable payload")
        const { workspace_id, environment, agent_id } = payload.value
        const tenant: Tenant = { workspaceId: workspace_id, environment }
        const exists = yield* Effect.option(agents.retrieve(tenant, agent_id))
        if (Option.isNone(exists)) return Outcome.done
        return yield* rebuild(tenant, agent_id).pipe(
          Effect.as(Outcome.done),
          Effect.catchTag("AiError", (error) =>
            Effect.gen(function* () {
              yield* Effect.logWarning(`Q&A regeneration of ${agent_id} failed: ${error.message}`)
              if (!error.transient || job.attempts + 1 >= maxAttempts) return Outcome.failed(error.message)
              const at = yield* now
              return Outcome.retryAt(new Date(at.getTime() + retryDelayMillis(job.attempts)), error.message)
            })
          )
        )
      }).pipe(Effect.withSpan("Qa.regenerate.job"))

    return { request, handle } as const
  }),
  dependencies: [QaRepo.Default, Agents.Default]
}) {}
