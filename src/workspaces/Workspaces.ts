/** Workspaces: the tenant. Created by the admin CLI, or as `default` on first start. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Plan } from "../../schema/Auth.js"
import type { Workspace } from "../../schema/Admin.js"
import type { WorkspaceId } from "../../schema/Ids.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { iso, now } from "../Time.js"

interface WorkspaceRow {
  readonly id: string
  readonly name: string
  readonly owner_email: string
  readonly plan: Plan
  readonly created_at: Date
}

const toWorkspace = (row: WorkspaceRow): Workspace => ({
  id: row.id as WorkspaceId,
  name: row.name,
  owner_email: row.owner_email,
  plan: row.plan,
  created_at: iso(row.created_at)
})

export class Workspaces extends Effect.Service<Workspaces>()("Workspaces/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* IdGenerator

    const create = Effect.fn("Workspaces.create")(function* (input: {
      readonly name: string
      readonly owner_email: string
      readonly plan: Plan
    }) {
      const id = yield* ids.make("ws")
      const created_at = yield* now
      const rows = yield* sql<WorkspaceRow>`
        insert into workspaces ${sql.insert({ id, ...input, created_at })}
        returning *`
      return toWorkspace(rows[0]!)
    }, Effect.orDie)

    const find = Effect.fn("Workspaces.find")(function* (id: WorkspaceId) {
      const rows = yield* sql<WorkspaceRow>`select * from workspaces where id = ${id}`
      return Option.map(Option.fromNullable(rows[0]), toWorkspace)
    }, Effect.orDie)

    const list = Effect.fn("Workspaces.list")(function* () {
      const rows = yield* sql<WorkspaceRow>`select * from workspaces order by created_at, id`
      return rows.map(toWorkspace)
    }, Effect.orDie)

    return { create, find, list } as const
  })
}) {}
