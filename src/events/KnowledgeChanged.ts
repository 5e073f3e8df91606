/**
 * An agent's knowledge changed (a source indexed, refreshed with a changed text or deleted; Q&A written, edited,
 * deleted or regenerated), told inside the transaction that changes it, so what follows exists exactly when the
 * change committed. The knowledge and Q&A areas only name the port; the evaluations area serves it (its
 * automatic runs, `evaluations/Triggers.ts`), so neither imports evaluations.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { AgentId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"

export interface KnowledgeChangedShape {
  readonly changed: (tenant: Tenant, agentId: AgentId) => Effect.Effect<void>
}

export class KnowledgeChanged extends Context.Tag("Events/KnowledgeChanged")<KnowledgeChanged, KnowledgeChangedShape>() {}
