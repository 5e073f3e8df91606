/** The first check of every knowledge call on an agent: the agent exists in the caller's workspace and environment. */
import * as Effect from "effect/Effect"
import { ResourceMissing } from "../../schema/Errors.js"
import type { AgentId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import type { Agents } from "../agents/Agents.js"

/** Another workspace's or environment's agent is as missing as one never made. */
export const agentExists = (agents: Agents, tenant: Tenant, agentId: AgentId) =>
  Effect.flatMap(agents.exists(tenant, agentId), (exists) =>
    exists
      ? Effect.void
      : Effect.fail(new ResourceMissing({ message: `No such agent: '${agentId}'`, param: "agent_id" }))
  )
