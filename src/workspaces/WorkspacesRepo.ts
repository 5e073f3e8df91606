/** SQL for workspaces, the tenants, and the database's bootstrap mark. Rows are decoded, not cast. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Workspace } from "../../schema/Admin.js"
import { Plan } from "../../schema/Auth.js"
import { WorkspaceId } from "../../schema/Ids.js"
import { DbDate } from "../db/Columns.js"
import { decodeAll, decodeOne, decodeSingle } from "../db/Sql.js"
import { iso } from "../Time.js"

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

const columns = "id, name, owner_email, plan, created_at"

export class WorkspacesRepo extends Effect.Service<WorkspacesRepo>()("Workspaces/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    const insert = (row: Omit<WorkspaceRow, "created_at"> & { readonly created_at: Date }): Effect.Effect<Workspace> =>
      Effect.map(decodeSingle(WorkspaceRow, sql`insert into workspaces ${sql.insert(row)} returning ${cols}`), toWorkspace)

    const find = (id: WorkspaceId): Effect.Effect<Option.Option<Workspace>> =>
      Effect.map(decodeOne(WorkspaceRow, sql`select ${cols} from workspaces where id = ${id}`), Option.map(toWorkspace))

    const list = (): Effect.Effect<ReadonlyArray<Workspace>> =>
      Effect.map(decodeAll(WorkspaceRow, sql`select ${cols} from workspaces order by created_at, id`), (rows) =>
        rows.map(toWorkspace)
      )

    /** True for the one caller that marks this database as bootstrapped; false once it is. */
    const claimBootstrap = (at: Date): Effect.Effect<boolean> =>
      decodeAll(Schema.Struct({ key: Schema.String }), sql`
        insert into service_state (key, value) values ('bootstrap', ${iso(at)})
        on conflict (key) do nothing returning key`).pipe(Effect.map((rows) => rows.length > 0))

    return { insert, find, list, claimBootstrap } as const
  })
}) {}
