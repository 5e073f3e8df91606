/** HTTP handlers of the Q&A and categories group: each one call to a program. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok, okList, runsToCompletion } from "../http/Envelope.js"
import { Categories } from "./Categories.js"
import { QaItems } from "./QaItems.js"
import { Regeneration } from "./Regeneration.js"

// the categories list is one page: every category, in position order
const onePage = { has_more: false, next_cursor: null } as const

export const QaHttp = HttpApiBuilder.group(Api, "qa", (handlers) =>
  Effect.gen(function* () {
    const qa = yield* QaItems
    const categories = yield* Categories
    const regeneration = yield* Regeneration
    return handlers
      .handle(
        "create",
        ({ path, payload }) => Effect.flatMap(Caller, (c) => qa.create(c, path.id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("list", ({ path, urlParams }) =>
        Effect.flatMap(Caller, (c) => qa.list(c, path.id, urlParams)).pipe(
          Effect.flatMap(({ items, pagination }) => okList(items, pagination))
        )
      )
      .handle(
        "update",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) => qa.update(c, path.id, path.qa_id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "delete",
        ({ path }) => Effect.flatMap(Caller, (c) => qa.remove(c, path.id, path.qa_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "regenerate",
        ({ path }) => Effect.flatMap(Caller, (c) => regeneration.request(c, path.id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "createCategory",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) => categories.create(c, path.id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("listCategories", ({ path }) =>
        Effect.flatMap(Caller, (c) => categories.list(c, path.id)).pipe(Effect.flatMap((list) => okList(list, onePage)))
      )
      .handle(
        "updateCategory",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) => categories.update(c, path.id, path.category_id, payload)).pipe(
            Effect.flatMap(ok)
          ),
        runsToCompletion
      )
      .handle(
        "deleteCategory",
        ({ path }) =>
          Effect.flatMap(Caller, (c) => categories.remove(c, path.id, path.category_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
  })
)
