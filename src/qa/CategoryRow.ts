/**
 * A category as its table holds it, and as the API shows it. Read by the knowledge area's claim as well
 * (`ingest_jobs_claim` hands the pipeline the agent's categories with its job, saving a statement a source).
 */
import * as Schema from "effect/Schema"
import { AgentId, CategoryId } from "../../schema/Ids.js"
import type { Category } from "../../schema/Qa.js"
import { iso } from "../Time.js"

export const CategoryRow = Schema.Struct({
  id: CategoryId,
  agent_id: AgentId,
  name: Schema.String,
  description: Schema.String,
  position: Schema.Int,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type CategoryRow = typeof CategoryRow.Type

export const toCategory = (row: CategoryRow): Category => ({
  id: row.id,
  object: "category",
  agent_id: row.agent_id,
  name: row.name,
  description: row.description,
  position: row.position,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})
