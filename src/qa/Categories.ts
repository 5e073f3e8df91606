/**
 * Category programs. An agent's categories are numbered 0..n-1 by `position`;
 * every write takes the agent's category lock, so positions stay dense and
 * names unique (ignoring case) under concurrency and across instances.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { CategoryExists, ParameterInvalid, ResourceMissing } from "../../schema/Errors.js"
import type { AgentId, CategoryId } from "../../schema/Ids.js"
import { type CreateCategory, maxCategories, type UpdateCategory } from "../../schema/Qa.js"
import { Agents } from "../agents/Agents.js"
import type { Tenant } from "../../schema/Tenant.js"
import { now } from "../Time.js"
import { toCategory } from "./CategoryRow.js"
import { QaRepo } from "./QaRepo.js"

const missing = (id: CategoryId) =>
  new ResourceMissing({ message: `No such category: '${id}'`, param: "category_id" })

const nameTaken = (name: string) =>
  new CategoryExists({ message: `The agent already has a category named '${name}'`, param: "name" })

export class Categories extends Effect.Service<Categories>()("Qa/Categories", {
  effect: Effect.gen(function* () {
    const repo = yield* QaRepo
    const agents = yield* Agents

    const list = Effect.fn("Categories.list")(function* (tenant: Tenant, agentId: AgentId) {
      yield* agents.retrieve(tenant, agentId)
      return yield* repo.categoriesOf(tenant, agentId)
    })

    const create = Effect.fn("Categories.create")(function* (tenant: Tenant, agentId: AgentId, input: CreateCategory) {
      yield* agents.retrieve(tenant, agentId)
      return yield* repo.transaction(
        Effect.gen(function* () {
          yield* repo.lockCategories(agentId)
          const rows = yield* repo.categoryRows(tenant, agentId)
          if (rows.length >= maxCategories) {
            return yield* new ParameterInvalid({
              message: `An agent has at most ${maxCategories} categories`,
              param: "name"
            })
          }
          if (Option.isSome(yield* repo.categoryNamed(tenant, agentId, input.name))) return yield* nameTaken(input.name)
          const position = Math.min(input.position ?? rows.length, rows.length)
          yield* repo.shiftFrom(tenant, agentId, position)
          const row = yield* repo.insertCategory(tenant, agentId, {
            name: input.name,
            description: input.description ?? "",
            position
          })
          return toCategory(row)
        })
      )
    })

    const update = Effect.fn("Categories.update")(function* (
      tenant: Tenant,
      agentId: AgentId,
      id: CategoryId,
      input: UpdateCategory
    ) {
      yield* agents.retrieve(tenant, agentId)
      return yield* repo.transaction(
        Effect.gen(function* () {
          yield* repo.lockCategories(agentId)
          const rows = yield* repo.categoryRows(tenant, agentId)
          const current = rows.find((r) => r.id === id)
          if (current === undefined) return yield* missing(id)
          if (
            input.name !== undefined &&
            Option.isSome(yield* repo.categoryNamed(tenant, agentId, input.name, id))
          ) {
            return yield* nameTaken(input.name)
          }
          const at = yield* now
          if (input.position !== undefined) {
            const others = rows.filter((r) => r.id !== id)
            const target = Math.min(input.position, others.length)
            yield* repo.renumber([...others.slice(0, target), current, ...others.slice(target)], at)
          }
          const row = yield* repo.updateCategory(
            id,
            {
              ...(input.name !== undefined ? { name: input.name } : {}),
              ...(input.description !== undefined ? { description: input.description } : {})
            },
            at
          )
          return toCategory(row)
        })
      )
    })

    const remove = Effect.fn("Categories.delete")(function* (tenant: Tenant, agentId: AgentId, id: CategoryId) {
      yield* agents.retrieve(tenant, agentId)
      return yield* repo.transaction(
        Effect.gen(function* () {
          yield* repo.lockCategories(agentId)
          const rows = yield* repo.categoryRows(tenant, agentId)
          if (!rows.some((r) => r.id === id)) return yield* missing(id)
          const at = yield* now
          yield* repo.deleteCategory(tenant, agentId, id, at)
          yield* repo.renumber(
            rows.filter((r) => r.id !== id),
            at
          )
          return { id, object: "category" as const, deleted: true as const }
        })
      )
    })

    return { list, create, update, remove } as const
  }),
  dependencies: [QaRepo.Default, Agents.Default]
}) {}
