/**
 * HTTP handlers of the widget surface (`/widget/v1/agents/{agent_id}/...`).
 * Keys and origins are checked before these run (the authentication middleware
 * and the edge's CORS); each handler is one call to a program, streams become
 * event-stream responses as on `/v1/agents/{id}/messages`.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { Api } from "../../schema/Api.js"
import { Caller } from "../../schema/Auth.js"
import { Conversations } from "../conversations/Conversations.js"
import { pingInterval, replyHeaders } from "../conversations/Http.js"
import type { Numbered } from "../conversations/ReplyLog.js"
import { ok, runsToCompletion } from "../http/Envelope.js"
import { eventStream, frame, ping } from "../http/Sse.js"
import { matchesEtag } from "../http/Etag.js"
import { Leads } from "../leads/Leads.js"
import { WidgetChat } from "./Chat.js"

const frames = (events: Stream.Stream<Numbered>) => Stream.map(events, (e) => frame(e.id, e.data))

export const WidgetHttp = HttpApiBuilder.group(Api, "widget", (handlers) =>
  Effect.gen(function* () {
    const leads = yield* Leads
    const chat = yield* WidgetChat
    const conversations = yield* Conversations
    return handlers
      .handle("config", ({ headers, path }) =>
        Effect.gen(function* () {
          const { data, etag } = yield* chat.config(yield* Caller, path.agent_id)
          // the browser keeps it a minute, then asks again with the ETag; each key and origin is its own answer
          const cache = { etag, "cache-control": "private, max-age=60, must-revalidate", vary: "Origin, Authorization" }
          if (matchesEtag(headers["if-none-match"], etag)) return HttpServerResponse.empty({ status: 304, headers: cache })
          return HttpServerResponse.unsafeJson(yield* ok(data), { headers: cache })
        })
      )
      .handle(
        "captureLead",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) =>
            leads.capture(c, path.agent_id, payload, { channel: "widget", agentParam: "agent_id" })
          ).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "openConversation",
        ({ path, payload }) => Effect.flatMap(Caller, (c) => chat.open(c, path.agent_id, payload)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle("retrieveConversation", ({ path }) =>
        Effect.flatMap(Caller, (c) => chat.retrieve(c, path.agent_id, path.conversation_id)).pipe(Effect.flatMap(ok))
      )
      .handle("sendMessage", ({ path, payload }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          // with an Idempotency-Key the edge keeps the stream as the reply it names (its headers), as on the API
          const sent = yield* chat.send(caller, path.agent_id, path.conversation_id, payload)
          if (payload.stream === false) return yield* Effect.flatMap(conversations.awaitReply(caller, sent), ok)
          return eventStream(frames(conversations.events(sent)), pingInterval, replyHeaders(sent.conversationId, sent.messageId))
        })
      )
      .handle("resumeMessage", ({ headers, path }) =>
        Effect.flatMap(Caller, (c) =>
          chat.resume(c, path.agent_id, path.conversation_id, path.message_id, headers["last-event-id"])
        ).pipe(Effect.map((events) => eventStream(frames(events), pingInterval)))
      )
      .handle(
        "escalate",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) => chat.escalate(c, path.agent_id, path.conversation_id, payload)).pipe(
            Effect.flatMap(ok)
          ),
        runsToCompletion
      )
      .handle("conversationEvents", ({ headers, path }) =>
        Effect.flatMap(Caller, (c) =>
          chat.events(c, path.agent_id, path.conversation_id, headers["last-event-id"])
        ).pipe(
          // a ping first: the headers go out at once (the stream may be silent a long while), so the page's
          // EventSource opens now
          Effect.map((events) => eventStream(Stream.concat(Stream.succeed(ping), frames(events)), pingInterval))
        )
      )
      .handle(
        "rateMessage",
        ({ path, payload }) =>
          Effect.flatMap(Caller, (c) =>
            chat.rate(c, path.agent_id, path.conversation_id, path.message_id, payload)
          ).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
      .handle(
        "endConversation",
        ({ path }) => Effect.flatMap(Caller, (c) => chat.end(c, path.agent_id, path.conversation_id)).pipe(Effect.flatMap(ok)),
        runsToCompletion
      )
  })
)
