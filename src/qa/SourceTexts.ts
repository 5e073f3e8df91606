/**
 * What regeneration reads: the extracted text of each indexed source of an
 * agent. A port owned by the Q&A area so it does not import the knowledge area
 * (which imports this one); the knowledge area serves it from its repository
 * (its `Area.ts`). A memory implementation for tests sits beside it.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Tenant } from "../../schema/Tenant.js"
import type { AgentId, SourceId } from "../../schema/Ids.js"

export interface SourceText {
  readonly sourceId: SourceId
  readonly title: string
  readonly text: string
}

export interface SourceTextsShape {
  /** The agent's indexed sources, oldest first. */
  readonly indexedTexts: (tenant: Tenant, agentId: AgentId) => Effect.Effect<ReadonlyArray<SourceText>>
}

export class SourceTexts extends Context.Tag("Qa/SourceTexts")<SourceTexts, SourceTextsShape>() {}

/** Texts held in memory per agent; `put` replaces an agent's list. */
export const makeMemory = () => {
  const texts = new Map<AgentId, ReadonlyArray<SourceText>>()
  return {
    put: (agentId: AgentId, list: ReadonlyArray<SourceText>) => Effect.sync(() => void texts.set(agentId, list)),
    layer: Layer.succeed(SourceTexts, {
      indexedTexts: (_tenant, agentId) => Effect.sync(() => texts.get(agentId) ?? [])
    })
  } as const
}
