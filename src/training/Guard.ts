/** The first check of every training call: the agent exists in this tenant and is of type `training`. */
import * as Effect from "effect/Effect"
import { AgentTypeMismatch } from "../../schema/Errors.js"
import type { AgentId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { Agents } from "../agents/Agents.js"


export const trainingAgent = (agents: Agents, tenant: Tenant, agentId: AgentId) =>
  Effect.flatMap(agents.retrieve(tenant, agentId), (agent) =>
    agent.type === "training"
      ? Effect.void
      : Effect.fail(
          new AgentTypeMismatch({
            message: `Agent '${agentId}' is of type '${agent.type}'; modules, lessons and lesson sources need a 'training' agent`,
            param: "id"
          })
        )
  )
