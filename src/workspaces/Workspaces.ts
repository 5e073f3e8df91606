/** Workspaces: the tenant. Created by the admin CLI, or as `default` on first start. */
import * as Effect from "effect/Effect"
import type { Plan } from "../../schema/Auth.js"
import { WorkspaceId } from "../../schema/Ids.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { now } from "../Time.js"
import { WorkspacesRepo } from "./WorkspacesRepo.js"

export class Workspaces extends Effect.Service<Workspaces>()("Workspaces/Workspaces", {
  effect: Effect.gen(function* () {
    const repo = yield* WorkspacesRepo
    const ids = yield* IdGenerator

    const create = Effect.fn("Workspaces.create")(function* (input: {
      readonly name: string
      readonly owner_email: string
      readonly plan: Plan
    }) {
      return yield* repo.insert({ id: WorkspaceId.make(yield* ids.make("ws")), ...input, created_at: yield* now })
    })

    return { create, find: repo.find, list: repo.list, claimBootstrap: repo.claimBootstrap } as const
  }),
  dependencies: [WorkspacesRepo.Default]
}) {}
