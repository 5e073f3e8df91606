/**
 * What a visitor's message in a hand-off is answered with: no reply of the agent, the message kept as the
 * conversation's, and a stream that says a person has the chat and ends at once (`outcome: handed_off`).
 */
import type { Handoff, Message, StreamEvent } from "../../schema/Conversations.js"
import type { ConversationId, MessageId } from "../../schema/Ids.js"
import type { Numbered } from "./ReplyLog.js"

export const handedOff = (
  conversationId: ConversationId,
  userId: MessageId,
  content: string,
  handoff: Handoff,
  at: Date
): { readonly userMessage: Message; readonly events: ReadonlyArray<Numbered> } => {
  const stream: ReadonlyArray<StreamEvent> = [
    { type: "conversation", conversation_id: conversationId, message_id: userId },
    { type: "handoff", handoff },
    {
      type: "done",
      message_id: userId,
      conversation_id: conversationId,
      usage: { input_tokens: 0, output_tokens: 0, credits: 0 },
      outcome: "handed_off"
    }
  ]
  return {
    userMessage: {
      id: userId,
      object: "message",
      conversation_id: conversationId,
      role: "user",
      content,
      sources: [],
      feedback: null,
      outcome: null,
      created_at: at.toISOString()
    },
    events: stream.map((e, i): Numbered => ({ id: i + 1, data: JSON.stringify(e), terminal: e.type === "done" }))
  }
}
