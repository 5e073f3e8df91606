/**
 * The live hand-off of a conversation to people. An escalation puts it in hand-off (`requested`); while it is
 * `requested` or `active` the agent does not reply (see `Conversations.send`); a member's message on the ticket
 * is kept in the conversation as a `member` message and makes it `active`; resolving the ticket or a release
 * closes it. Each step is an event of the conversation's own stream, numbered per conversation and kept in
 * `conversation_events`, so a widget that reconnects with `Last-Event-ID`, to any instance, misses none.
 *
 * Readers wake on a signal, not a poll: on PostgreSQL the writer's `pg_notify` (delivered when its transaction
 * commits, to the one LISTEN connection of every instance); on PGlite (one process) an in-process PubSub,
 * published inside the writer's transaction (PGlite's transaction holds its only session, so the woken reader's
 * read runs after the commit). Each reader also looks every `handoffPollMillis` without a signal, the bound
 * should the LISTEN connection be lost.
 *
 * A connected reader is the visitor's presence (`last_seen_at`, written when it connects, every
 * `presenceEveryMillis` while it stays, and when it leaves): a member's message with no reader seen within
 * `presenceWindowMillis` is also e-mailed to the visitor.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { ConversationStreamEvent, Handoff as HandoffValue, Message } from "../../schema/Conversations.js"
import { ParameterInvalid, ResourceMissing } from "../../schema/Errors.js"
import { type ConversationId, MessageId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import type { TicketMessage } from "../../schema/Tickets.js"
import { Database } from "../../layers/Database.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { text } from "../../schema/texts/Catalogue.js"
import { Agents } from "../agents/Agents.js"
import { Emails } from "../email/Emails.js"
import { agentLanguageOf } from "../languages/AgentLanguages.js"
import { chooseTextLanguage } from "../languages/TextLanguage.js"
import { Outbox } from "../events/Outbox.js"
import type { HandoffTicket } from "../tickets/ConversationHandoff.js"
import { iso, now } from "../Time.js"
import { type ConversationRow, ConversationsRepo, handoffOf, inHandoff, toConversation } from "./ConversationsRepo.js"
import { HandoffRepo } from "./HandoffRepo.js"
import type { Numbered } from "./ReplyLog.js"

/** The channel of `pg_notify`: its payload is the conversation's id. */
export const handoffChannel = "conversation_events"
/** A reader with no signal looks again after this long (the LISTEN connection may be lost). */
export const handoffPollMillis = 2_000
/** A connected reader writes the visitor's presence this often. */
export const presenceEveryMillis = 5_000
/** A member's message is e-mailed when no reader was connected within this long. */
export const presenceWindowMillis = 30_000
/** The visitor's latest messages the hand-off e-mail's (and ticket's) language is told from. */
export const visitorMessagesRead = 5
/** Events read from the database at once. */
const readBatch = 100

/** The conversation's events after `Last-Event-ID`: a whole number, or none (all of them). */
const parseLastEventId = (value: string | undefined) => {
  const trimmed = value?.trim() ?? ""
  if (trimmed === "") return Effect.succeed(0)
  if (!/^[0-9]{1,9}$/.test(trimmed)) {
    return Effect.fail(
      new ParameterInvalid({
        message: "Last-Event-ID must be the `id:` of an event of this conversation (a whole number)",
        param: "Last-Event-ID"
      })
    )
  }
  return Effect.succeed(Number(trimmed))
}

const missing = (id: ConversationId) => new ResourceMissing({ message: `No such conversation: '${id}'`, param: "id" })

