/**
 * The widget chat programs: a visitor's conversation with one agent, through
 * the conversations area (channel `widget`), handed over to a ticket of origin
 * `ai_escalation` with the transcript as its first message (labelled, and subject
 * defaulted, in the visitor's language). Every conversation
 * named in a path must be the path's agent's (else 404 `conversation_id`).
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { CallerShape } from "../../schema/Auth.js"
import type { Message, RateMessage } from "../../schema/Conversations.js"
import { ResourceMissing } from "../../schema/Errors.js"
import type { AgentId, ConversationId, MessageId } from "../../schema/Ids.js"
import { TicketPublicId } from "../../schema/Tickets.js"
import type { Escalate, OpenConversation, WidgetConfig, WidgetMessage } from "../../schema/Widget.js"
import type { Agent } from "../../schema/Agents.js"
import { text, type TextLanguage } from "../../schema/texts/Catalogue.js"
import { Agents } from "../agents/Agents.js"
import { Conversations } from "../conversations/Conversations.js"
import { ConversationFeedback } from "../conversations/Feedback.js"
import { Handoff, visitorMessagesRead } from "../conversations/Handoff.js"
import { agentLanguageOf } from "../languages/AgentLanguages.js"
import { chooseTextLanguage } from "../languages/TextLanguage.js"
import { Tickets } from "../tickets/Tickets.js"

/** The longest ticket message; a longer transcript keeps its latest lines. */
export const maxTranscriptChars = 20_000

const speakerKey = { user: "handoff.visitor", assistant: "handoff.assistant", member: "handoff.team" } as const

/** "Visitor: …" / "Assistant: …" lines of the final messages, oldest first; the latest part when too long. */
export const transcriptOf = (messages: ReadonlyArray<Message>, language: TextLanguage): string | undefined => {
  const lines = messages.map((m) => `${text(language, speakerKey[m.role])}: ${m.content}`)
  let whole = lines.join("\n")
  if (whole.length > maxTranscriptChars) {
    const marker = `${text(language, "handoff.earlierLeftOut")}\n`
    whole = marker + whole.slice(whole.length - (maxTranscriptChars - marker.length))
  }
  return whole.trim() === "" ? undefined : whole
}

const subjectOf = (messages: ReadonlyArray<Message>, language: TextLanguage): string => {
  const first = messages.find((m) => m.role === "user")?.content.trim().replace(/\s+/g, " ")
  if (first === undefined || first === "") return text(language, "handoff.ticketSubject")
  return first.length > 120 ? `${first.slice(0, 119)}…` : first
}

/** The visitor's language, as the hand-off e-mail's is told (`Handoff.visitorLanguage`): the ticket is theirs. */
const visitorLanguageOf = (agent: Agent, conversation: { readonly messages: ReadonlyArray<Message>; readonly metadata: Readonly<Record<string, unknown>> }) => {
  const said = conversation.messages.filter((m) => m.role === "user").slice(-visitorMessagesRead)
  const locale = conversation.metadata["locale"]
  return chooseTextLanguage({
    question: said.length === 0 ? undefined : said.map((m) => m.content).join("\n"),
    locale: typeof locale === "string" ? locale : undefined,
    agentLanguage: agentLanguageOf(agent)
  })
}

/** A strong ETag over the config: it changes exactly when what the widget shows does. */
export const configEtag = (config: WidgetConfig): string =>
  `"${createHash("sha256").update(JSON.stringify(config)).digest("base64url").slice(0, 27)}"`

/**
 * Whether escalating the agent's conversation hands it off to people live (the agent stops replying until the
 * ticket is resolved or the conversation released); otherwise the escalation only creates the ticket, answered by
 * e-mail. The agent's `widget.handoff` setting.
 */
export const handsOffOnEscalation = (agent: Agent): boolean => agent.widget.handoff

