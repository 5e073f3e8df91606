/**
 * Test retrieval: what an agent's replies would draw on for a question. The
 * same `Retrieval.search` a reply runs (glossary synonyms included), its hits
 * marked against the replies' relevance threshold and named by their source's
 * title. A read: no credit, no message, no event.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { CallerShape } from "../../schema/Auth.js"
import { type AgentId, SourceId } from "../../schema/Ids.js"
import { DEFAULT_SEARCH_LIMIT, type KnowledgeSearch as SearchResult, type SearchKnowledge } from "../../schema/Knowledge.js"
import { Agents } from "../agents/Agents.js"
import { agentExists } from "./Guard.js"
import { KnowledgeRepo } from "./KnowledgeRepo.js"
import { relevanceThreshold, Retrieval } from "./Retrieval.js"
import { tenantOf } from "../../schema/Tenant.js"

const isSourceId = Schema.is(SourceId)

export class KnowledgeSearch extends Effect.Service<KnowledgeSearch>()("Knowledge/Search", {
  effect: Effect.gen(function* () {
    const agents = yield* Agents
    const repo = yield* KnowledgeRepo
    const retrieval = yield* Retrieval

    const search = Effect.fn("Knowledge.search")(function* (caller: CallerShape, agentId: AgentId, input: SearchKnowledge) {
      const tenant = tenantOf(caller)
      yield* agentExists(agents, tenant, agentId)
      const hits = yield* retrieval.search(tenant, agentId, input.query, { limit: input.limit ?? DEFAULT_SEARCH_LIMIT })
      // several hits share a source: one read names them all
      const titles = yield* repo.titles(tenant, agentId, [...new Set(hits.map((hit) => hit.sourceId).filter(isSourceId))])
      const result: SearchResult = {
        object: "knowledge_search",
        agent_id: agentId,
        query: input.query,
        threshold: relevanceThreshold,
        hits: hits.map((hit) => ({
          kind: hit.kind,
          id: hit.id,
          source_id: hit.sourceId,
          source_title: isSourceId(hit.sourceId) ? (titles.get(hit.sourceId) ?? null) : null,
          score: hit.score,
          relevant: hit.relevant,
          text: hit.text,
          question: hit.question
        }))
      }
      return result
    })

    return { search } as const
  }),
  dependencies: [KnowledgeRepo.Default, Retrieval.Default, Agents.Default]
}) {}
