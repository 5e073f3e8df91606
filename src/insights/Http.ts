/** HTTP handlers of the insights group: one call to a program. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok } from "../http/Envelope.js"
import { Insights } from "./Insights.js"

export const InsightsHttp = HttpApiBuilder.group(Api, "insights", (handlers) =>
  Effect.gen(function* () {
    const insights = yield* Insights
    return handlers.handle("retrieve", ({ path, urlParams }) =>
      Effect.flatMap(Caller, (c) => insights.retrieve(c, path.id, urlParams)).pipe(Effect.flatMap(ok))
    )
  })
)
