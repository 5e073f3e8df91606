/** HTTP handlers of the evaluations group: each one call to a program. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok, okList, runsToCompletion } from "../http/Envelope.js"
import { Evaluations } from "./Evaluations.js"

export const EvaluationsHttp = HttpApiBuilder.group(Api, "evaluations", (handlers) =>
  Effect.gen(function* () {
    const evaluations = yield* Evaluations
    return handlers
      .handle(
        "create",
        ({ path, payload }) => Effect.flatMap(Caller, (c) => evaluations.create(c, path.id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("list", ({ path, urlParams }) =>
        Effect.flatMap(Caller, (c) => evaluations.list(c, path.id, urlParams)).pipe(
          Effect.flatMap(({ items, pagination }) => okList(items, pagination))
        )
      )
      .handle("retrieve", ({ path }) =>
        Effect.flatMap(Caller, (c) => evaluations.retrieve(c, path.id, path.evaluation_id)).pipe(Effect.flatMap(ok))
      )
      .handle(
        "update",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) => evaluations.update(c, path.id, path.evaluation_id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "delete",
        ({ path }) => Effect.flatMap(Caller, (c) => evaluations.remove(c, path.id, path.evaluation_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "startRun",
        ({ path }) => Effect.flatMap(Caller, (c) => evaluations.startRun(c, path.id, path.evaluation_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("listRuns", ({ path, urlParams }) =>
        Effect.flatMap(Caller, (c) => evaluations.listRuns(c, path.id, path.evaluation_id, urlParams)).pipe(
          Effect.flatMap(({ items, pagination }) => okList(items, pagination))
        )
      )
      .handle("retrieveRun", ({ path }) =>
        Effect.flatMap(Caller, (c) => evaluations.retrieveRun(c, path.id, path.evaluation_id, path.run_id)).pipe(
          Effect.flatMap(ok)
        )
      )
  })
)
