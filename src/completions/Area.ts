/**
 * The OpenAI-compatible area as the composition root uses it: its program (over the agents' and conversations'
 * programs), its API group, and the edge's replays of kept streams, in the shape each endpoint writes them.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Authentication } from "../../schema/Auth.js"
import { ChatCompletionRequest } from "../../schema/Completions.js"
import { ConversationId, MessageId } from "../../schema/Ids.js"
import { Conversations } from "../conversations/Conversations.js"
import { pingInterval, replayMessages, replyHeaders } from "../conversations/Http.js"
import { boundary } from "../db/Sql.js"
import { ReplayableStreams } from "../http/Idempotency.js"
import { eventStream } from "../http/Sse.js"
import { Completions } from "./Completions.js"
import { CompletionsHttp } from "./Http.js"

/** Needs the agents' and conversations' programs (`Server.ts` provides them). */
export const Live = Completions.Default

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = CompletionsHttp
export const ApiServices = [Authentication, Completions] as const

const decodeRef = Schema.decodeUnknown(Schema.Struct({ conversation_id: ConversationId, message_id: MessageId }))
const decodeBody = Schema.decodeUnknown(Schema.parseJson(ChatCompletionRequest))

/**
 * A request sent again with its Idempotency-Key whose answer was a stream: the reply's events from the first,
 * as the messages endpoint writes them, or as `chat.completion.chunk` events for a completion (read from the
 * request's body, the same as the first's).
 */
export const ReplayableStreamsLive = Layer.effect(
  ReplayableStreams,
  Effect.gen(function* () {
    const completions = yield* Completions
    const messages = replayMessages(yield* Conversations)
    return {
      replay: (tenant, ref, request) =>
        request.format !== "completions"
          ? messages(tenant, ref)
          : Effect.gen(function* () {
              // the reference is our own stored record, the body the one the record's fingerprint covers
              const { conversation_id, message_id } = yield* boundary(decodeRef(ref))
              const body = yield* boundary(decodeBody(request.body))
              const frames = yield* completions.replay(tenant, conversation_id, message_id, body)
              return eventStream(frames, pingInterval, replyHeaders(conversation_id, message_id))
            })
    }
  })
)
