/** HTTP handlers of the keys group: each one call to a program. The group brings its programs. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok, okList, runsToCompletion } from "../http/Envelope.js"
import { Keys } from "./Keys.js"

export const KeysHttp = HttpApiBuilder.group(Api, "keys", (handlers) =>
  Effect.gen(function* () {
    const keys = yield* Keys
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(Caller, (c) => keys.list(c, urlParams)).pipe(
          Effect.flatMap(({ keys, pagination }) => okList(keys, pagination))
        )
      )
      .handle(
        "create",
        ({ payload }) => Effect.flatMap(Caller, (c) => keys.create(c, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "revoke",
        ({ path }) => Effect.flatMap(Caller, (c) => keys.revoke(c, path.id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
  })
).pipe(Layer.provide(Keys.Default))
