/**
 * Removing lesson sources: the lesson source row, and the knowledge source it
 * owns with its chunks and Q&A (a job still queued for it just ends). Runs
 * inside the caller's transaction; shared by the three delete operations.
 */
import * as Effect from "effect/Effect"
import type { Tenant } from "../../schema/Tenant.js"
import { Knowledge } from "../knowledge/Knowledge.js"
import { type LessonSourceRow, TrainingRepo } from "./TrainingRepo.js"

export class SourceRemoval extends Effect.Service<SourceRemoval>()("Training/SourceRemoval", {
  effect: Effect.gen(function* () {
    const repo = yield* TrainingRepo
    const knowledge = yield* Knowledge

    const drop = (tenant: Tenant, rows: ReadonlyArray<LessonSourceRow>, at: Date) =>
      Effect.forEach(
        rows,
        (row) =>
          Effect.zipRight(repo.deleteSource(row.id), knowledge.drop(tenant, row.knowledge_source_id, at)),
        { discard: true }
      )

    return { drop } as const
  }),
  dependencies: [TrainingRepo.Default, Knowledge.Default]
}) {}
