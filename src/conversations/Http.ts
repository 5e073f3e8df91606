/** HTTP handlers of the conversations group: each one call to a program; streams become event-stream responses. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ParameterInvalid } from "../../schema/Errors.js"
import { ok, okList } from "../http/Envelope.js"
import { eventStream, frame } from "../http/Sse.js"
import { Conversations } from "./Conversations.js"
import type { Numbered } from "./Replies.js"

/** A comment line goes out after this much silence, so proxies keep the connection. */
export const pingInterval = "15 seconds"

const frames = (events: Stream.Stream<Numbered>) => Stream.map(events, (e) => frame(e.id, e.data))

export const ConversationsHttp = HttpApiBuilder.group(Api, "conversations", (handlers) =>
  Effect.gen(function* () {
    const conversations = yield* Conversations
    return handlers
      .handle("send", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          const request = yield* HttpServerRequest.HttpServerRequest
          const streamed = payload.stream ?? true
          // a stream cannot be stored and replayed: a client that lost one resumes it instead
          if (streamed && request.headers["idempotency-key"] !== undefined) {
            return yield* new ParameterInvalid({
              message:
                "Idempotency-Key is not accepted with `stream: true`: resume a dropped stream with GET /v1/conversations/{id}/messages/{message_id}/stream, or send `stream: false`",
              param: "Idempotency-Key"
            })
          }
          const sent = yield* conversations.send(caller, "api", path.id, payload)
          if (!streamed) return yield* Effect.flatMap(conversations.awaitReply(caller, sent), ok)
          return eventStream(frames(conversations.events(sent)), pingInterval, {
            "conversation-id": sent.conversationId,
            "message-id": sent.messageId
          })
        })
      )
      .handle("resume", ({ path, headers }) =>
        Effect.flatMap(Caller, (c) => conversations.resume(c, path.id, path.message_id, headers["last-event-id"])).pipe(
          Effect.map((events) => eventStream(frames(events), pingInterval))
        )
      )
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(Caller, (c) => conversations.list(c, urlParams)).pipe(
          Effect.flatMap(({ items, pagination }) => okList(items, pagination))
        )
      )
      .handle("retrieve", ({ path }) => Effect.flatMap(Caller, (c) => conversations.retrieve(c, path.id)).pipe(Effect.flatMap(ok)))
  })
)