export class WidgetChat extends Effect.Service<WidgetChat>()("Widget/Chat", {
  effect: Effect.gen(function* () {
    const agents = yield* Agents
    const conversations = yield* Conversations
    const feedback = yield* ConversationFeedback
    const tickets = yield* Tickets
    const handoff = yield* Handoff

    /** The path's agent, of the caller's workspace and environment (else 404 `agent_id`). */
    const agentOf = (caller: CallerShape, agentId: AgentId) =>
      agents.retrieve(caller, agentId).pipe(
        Effect.catchTag("ResourceMissing", () =>
          Effect.fail(new ResourceMissing({ message: `No such agent: '${agentId}'`, param: "agent_id" }))
        )
      )

    const conversationOf = (caller: CallerShape, agentId: AgentId, id: ConversationId) =>
      Effect.zipRight(agentOf(caller, agentId), conversations.ofAgent(caller, agentId, id, "conversation_id"))

    /** What the widget reads of the agent, and its ETag. */
    const config = Effect.fn("WidgetChat.config")(function* (caller: CallerShape, agentId: AgentId) {
      const agent = yield* agentOf(caller, agentId)
      const data: WidgetConfig = {
        object: "widget_config",
        agent_id: agent.id,
        name: agent.widget.display_name ?? agent.name,
        welcome_message: agent.welcome_message,
        color: agent.widget.color,
        launcher_position: agent.widget.launcher_position,
        lead_capture: agent.widget.lead_capture,
        handoff: agent.widget.handoff
      }
      return { data, etag: configEtag(data) }
    })

    const open = Effect.fn("WidgetChat.open")(function* (caller: CallerShape, agentId: AgentId, input: OpenConversation) {
      yield* agentOf(caller, agentId)
      return yield* conversations.open(caller, "widget", agentId, input.metadata ?? {})
    })

    /** The conversation with its final messages (the widget draws its history again). */
    const retrieve = Effect.fn("WidgetChat.retrieve")(function* (caller: CallerShape, agentId: AgentId, id: ConversationId) {
      return yield* conversationOf(caller, agentId, id)
    })

    /** Stores the visitor's message and starts the reply (see `Conversations.send`). */
    const send = Effect.fn("WidgetChat.send")(function* (
      caller: CallerShape,
      agentId: AgentId,
      id: ConversationId,
      input: WidgetMessage
    ) {
      const conversation = yield* conversationOf(caller, agentId, id)
      return yield* conversations.send(caller, "widget", agentId, {
        message: input.message,
        conversation_id: id,
        metadata: conversation.metadata,
        locale: input.locale
      })
    })

    const resume = Effect.fn("WidgetChat.resume")(function* (
      caller: CallerShape,
      agentId: AgentId,
      id: ConversationId,
      messageId: MessageId,
      lastEventId: string | undefined
    ) {
      yield* conversationOf(caller, agentId, id)
      return yield* conversations.resume(caller, id, messageId, lastEventId)
    })

    const escalate = Effect.fn("WidgetChat.escalate")(function* (
      caller: CallerShape,
      agentId: AgentId,
      id: ConversationId,
      input: Escalate
    ) {
      const agent = yield* agentOf(caller, agentId)
      const conversation = yield* conversations.ofAgent(caller, agentId, id, "conversation_id")
      const language = visitorLanguageOf(agent, conversation)
      const body = transcriptOf(conversation.messages, language)
      const create = tickets.create(
        { caller, memberId: Option.none() },
        {
          agent_id: agentId,
          subject: input.subject ?? subjectOf(conversation.messages, language),
          origin: "ai_escalation",
          visitor_email: input.visitor_email,
          ...(input.visitor_name === undefined || input.visitor_name === "" ? {} : { visitor_name: input.visitor_name }),
          ...(body === undefined ? {} : { body }),
          conversation_id: id
        }
      )
      const escalated = yield* handoff.escalate(caller, id, create, handsOffOnEscalation(agent))
      if (escalated._tag === "Created") return { ticket: escalated.ticket, handoff: escalated.handoff }
      // already handed off: its open ticket, as it is now
      const { thread: _thread, ...ticket } = yield* tickets.retrieve(caller, TicketPublicId.make(escalated.ticketPublicId))
      return { ticket, handoff: escalated.handoff }
    })

    /** The conversation's hand-off events after `Last-Event-ID`, live (see `Handoff.follow`). */
    const events = Effect.fn("WidgetChat.events")(function* (
      caller: CallerShape,
      agentId: AgentId,
      id: ConversationId,
      lastEventId: string | undefined
    ) {
      yield* conversationOf(caller, agentId, id)
      return yield* handoff.follow(caller, id, lastEventId)
    })

    /** The visitor's rating of a reply in a conversation this agent's widget opened. */
    const rate = Effect.fn("WidgetChat.rate")(function* (
      caller: CallerShape,
      agentId: AgentId,
      id: ConversationId,
      messageId: MessageId,
      input: RateMessage
    ) {
      yield* agentOf(caller, agentId)
      return yield* feedback.rate(caller, id, messageId, input, {
        agentId,
        channel: "widget",
        conversationParam: "conversation_id"
      })
    })

    const end = Effect.fn("WidgetChat.end")(function* (caller: CallerShape, agentId: AgentId, id: ConversationId) {
      yield* conversationOf(caller, agentId, id)
      return yield* conversations.end(caller, id)
    })

    return { config, open, retrieve, send, resume, escalate, events, rate, end } as const
  }),
  dependencies: []
}) {}
