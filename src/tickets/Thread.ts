/**
 * What every ticket change shares: the locked row, the thread entries and the
 * events of a status change. Runs inside the caller's transaction.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Tenant } from "../../schema/Tenant.js"
import type { Actor, Ticket, TicketEventType, TicketPublicId, TicketStatus } from "../../schema/Tickets.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { Outbox } from "../events/Outbox.js"
import { iso } from "../Time.js"
import { missingTicket } from "./Rules.js"
import { type TicketRow, type TicketState, TicketsRepo } from "./TicketsRepo.js"

export class TicketThread extends Effect.Service<TicketThread>()("Tickets/Thread", {
  effect: Effect.gen(function* () {
    const repo = yield* TicketsRepo
    const outbox = yield* Outbox
    const ids = yield* IdGenerator

    /** The ticket row, locked until the transaction ends, so changes to one ticket apply one after the other. */
    const locked = (tenant: Tenant, publicId: TicketPublicId) =>
      Effect.flatMap(repo.find(tenant, publicId, { forUpdate: true }), (row) =>
        Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(missingTicket(publicId))
      )

    const entry = (ticketId: string, type: TicketEventType, from: string | null, to: string | null, actor: Actor, at: Date) =>
      Effect.flatMap(ids.make("tev"), (id) => repo.insertEvent({ id, ticketId, type, from, to, actor, created_at: at }))

    /** The thread entry and the events of a status change (already written to the row). */
    const recordStatus = (tenant: Tenant, ticket: Ticket, from: TicketStatus, actor: Actor, at: Date) =>
      Effect.gen(function* () {
        const to = ticket.status
        const type: TicketEventType = to === "resolved" ? "resolved" : from === "resolved" ? "reopened" : "status_changed"
        yield* entry(ticket.id, type, from, to, actor, at)
        yield* outbox.emit({
          ...tenant,
          type: "ticket.status.changed",
          data: { ticket_public_id: ticket.public_id, from, to, actor, changed_at: iso(at) }
        })
        if (to === "resolved") yield* outbox.emit({ ...tenant, type: "ticket.resolved", data: { ticket } })
      })

    return { locked, entry, recordStatus } as const
  }),
  dependencies: [TicketsRepo.Default]
}) {}

/** The changeable part of a row. */
export const stateOf = (row: TicketRow): TicketState => ({
  status: row.status,
  priority: row.priority,
  assigned_to: row.assigned_to,
  tags: row.tags,
  metadata: row.metadata,
  updated_at: row.updated_at,
  resolved_at: row.resolved_at,
  first_response_at: row.first_response_at
})
