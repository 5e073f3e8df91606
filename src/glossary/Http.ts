/** HTTP handlers of the glossary group: each one call to a program. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok, runsToCompletion } from "../http/Envelope.js"
import { Glossary } from "./Glossary.js"

export const GlossaryHttp = HttpApiBuilder.group(Api, "glossary", (handlers) =>
  Effect.gen(function* () {
    const glossary = yield* Glossary
    return handlers
      .handle("retrieve", ({ path }) =>
        Effect.flatMap(Caller, (c) => glossary.retrieve(c, path.id)).pipe(Effect.flatMap(ok))
      )
      .handle(
        "replace",
        ({ path, payload }) => Effect.flatMap(Caller, (c) => glossary.replace(c, path.id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "addTerm",
        ({ path, payload }) => Effect.flatMap(Caller, (c) => glossary.addTerm(c, path.id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "updateTerm",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) => glossary.updateTerm(c, path.id, path.term, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "deleteTerm",
        ({ path }) => Effect.flatMap(Caller, (c) => glossary.deleteTerm(c, path.id, path.term)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
  })
)
