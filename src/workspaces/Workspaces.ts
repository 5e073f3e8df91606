/** Workspaces: the tenant. Created by the admin CLI, or as `default` on first start. Rows are decoded, not cast. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Workspace } from "../../schema/Admin.js"
import { Plan } from "../../schema/Auth.js"
import { WorkspaceId } from "../../schema/Ids.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { DbDate } from "../db/Columns.js"
import { decodeAll, decodeOne, decodeSingle } from "../db/Sql.js"
import { iso, now } from "../Time.js"

const WorkspaceRow = Schema.Struct({
  id: WorkspaceId,
  name: Schema.String,
  owner_email: Schema.String,
  plan: Plan,
  created_at: DbDate
})
type WorkspaceRow = typeof WorkspaceRow.Type

const toWorkspace = (row: WorkspaceRow): Workspace => ({
  id: row.id,
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
      const id = WorkspaceId.make(yield* ids.make("ws"))
      const created_at = yield* now
      const row = yield* decodeSingle(WorkspaceRow, sql`
        insert into workspaces ${sql.insert({ id, ...input, created_at })}
        returning id, name, owner_email, plan, created_at`)
      return toWorkspace(row)
    })

    const find = (id: WorkspaceId): Effect.Effect<Option.Option<Workspace>> =>
      decodeOne(WorkspaceRow, sql`select id, name, owner_email, plan, created_at from workspaces where id = ${id}`).pipe(
        Effect.map(Option.map(toWorkspace))
      )

    const list = (): Effect.Effect<ReadonlyArray<Workspace>> =>
      decodeAll(WorkspaceRow, sql`select id, name, owner_email, plan, created_at from workspaces order by created_at, id`).pipe(
        Effect.map((rows) => rows.map(toWorkspace))
      )

    /** True for the one caller that marks this database as bootstrapped; false once it is. */
    const claimBootstrap = (at: Date): Effect.Effect<boolean> =>
      decodeAll(Schema.Struct({ key: Schema.String }), sql`
        insert into service_state (key, value) values ('bootstrap', ${iso(at)})
        on conflict (key) do nothing returning key`).pipe(Effect.map((rows) => rows.length > 0))

    return { create, find, list, claimBootstrap } as const
  })
}) {}
