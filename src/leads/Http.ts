/** HTTP handlers of the leads group: each one call to a program. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok, okList, runsToCompletion } from "../http/Envelope.js"
import { Leads } from "./Leads.js"

export const LeadsHttp = HttpApiBuilder.group(Api, "leads", (handlers) =>
  Effect.gen(function* () {
    const leads = yield* Leads
    return handlers
      .handle(
        "create",
        ({ payload: { agent_id, ...input } }) =>
          Effect.flatMap(Caller, (c) => leads.capture(c, agent_id, input, { channel: "api", agentParam: "agent_id" })).pipe(
            Effect.flatMap(ok)
          ),
        runsToCompletion
      )
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(Caller, (c) => leads.list(c, urlParams)).pipe(
          Effect.flatMap(({ leads, pagination }) => okList(leads, pagination))
        )
      )
      .handle("retrieve", ({ path }) => Effect.flatMap(Caller, (c) => leads.retrieve(c, path.id)).pipe(Effect.flatMap(ok)))
      .handle(
        "delete",
        ({ path }) => Effect.flatMap(Caller, (c) => leads.remove(c, path.id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
  })
)
