/**
 * HTTP handlers of the widget surface (`/widget/v1/agents/{agent_id}/...`).
 * Keys and origins are checked before these run (the authentication middleware
 * and the edge's CORS); each handler is one call to a program.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok, runsToCompletion } from "../http/Envelope.js"
import { Leads } from "../leads/Leads.js"

export const WidgetHttp = HttpApiBuilder.group(Api, "widget", (handlers) =>
  Effect.gen(function* () {
    const leads = yield* Leads
    return handlers.handle(
      "captureLead",
      ({ path, payload }) =>
        Effect.flatMap(Caller, (c) =>
          leads.capture(c, path.agent_id, payload, { channel: "widget", agentParam: "agent_id" })
        ).pipe(Effect.flatMap(ok)),
      runsToCompletion
    )
  })
)
