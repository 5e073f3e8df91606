/** HTTP handlers of the training group: each one call to a program. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok, okList, runsToCompletion } from "../http/Envelope.js"
import { Course } from "./Course.js"
import { LessonSources } from "./LessonSources.js"

// each list is one page: every child of the parent, in position order (children per parent are capped)
const onePage = { has_more: false, next_cursor: null } as const
const list = <A>(items: ReadonlyArray<A>) => okList(items, onePage)

export const TrainingHttp = HttpApiBuilder.group(Api, "training", (handlers) =>
  Effect.gen(function* () {
    const course = yield* Course
    const sources = yield* LessonSources
    return handlers
      .handle(
        "createModule",
        ({ path, payload }) => Effect.flatMap(Caller, (c) => course.createModule(c, path.id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("listModules", ({ path }) =>
        Effect.flatMap(Caller, (c) => course.listModules(c, path.id)).pipe(Effect.flatMap(list))
      )
      .handle(
        "updateModule",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) => course.updateModule(c, path.id, path.module_id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "deleteModule",
        ({ path, urlParams }) =>
          Effect.flatMap(Caller, (c) => course.deleteModule(c, path.id, path.module_id, urlParams.cascade === "true")).pipe(
            Effect.flatMap(ok)
          ),
        runsToCompletion
      )
      .handle(
        "createLesson",
        ({ path, payload }) => Effect.flatMap(Caller, (c) => course.createLesson(c, path.id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("listLessons", ({ path, urlParams }) =>
        Effect.flatMap(Caller, (c) => course.listLessons(c, path.id, urlParams.module_id)).pipe(Effect.flatMap(list))
      )
      .handle(
        "updateLesson",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) => course.updateLesson(c, path.id, path.lesson_id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "deleteLesson",
        ({ path, urlParams }) =>
          Effect.flatMap(Caller, (c) => course.deleteLesson(c, path.id, path.lesson_id, urlParams.cascade === "true")).pipe(
            Effect.flatMap(ok)
          ),
        runsToCompletion
      )
      .handle(
        "createSource",
        ({ path, payload }) => Effect.flatMap(Caller, (c) => sources.create(c, path.id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("listSources", ({ path, urlParams }) =>
        Effect.flatMap(Caller, (c) => sources.list(c, path.id, urlParams.lesson_id)).pipe(Effect.flatMap(list))
      )
      .handle(
        "updateSource",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) => sources.update(c, path.id, path.source_id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "deleteSource",
        ({ path }) => Effect.flatMap(Caller, (c) => sources.remove(c, path.id, path.source_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
  })
)
