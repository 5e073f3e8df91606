/**
 * SQL of `evaluation_triggers` (migration 0047): one row per agent whose knowledge changed and whose automatic
 * runs are due at `due_at`, through the `db/Sql.ts` helpers (rows decoded with Schema, database failures defects).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Environment } from "../../schema/Auth.js"
import { AgentId, WorkspaceId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { DbDate } from "../db/Columns.js"
import { decodeOne, transaction } from "../db/Sql.js"

export const TriggerRow = Schema.Struct({
  agent_id: AgentId,
  workspace_id: WorkspaceId,
  environment: Environment,
  due_at: DbDate
})
export type TriggerRow = typeof TriggerRow.Type

const Upserted = Schema.Struct({ fresh: Schema.Boolean })

export class TriggersRepo extends Effect.Service<TriggersRepo>()("Evaluations/TriggersRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * The agent's runs due at `due`, when one of its evaluations runs on knowledge changes (none: nothing
     * written). `fresh`: no trigger was waiting (its job is to be queued); else the waiting one was pushed back
     * to `due`, and its job finds it so.
     */
    const upsert = (tenant: Tenant, agentId: AgentId, due: Date) =>
      decodeOne(
        Upserted,
        sql`insert into evaluation_triggers (agent_id, workspace_id, environment, due_at)
          select ${agentId}, ${tenant.workspaceId}, ${tenant.environment}, ${due}
          where exists (
            select 1 from evaluations
            where agent_id = ${agentId} and workspace_id = ${tenant.workspaceId}
              and environment = ${tenant.environment} and run_on_knowledge_change)
          on conflict (agent_id) do update set due_at = greatest(evaluation_triggers.due_at, excluded.due_at)
          returning (xmax = 0) as fresh`
      ).pipe(Effect.map(Option.map((r) => r.fresh)))

    /** The agent's trigger, taken (deleted) when due by `at`; none when there is none or it is not due yet. */
    const takeDue = (agentId: AgentId, at: Date) =>
      decodeOne(TriggerRow, sql`delete from evaluation_triggers where agent_id = ${agentId} and due_at <= ${at} returning *`)

    /** The agent's trigger, due or not. */
    const find = (agentId: AgentId) =>
      decodeOne(TriggerRow, sql`select * from evaluation_triggers where agent_id = ${agentId}`)

    return { transaction: transaction(sql), upsert, takeDue, find } as const
  })
}) {}
