/**
 * Q&A programs. Each write stores the item's embedding (`Ai.embed` of its
 * question and answer), never returned; a category named by a write is held
 * (`for share`) until the write commits, so it cannot vanish under it. A write
 * of an item's text changes what the agent knows: `KnowledgeChanged`, in its
 * transaction.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ResourceMissing, ServiceUnavailable } from "../../schema/Errors.js"
import type { AgentId, CategoryId, QaId } from "../../schema/Ids.js"
import type { CreateQa, QaListParams, UpdateQa } from "../../schema/Qa.js"
import { Ai } from "../../layers/Ai.js"
import { providerFailure, vectorsFor } from "../AiFailure.js"
import { Agents } from "../agents/Agents.js"
import type { Tenant } from "../../schema/Tenant.js"
import { KnowledgeChanged } from "../events/KnowledgeChanged.js"
import { Paginator, toPage } from "../http/Pagination.js"
import { now } from "../Time.js"
import { AgentLanguages, questionLanguage } from "../languages/AgentLanguages.js"
import { type QaChanges, qaEmbeddingText, QaRepo, toQa } from "./QaRepo.js"

const missing = (id: QaId) => new ResourceMissing({ message: `No such Q&A: '${id}'`, param: "qa_id" })
const missingCategory = (id: CategoryId) =>
  new ResourceMissing({ message: `No such category: '${id}'`, param: "category_id" })

const outage = providerFailure((message) => new ServiceUnavailable({ message }))

export class QaItems extends Effect.Service<QaItems>()("Qa/Items", {
  effect: Effect.gen(function* () {
    const repo = yield* QaRepo
    const agents = yield* Agents
    const ai = yield* Ai
    const pages = yield* Paginator
    const knowledgeChanged = yield* KnowledgeChanged
    const languages = yield* AgentLanguages

    /** The language a Q&A item of the agent is written in: detected among its knowledge's and its own. */
    const languageOf = (agentId: AgentId, question: string, answer: string) =>
      Effect.map(
        Effect.all([languages.settingOf(agentId), languages.knowledgeOf(agentId)]),
        ([setting, knowledge]) => questionLanguage(`${question}\n${answer}`, setting, knowledge)
      )

    const embed = (question: string, answer: string) =>
      ai.embed([qaEmbeddingText(question, answer)]).pipe(
        Effect.flatMap((vectors) => vectorsFor(1, vectors)),
        Effect.map((vectors) => vectors[0]!),
        Effect.catchTag("AiError", outage)
      )

    const holdCategory = (tenant: Tenant, agentId: AgentId, id: CategoryId | null | undefined) =>
      id === null || id === undefined
        ? Effect.void
        : Effect.flatMap(repo.findCategory(tenant, agentId, id, { lock: "share" }), (found) =>
            Option.isSome(found) ? Effect.void : Effect.fail(missingCategory(id))
          )

    const create = Effect.fn("Qa.create")(function* (tenant: Tenant, agentId: AgentId, input: CreateQa) {
      yield* agents.retrieve(tenant, agentId)
      const embedding = yield* embed(input.question, input.answer)
      const categoryId = input.category_id ?? null
      const language = yield* languageOf(agentId, input.question, input.answer)
      const [row] = yield* repo.transaction(
        Effect.zipRight(
          holdCategory(tenant, agentId, categoryId),
          repo.insertQaRows(tenant, agentId, [
            { question: input.question, answer: input.answer, categoryId, origin: "manual", sourceId: null, embedding, language }
          ])
        ).pipe(Effect.tap(() => knowledgeChanged.changed(tenant, agentId)))
      )
      return row === undefined ? yield* Effect.dieMessage("insert returned no row") : toQa(row)
    })

    const list = Effect.fn("Qa.list")(function* (tenant: Tenant, agentId: AgentId, params: QaListParams) {
      yield* agents.retrieve(tenant, agentId)
      const page = yield* pages.parse(`agents/${agentId}/qa`, params, {
        category_id: params.category_id,
        origin: params.origin
      })
      const rows = yield* repo.qaPage(
        tenant,
        agentId,
        { category: Option.fromNullable(params.category_id), origin: Option.fromNullable(params.origin) },
        page
      )
      const { rows: kept, pagination } = toPage(rows, page)
      return { items: kept.map(toQa), pagination }
    })

    const update = Effect.fn("Qa.update")(function* (tenant: Tenant, agentId: AgentId, id: QaId, input: UpdateQa) {
      yield* agents.retrieve(tenant, agentId)
      return yield* repo.transaction(
        Effect.gen(function* () {
          const found = yield* repo.findQa(tenant, agentId, id, { forUpdate: true })
          if (Option.isNone(found)) return yield* missing(id)
          const before = found.value
          yield* holdCategory(tenant, agentId, input.category_id)
          const question = input.question ?? before.question
          const answer = input.answer ?? before.answer
          const textChanged = question !== before.question || answer !== before.answer
          const categoryChanged = input.category_id !== undefined && input.category_id !== before.category_id
          if (!textChanged && !categoryChanged) return toQa(before)
          const changes: QaChanges = {
            ...(textChanged
              ? {
                  question,
                  answer,
                  // an edited generated answer is now the integrator's: regeneration must keep it
                  ...(before.origin === "generated" ? { origin: "manual" as const } : {}),
                  // the row stays locked while the provider answers: one row, bounded by its timeout
                  embedding: yield* embed(question, answer),
                  ...(before.source_id === null ? { language: yield* languageOf(agentId, question, answer) } : {})
                }
              : {}),
            ...(categoryChanged ? { category_id: input.category_id ?? null } : {})
          }
          const updated = yield* repo.updateQa(id, changes, yield* now)
          if (textChanged) yield* knowledgeChanged.changed(tenant, agentId)
          return toQa(updated)
        })
      )
    })

    const remove = Effect.fn("Qa.delete")(function* (tenant: Tenant, agentId: AgentId, id: QaId) {
      yield* agents.retrieve(tenant, agentId)
      const deleted = yield* repo.transaction(
        Effect.tap(repo.deleteQa(tenant, agentId, id), (gone) =>
          Option.isSome(gone) ? knowledgeChanged.changed(tenant, agentId) : Effect.void
        )
      )
      if (Option.isNone(deleted)) return yield* missing(id)
      return { id, object: "qa" as const, deleted: true as const }
    })

    return { create, list, update, remove } as const
  }),
  dependencies: [QaRepo.Default, Agents.Default, AgentLanguages.Default]
}) {}
