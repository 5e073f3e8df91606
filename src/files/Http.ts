/** HTTP handlers of the files group. The upload reads the raw body itself (any type, 25 MB). */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ok, runsToCompletion } from "../http/Envelope.js"
import { Files } from "./Files.js"

export const FilesHttp = HttpApiBuilder.group(Api, "files", (handlers) =>
  Effect.gen(function* () {
    const files = yield* Files
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(Caller, (c) => files.create(c, payload)).pipe(Effect.flatMap(ok)), runsToCompletion)
      .handleRaw(
        "upload",
        ({ path }) =>
          Effect.gen(function* () {
            const caller = yield* Caller
            const request = yield* HttpServerRequest.HttpServerRequest
            // the edge set this route's body cap (25 MB), counted as the bytes stream in
            // (an oversized body dies with the platform's RequestError, which the edge refuses as 413)
            const body = yield* Effect.orDie(request.arrayBuffer)
            return yield* Effect.flatMap(files.upload(caller, path.id, new Uint8Array(body)), ok)
          }),
        runsToCompletion
      )
      .handle("confirm", ({ path }) => Effect.flatMap(Caller, (c) => files.confirm(c, path.id)).pipe(Effect.flatMap(ok)), runsToCompletion)
      .handle("retrieve", ({ path }) => Effect.flatMap(Caller, (c) => files.retrieve(c, path.id)).pipe(Effect.flatMap(ok)))
      .handle("delete", ({ path }) => Effect.flatMap(Caller, (c) => files.remove(c, path.id)).pipe(Effect.flatMap(ok)), runsToCompletion)
  })
)
