/** Whose data a call touches: every repository query is scoped to one workspace and environment. */
import type { Environment } from "./Auth.js"
import type { WorkspaceId } from "./Ids.js"

export interface Tenant {
  readonly workspaceId: WorkspaceId
  readonly environment: Environment
}

/** A caller's tenant (an authenticated key's workspace and environment), its other fields left out. */
export const tenantOf = (caller: Tenant): Tenant => ({ workspaceId: caller.workspaceId, environment: caller.environment })

/** The tenant a stored row belongs to: its `workspace_id` and `environment` columns. */
export const tenantOfRow = (row: { readonly workspace_id: WorkspaceId; readonly environment: Environment }): Tenant => ({
  workspaceId: row.workspace_id,
  environment: row.environment
})
