/**
 * Ratings of replies: a visitor's or an integrator's thumbs up or down on an assistant message, with a comment,
 * kept on the message and announced as `message.feedback` (insights count them).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Channel, RateMessage } from "../../schema/Conversations.js"
import { ParameterInvalid, ResourceMissing } from "../../schema/Errors.js"
import type { AgentId, ConversationId, MessageId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { Outbox } from "../events/Outbox.js"
import { now } from "../Time.js"
import { ConversationsRepo, toMessage } from "./ConversationsRepo.js"

export class ConversationFeedback extends Effect.Service<ConversationFeedback>()("Conversations/Feedback", {
  effect: Effect.gen(function* () {
    const repo = yield* ConversationsRepo
    const outbox = yield* Outbox

    /**
     * Rates an assistant reply of the conversation (`rating: null` clears it), `message.feedback` when that
     * changes what it holds; the same rating again changes nothing and emits nothing. `of`: the widget's check
     * that the conversation is its agent's and of its channel (else missing, on `conversationParam`).
     */
    const rate = Effect.fn("Conversations.rate")(function* (
      tenant: Tenant,
      conversationId: ConversationId,
      messageId: MessageId,
      input: RateMessage,
      of?: { readonly agentId: AgentId; readonly channel: Channel; readonly conversationParam: string }
    ) {
      return yield* repo.transaction(
        Effect.gen(function* () {
          const conversation = yield* repo.findConversation(tenant, conversationId)
          if (
            Option.isNone(conversation) ||
            (of !== undefined && (conversation.value.agent_id !== of.agentId || conversation.value.channel !== of.channel))
          ) {
            return yield* new ResourceMissing({
              message: `No such conversation: '${conversationId}'`,
              param: of?.conversationParam ?? "id"
            })
          }
          const found = yield* repo.findMessage(tenant, conversationId, messageId, { forUpdate: true })
          if (Option.isNone(found)) {
            return yield* new ResourceMissing({
              message: `No such message in this conversation: '${messageId}'`,
              param: "message_id"
            })
          }
          const row = found.value
          if (row.role !== "assistant") {
            return yield* new ParameterInvalid({
              message: `Only an assistant reply can be rated; '${messageId}' is a ${row.role} message`,
              param: "message_id"
            })
          }
          if (row.status !== "complete") {
            return yield* new ParameterInvalid({
              message: `Only a complete reply can be rated; '${messageId}' is ${row.status}`,
              param: "message_id"
            })
          }
          const comment = input.rating === null || input.comment === undefined || input.comment === "" ? null : input.comment
          if (row.feedback_rating === input.rating && (input.rating === null || row.feedback_comment === comment)) {
            return toMessage(row)
          }
          const at = yield* now
          const message = toMessage(
            yield* repo.setFeedback(messageId, input.rating === null ? null : { rating: input.rating, comment, at })
          )
          yield* outbox.emit({ ...tenant, type: "message.feedback", data: { message, conversation_id: conversationId } })
          return message
        })
      )
    })

    return { rate } as const
  }),
  dependencies: [ConversationsRepo.Default]
}) {}
