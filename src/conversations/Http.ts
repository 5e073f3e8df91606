/** HTTP handlers of the conversations group: each one call to a program; streams become event-stream responses. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { ConversationId, MessageId } from "../../schema/Ids.js"
import { boundary } from "../db/Sql.js"
import { ok, okList, runsToCompletion } from "../http/Envelope.js"
import type { StreamRef } from "../http/Idempotency.js"
import type { Tenant } from "../../schema/Tenant.js"
import { eventStream, frame } from "../http/Sse.js"
import { Conversations } from "./Conversations.js"
import { ConversationFeedback } from "./Feedback.js"
import type { Numbered } from "./ReplyLog.js"

/** A comment line goes out after this much silence, so proxies keep the connection. */
export const pingInterval = "15 seconds"

const frames = (events: Stream.Stream<Numbered>) => Stream.map(events, (e) => frame(e.id, e.data))

/** The headers of a reply's event stream: a client resumes with them, the edge keeps an Idempotency-Key's answer as them. */
export const replyHeaders = (conversationId: string, messageId: string) => ({
  "conversation-id": conversationId,
  "message-id": messageId
})

const decodeRef = Schema.decodeUnknown(Schema.Struct({ conversation_id: ConversationId, message_id: MessageId }))

/**
 * A message sent again with its Idempotency-Key (API or widget): the reply's
 * events from the first, as a resume without `Last-Event-ID` (live while it is
 * generated), with the first answer's headers. The edge's `ReplayableStreams`
 * (served by the completions area, which writes its own endpoint's streams) uses it.
 */
export const replayMessages = (conversations: Conversations) => (tenant: Tenant, ref: StreamRef) =>
  Effect.gen(function* () {
    // the reference is our own stored record: one that does not decode is a defect, as a row is
    const { conversation_id, message_id } = yield* boundary(decodeRef(ref))
    const events = yield* conversations.resume(tenant, conversation_id, message_id, undefined)
    return eventStream(frames(events), pingInterval, replyHeaders(conversation_id, message_id))
  })

export const ConversationsHttp = HttpApiBuilder.group(Api, "conversations", (handlers) =>
  Effect.gen(function* () {
    const conversations = yield* Conversations
    const feedback = yield* ConversationFeedback
    return handlers
      .handle("send", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          const streamed = payload.stream ?? true
          // with an Idempotency-Key the edge keeps the stream as the reply it names (its headers), see `replayStreams`
          const sent = yield* conversations.send(caller, "api", path.id, payload)
          if (!streamed) return yield* Effect.flatMap(conversations.awaitReply(caller, sent), ok)
          return eventStream(frames(conversations.events(sent)), pingInterval, replyHeaders(sent.conversationId, sent.messageId))
        })
      )
      .handle("resume", ({ path, headers }) =>
        Effect.flatMap(Caller, (c) => conversations.resume(c, path.id, path.message_id, headers["last-event-id"])).pipe(
          Effect.map((events) => eventStream(frames(events), pingInterval))
        )
      )
      .handle("release", ({ path }) => Effect.flatMap(Caller, (c) => conversations.release(c, path.id)).pipe(Effect.flatMap(ok)))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(Caller, (c) => conversations.list(c, urlParams)).pipe(
          Effect.flatMap(({ items, pagination }) => okList(items, pagination))
        )
      )
      .handle("retrieve", ({ path }) => Effect.flatMap(Caller, (c) => conversations.retrieve(c, path.id)).pipe(Effect.flatMap(ok)))
      .handle(
        "rateMessage",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) => feedback.rate(c, path.id, path.message_id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
  })
)
