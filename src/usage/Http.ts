/** HTTP handlers of the usage group: one call to a program. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok } from "../http/Envelope.js"
import { Usage } from "./Usage.js"

export const UsageHttp = HttpApiBuilder.group(Api, "usage", (handlers) =>
  Effect.gen(function* () {
    const usage = yield* Usage
    return handlers.handle("retrieve", () => Effect.flatMap(Caller, (c) => usage.summary(c)).pipe(Effect.flatMap(ok)))
  })
)
