/** Whose data a call touches: every repository query is scoped to one workspace and environment. */
import type { Environment } from "./Auth.js"
import type { WorkspaceId } from "./Ids.js"

export interface Tenant {
  readonly workspaceId: WorkspaceId
  readonly environment: Environment
}
