/** HTTP handlers of the agents group: each one call to a program. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok, okList, runsToCompletion } from "../http/Envelope.js"
import { Agents } from "./Agents.js"

export const AgentsHttp = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function* () {
    const agents = yield* Agents
    return handlers
      .handle(
        "create",
        ({ payload }) => Effect.flatMap(Caller, (c) => agents.create(c, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(Caller, (c) => agents.list(c, urlParams)).pipe(
          Effect.flatMap(({ agents, pagination }) => okList(agents, pagination))
        )
      )
      .handle("retrieve", ({ path }) => Effect.flatMap(Caller, (c) => agents.retrieve(c, path.id)).pipe(Effect.flatMap(ok)))
      .handle(
        "update",
        ({ path, payload }) => Effect.flatMap(Caller, (c) => agents.update(c, path.id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "delete",
        ({ path }) => Effect.flatMap(Caller, (c) => agents.remove(c, path.id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
  })
)
