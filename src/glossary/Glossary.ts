/**
 * Glossary programs. Writes to one agent's glossary queue on a per-agent lock,
 * so a replacement is all or nothing even against concurrent writers.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import {
  type CreateTerm,
  type Glossary as GlossaryResource,
  maxTerms,
  type ReplaceGlossary,
  type UpdateTerm
} from "../../schema/Glossary.js"
import { ParameterInvalid, ResourceMissing, TermExists } from "../../schema/Errors.js"
import type { AgentId } from "../../schema/Ids.js"
import { Agents } from "../agents/Agents.js"
import type { Tenant } from "../../schema/Tenant.js"
import { now } from "../Time.js"
import { GlossaryRepo, type TermValues, toTerm } from "./GlossaryRepo.js"

const values = (input: CreateTerm): TermValues => ({
  term: input.term,
  definition: input.definition ?? null,
  synonyms: input.synonyms ?? [],
  case_sensitive: input.case_sensitive ?? false,
  enabled: input.enabled ?? true
})

const noSuchTerm = (term: string) =>
  new ResourceMissing({ message: `The glossary has no term '${term}'`, param: "term" })

/** The index of the first term that repeats an earlier one, ignoring case. */
const firstDuplicate = (terms: ReadonlyArray<CreateTerm>): Option.Option<number> => {
  const seen = new Set<string>()
  for (const [i, t] of terms.entries()) {
    const key = t.term.toLowerCase()
    if (seen.has(key)) return Option.some(i)
    seen.add(key)
  }
  return Option.none()
}

export class Glossary extends Effect.Service<Glossary>()("Glossary/Programs", {
  effect: Effect.gen(function* () {
    const repo = yield* GlossaryRepo
    const agents = yield* Agents

    const retrieve = Effect.fn("Glossary.retrieve")(function* (tenant: Tenant, agentId: AgentId) {
      yield* agents.retrieve(tenant, agentId)
      const rows = yield* repo.list(tenant, agentId)
      return { object: "glossary", agent_id: agentId, terms: rows.map(toTerm) } satisfies GlossaryResource
    })

    const replace = Effect.fn("Glossary.replace")(function* (tenant: Tenant, agentId: AgentId, input: ReplaceGlossary) {
      yield* agents.retrieve(tenant, agentId)
      const duplicate = firstDuplicate(input.terms)
      if (Option.isSome(duplicate)) {
        const i = duplicate.value
        return yield* new ParameterInvalid({
          message: `'${input.terms[i]!.term}' appears twice (terms are compared ignoring case)`,
          param: `terms[${i}].term`
        })
      }
      const rows = yield* repo.transaction(
        Effect.gen(function* () {
          yield* repo.lock(agentId)
          const inserted = yield* repo.replaceAll(tenant, agentId, input.terms.map(values), yield* now)
          // the database's case folding caught a pair that JavaScript's did not: nothing is kept
          if (inserted < input.terms.length) {
            return yield* new ParameterInvalid({
              message: "Two terms differ only in case (terms are compared ignoring case)",
              param: "terms"
            })
          }
          return yield* repo.list(tenant, agentId)
        })
      )
      return { object: "glossary", agent_id: agentId, terms: rows.map(toTerm) } satisfies GlossaryResource
    })

    const addTerm = Effect.fn("Glossary.addTerm")(function* (tenant: Tenant, agentId: AgentId, input: CreateTerm) {
      yield* agents.retrieve(tenant, agentId)
      return yield* repo.transaction(
        Effect.gen(function* () {
          yield* repo.lock(agentId)
          if ((yield* repo.size(tenant, agentId)) >= maxTerms) {
            return yield* new ParameterInvalid({
              message: `A glossary holds at most ${maxTerms} terms`,
              param: "term"
            })
          }
          const row = yield* repo.insert(tenant, agentId, values(input), yield* now)
          if (Option.isSome(row)) return toTerm(row.value)
          const existing = yield* repo.find(tenant, agentId, input.term)
          const spelled = Option.match(existing, { onNone: () => input.term, onSome: (r) => r.term })
          return yield* new TermExists({ message: `The glossary already holds '${spelled}'`, param: "term" })
        })
      )
    })

    const updateTerm = Effect.fn("Glossary.updateTerm")(function* (
      tenant: Tenant,
      agentId: AgentId,
      term: string,
      input: UpdateTerm
    ) {
      yield* agents.retrieve(tenant, agentId)
      const row = yield* repo.update(tenant, agentId, term.trim(), input, yield* now)
      return Option.isSome(row) ? toTerm(row.value) : yield* noSuchTerm(term)
    })

    const deleteTerm = Effect.fn("Glossary.deleteTerm")(function* (tenant: Tenant, agentId: AgentId, term: string) {
      yield* agents.retrieve(tenant, agentId)
      const removed = yield* repo.remove(tenant, agentId, term.trim())
      if (Option.isNone(removed)) return yield* noSuchTerm(term)
      return { object: "glossary_term" as const, term: removed.value, deleted: true as const }
    })

    /** For query expansion: the enabled terms with their synonyms. */
    const enabledTerms = (tenant: Tenant, agentId: AgentId) => repo.enabledTerms(tenant, agentId)

    return { retrieve, replace, addTerm, updateTerm, deleteTerm, enabledTerms } as const
  }),
  dependencies: [GlossaryRepo.Default, Agents.Default]
}) {}
