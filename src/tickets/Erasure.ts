/**
 * Erasure of a ticket's personal data. The ticket area scrubs its own rows and
 * asks the owners of the other stored documents (the outbox for event bodies,
 * the idempotency store for replayable responses) to scrub theirs, all in one
 * transaction with the ticket locked.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { TicketPublicId } from "../../schema/Tickets.js"
import { transaction } from "../db/Sql.js"
import { Outbox } from "../events/Outbox.js"
import { StoredResponses } from "../http/Idempotency.js"
import { now } from "../Time.js"
import { editObjects } from "../JsonDocument.js"
import { type Acting, actorOf } from "./Rules.js"
import { TicketThread } from "./Thread.js"
import { erasedText, TicketsRepo, toTicket } from "./TicketsRepo.js"

/**
 * A copy of a stored JSON document with this ticket's personal data replaced:
 * the visitor's name and e-mail in every `ticket` object of it, the body of
 * every `ticket_message` of it. Matching by object kind and id, not by value,
 * leaves other tickets and unrelated strings alone.
 */
export const scrubDocument = (text: string, publicId: string): Option.Option<string> =>
  editObjects(text, (out) => {
    let changed = false
    const replace = (field: string) => {
      if (typeof out[field] === "string" && out[field] !== erasedText) {
        out[field] = erasedText
        changed = true
      }
    }
    if (out.object === "ticket" && out.public_id === publicId) {
      replace("visitor_name")
      replace("visitor_email")
    }
    if (out.object === "ticket_message" && out.ticket_public_id === publicId) replace("body")
    return changed
  })

export class Erasure extends Effect.Service<Erasure>()("Tickets/Erasure", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* TicketsRepo
    const thread = yield* TicketThread
    const outbox = yield* Outbox
    const responses = yield* StoredResponses
    const tx = transaction(sql)

    /** Idempotent: a second erasure changes nothing and records no second thread entry. */
    const erase = Effect.fn("Tickets.erase")(function* (acting: Acting, publicId: TicketPublicId) {
      const tenant = acting.caller
      return yield* Effect.gen(function* () {
        const row = yield* thread.locked(tenant, publicId)
        const at = yield* now
        if (row.erased_at === null) yield* thread.entry(row.id, "erased", null, null, actorOf(acting), at)
        const erased = yield* repo.erase(row.id, at)
        const scrub = (body: string) => scrubDocument(body, publicId)
        yield* outbox.scrub(tenant, publicId, scrub)
        yield* responses.scrub(tenant, publicId, scrub)
        return toTicket(erased)
      }).pipe(tx)
    })

    return { erase } as const
  }),
  dependencies: [TicketsRepo.Default, TicketThread.Default, StoredResponses.Default]
}) {}