export class Handoff extends Effect.Service<Handoff>()("Conversations/Handoff", {
  scoped: Effect.gen(function* () {
    const repo = yield* ConversationsRepo
    const handoffs = yield* HandoffRepo
    const outbox = yield* Outbox
    const emails = yield* Emails
    const agents = yield* Agents
    const ids = yield* IdGenerator
    const database = yield* Database
    // the conversation ids whose events changed, for this process's readers
    const wakes = yield* PubSub.sliding<ConversationId>(1024)

    if (database.kind === "postgres") {
      yield* database.notifications(handoffChannel).pipe(
        Stream.runForEach((payload) => PubSub.publish(wakes, payload as ConversationId)),
        Effect.catchAllCause((cause) =>
          Effect.logWarning(
            "hand-off events of other instances are no longer signalled here; widget streams look every 2 s",
            cause
          )
        ),
        Effect.forkScoped
      )
    }

    /** Wakes the conversation's readers once the caller's transaction commits (see the module's comment). */
    const wake = (id: ConversationId) =>
      database.kind === "postgres" ? handoffs.notify(handoffChannel, id) : Effect.asVoid(PubSub.publish(wakes, id))

    /** The conversation's next event, kept, with its readers woken; in the caller's transaction. */
    const append = (id: ConversationId, event: ConversationStreamEvent, at: Date) =>
      Effect.zipRight(handoffs.appendEvent(id, JSON.stringify(event), at), wake(id))

    /** The hand-off's new state: its event on the stream and its webhook event. */
    const changed = (
      tenant: Tenant,
      row: ConversationRow,
      type: "conversation.handoff_requested" | "conversation.handoff_active" | "conversation.handoff_closed",
      at: Date
    ) =>
      Effect.gen(function* () {
        const handoff = handoffOf(row)
        if (handoff !== null) yield* append(row.id, { type: "handoff", handoff }, at)
        yield* outbox.emit({ ...tenant, type, data: { conversation: toConversation(row) } })
      })

    const lockedIn = (tenant: Tenant, id: ConversationId) =>
      Effect.flatMap(repo.findConversation(tenant, id, { forUpdate: true }), (row) =>
        Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(missing(id))
      )

    /**
     * Escalates: `create` (the ticket) runs with the conversation locked, then the conversation is handed off
     * to it when `handOff` (`requested`, event `conversation.handoff_requested`). A conversation already in
     * hand-off creates nothing: its open ticket's id is answered.
     */
    const escalate = <T extends { readonly public_id: string }, E, R>(
      tenant: Tenant,
      id: ConversationId,
      create: Effect.Effect<T, E, R>,
      handOff: boolean
    ) =>
      repo.transaction(
        Effect.gen(function* () {
          const row = yield* lockedIn(tenant, id)
          if (inHandoff(row) && row.handoff_ticket_public_id !== null) {
            return { _tag: "Existing" as const, ticketPublicId: row.handoff_ticket_public_id, handoff: handoffOf(row) }
          }
          const ticket = yield* create
          if (!handOff) return { _tag: "Created" as const, ticket, handoff: handoffOf(row) }
          const at = yield* now
          const requested = yield* handoffs.requestHandoff(id, ticket.public_id, at)
          yield* handoffs.markHandedOff(id)
          yield* changed(tenant, requested, "conversation.handoff_requested", at)
          return { _tag: "Created" as const, ticket, handoff: handoffOf(requested) }
        })
      )

    /** Closes an open hand-off of the locked row (event `conversation.handoff_closed`); the row as it is then. */
    const closeLocked = (tenant: Tenant, row: ConversationRow) =>
      Effect.gen(function* () {
        if (!inHandoff(row)) return row
        const at = yield* now
        const closed = yield* handoffs.setHandoffStatus(row.id, "closed", at)
        yield* changed(tenant, closed, "conversation.handoff_closed", at)
        return closed
      })

    /** `POST /v1/conversations/{id}/release`: the agent answers again. */
    const release = Effect.fn("Handoff.release")(function* (tenant: Tenant, id: ConversationId) {
      return toConversation(yield* repo.transaction(Effect.flatMap(lockedIn(tenant, id), (row) => closeLocked(tenant, row))))
    })

    /** The conversation of `ticket`, locked, when its open hand-off is to that ticket. */
    const handedTo = (tenant: Tenant, ticket: HandoffTicket) =>
      Effect.map(repo.findConversation(tenant, ticket.conversationId, { forUpdate: true }), (row) =>
        Option.filter(row, (r) => inHandoff(r) && r.handoff_ticket_public_id === ticket.ticketPublicId)
      )

    /** The visitor followed the conversation's events within the presence window. */
    const present = (row: ConversationRow, at: Date) =>
      row.last_seen_at !== null && at.getTime() - row.last_seen_at.getTime() <= presenceWindowMillis

    /**
     * The language the visitor is written to in: that of what they wrote in the conversation, else the widget's
     * `locale` (its metadata), else the agent's.
     */
    const visitorLanguage = (tenant: Tenant, row: ConversationRow) =>
      Effect.gen(function* () {
        const said = (yield* repo.finalMessages(row.id)).filter((m) => m.role === "user").slice(-visitorMessagesRead)
        const locale = row.metadata["locale"]
        const agentLanguage = yield* agents.retrieve(tenant, row.agent_id).pipe(
          Effect.map(agentLanguageOf),
          Effect.catchTag("ResourceMissing", () => Effect.succeed("auto" as const))
        )
        return chooseTextLanguage({
          question: said.length === 0 ? undefined : said.map((m) => m.content).join("\n"),
          locale: typeof locale === "string" ? locale : undefined,
          agentLanguage
        })
      })

    const memberReplied = (tenant: Tenant, ticket: HandoffTicket, ticketMessage: TicketMessage) =>
      Effect.gen(function* () {
        const found = yield* handedTo(tenant, ticket)
        if (Option.isNone(found)) return
        let row = found.value
        const at = yield* now
        const id = MessageId.make(yield* ids.make("msg"))
        yield* repo.addMessages(
          tenant,
          row.id,
          [{ id, conversationId: row.id, role: "member", status: "complete", content: ticketMessage.body, at }],
          1,
          at
        )
        if (row.handoff_status === "requested") {
          row = yield* handoffs.setHandoffStatus(row.id, "active", at)
          yield* changed(tenant, row, "conversation.handoff_active", at)
        }
        const message: Message = {
          id,
          object: "message",
          conversation_id: row.id,
          role: "member",
          content: ticketMessage.body,
          sources: [],
          feedback: null,
          outcome: null,
          created_at: iso(at)
        }
        yield* append(row.id, { type: "message", message }, at)
        if (ticket.visitorEmail !== null && !present(row, at)) {
          const language = yield* visitorLanguage(tenant, row)
          yield* emails.enqueue({
            to: ticket.visitorEmail,
            workspaceId: tenant.workspaceId,
            subject: text(language, "handoff.emailSubject"),
            text: [
              text(language, "handoff.emailIntro"),
              "",
              ticketMessage.body,
              "",
              text(language, "handoff.emailReference", { ticket: ticket.ticketPublicId })
            ].join("\n")
          })
        }
      })

    const ticketClosed = (tenant: Tenant, ticket: HandoffTicket) =>
      Effect.flatMap(handedTo(tenant, ticket), (row) => (Option.isSome(row) ? Effect.asVoid(closeLocked(tenant, row.value)) : Effect.void))

    /** The hand-off of a conversation as a send's `handoff` event shows it (the row read under the send's lock). */
    const current = (row: ConversationRow): HandoffValue | null => handoffOf(row)

    /**
     * The conversation's events after `Last-Event-ID`, then each new one as it is kept, until the reader leaves;
     * the visitor is present meanwhile. The caller checked the conversation is the tenant's.
     */
    const follow = Effect.fn("Handoff.follow")(function* (
      tenant: Tenant,
      id: ConversationId,
      lastEventId: string | undefined
    ) {
      const after = yield* parseLastEventId(lastEventId)
      if (Option.isNone(yield* repo.findConversation(tenant, id))) return yield* missing(id)
      return Stream.unwrapScoped(
        Effect.gen(function* () {
          // subscribed before the first read: a signal after it is never missed
          const signals = yield* PubSub.subscribe(wakes)
          const seen = Effect.flatMap(now, (at) => handoffs.markSeen(id, at))
          yield* seen
          yield* Effect.addFinalizer(() => seen)
          yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(presenceEveryMillis)), seen)))
          const signalled = Effect.repeat(Queue.take(signals), { until: (woken) => woken === id })
          let cursor = after
          const next = Effect.gen(function* () {
            // what came before this read is in it
            yield* Queue.takeAll(signals)
            const rows = yield* handoffs.conversationEventsAfter(id, cursor, readBatch)
            if (rows.length > 0) {
              cursor = rows[rows.length - 1]!.seq
              return rows.map((r): Numbered => ({ id: r.seq, data: r.data, terminal: false }))
            }
            yield* Effect.timeout(signalled, Duration.millis(handoffPollMillis)).pipe(Effect.ignore)
            return []
          })
          return Stream.flattenIterables(Stream.repeatEffect(next))
        })
      )
    })

    return { escalate, release, memberReplied, ticketClosed, current, follow } as const
  }),
  dependencies: [ConversationsRepo.Default, HandoffRepo.Default]
}) {}
