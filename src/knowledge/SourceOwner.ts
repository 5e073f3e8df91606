/**
 * The port through which the pipeline reports the end of a source another area
 * owns (a training lesson's source): that area emits its own event in the same
 * transaction. The knowledge area names it; the training area serves it (its `Area.ts`).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { SourceErrorCode } from "../../schema/Knowledge.js"
import type { SourceRow } from "./KnowledgeRepo.js"

export type { SourceRow } from "./KnowledgeRepo.js"

export interface SourceOwnerShape {
  /** Inside the transaction that marked `row` indexed. */
  readonly indexed: (row: SourceRow) => Effect.Effect<void>
  /** Inside the transaction that marked `row` failed. */
  readonly failed: (row: SourceRow, error: { readonly code: SourceErrorCode; readonly message: string }) => Effect.Effect<void>
}

export class SourceOwner extends Context.Tag("Knowledge/SourceOwner")<SourceOwner, SourceOwnerShape>() {}
