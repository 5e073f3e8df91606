/**
 * The training side of the pipeline's `SourceOwner` port: when the knowledge
 * row a lesson source owns ends, `course.lesson.source.indexed` or
 * `course.lesson.source.failed` is emitted (in the pipeline's transaction)
 * with the lesson and the lesson source. A lesson source deleted meanwhile
 * reports nothing.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Outbox } from "../events/Outbox.js"
import type { SourceRow } from "../knowledge/SourceOwner.js"
import { SourceOwner } from "../knowledge/SourceOwner.js"
import { toLesson, toLessonSource, TrainingRepo } from "./TrainingRepo.js"

export const LessonSourceOwner = Layer.effect(
  SourceOwner,
  Effect.gen(function* () {
    const repo = yield* TrainingRepo
    const outbox = yield* Outbox
    const report = (row: SourceRow, end: (found: { lesson: unknown; source: unknown }) => Effect.Effect<void>) =>
      Effect.flatMap(repo.byKnowledgeSource(row.id), (found) =>
        Option.match(found, {
          onNone: () => Effect.void,
          onSome: ({ lesson, source }) => end({ lesson: toLesson(lesson), source: toLessonSource(source) })
        })
      )
    const tenant = (row: SourceRow) => ({ workspaceId: row.workspace_id, environment: row.environment })
    return {
      indexed: (row) =>
        report(row, (data) => outbox.emit({ ...tenant(row), type: "course.lesson.source.indexed", data })),
      failed: (row, error) =>
        report(row, (data) => outbox.emit({ ...tenant(row), type: "course.lesson.source.failed", data: { ...data, error } }))
    }
  })
).pipe(Layer.provide(TrainingRepo.Default))
