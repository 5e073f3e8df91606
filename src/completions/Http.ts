/**
 * The HTTP handlers of the OpenAI-compatible group: a completion as JSON or as `chat.completion.chunk` events,
 * with the `Conversation-Id` and `Message-Id` headers of the reply (what an `Idempotency-Key` keeps a stream
 * as), and the agents as models.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { pingInterval, replyHeaders } from "../conversations/Http.js"
import { eventStream } from "../http/Sse.js"
import { chunks, completion, Completions } from "./Completions.js"

export const CompletionsHttp = HttpApiBuilder.group(Api, "completions", (handlers) =>
  Effect.gen(function* () {
    const completions = yield* Completions
    return handlers
      .handle("create", ({ payload, headers }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          const { read, shape, events } = yield* completions.create(caller, payload, headers["conversation-id"])
          const named = replyHeaders(shape.conversationId, shape.messageId)
          if (read.stream) return eventStream(chunks(shape, events), pingInterval, named)
          return HttpServerResponse.unsafeJson(yield* completion(shape, events), { headers: named })
        })
      )
      .handle("listModels", () =>
        Effect.flatMap(Caller, (c) => completions.listModels(c)).pipe(Effect.map((list) => HttpServerResponse.unsafeJson(list)))
      )
      .handle("retrieveModel", ({ path }) =>
        Effect.flatMap(Caller, (c) => completions.retrieveModel(c, path.model)).pipe(Effect.map((model) => HttpServerResponse.unsafeJson(model)))
      )
  })
)
