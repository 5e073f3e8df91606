/** Who may do what to tickets, and who a change is attributed to: pure rules, no I/O. */
import * as Option from "effect/Option"
import type { CallerShape, Plan } from "../../schema/Auth.js"
import { ResourceMissing } from "../../schema/Errors.js"
import type { Actor, TicketPublicId } from "../../schema/Tickets.js"

/** Tickets a workspace may create per calendar month (UTC) and environment; null: no cap. */
export const monthlyTicketCap: Record<Plan, number | null> = { free: 20, starter: 200, pro: null, enterprise: null }

/** Who asks: the key, and the member acting through it (`Service-Member-Id`), if any. */
export interface Acting {
  readonly caller: CallerShape
  readonly memberId: Option.Option<string>
}

export const missingTicket = (id: TicketPublicId) =>
  new ResourceMissing({ message: `No such ticket: '${id}'`, param: "public_id" })

export const monthOf = (d: Date) => `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, "0")}`

/** Widget and form submissions act for the visitor. */
export const actorOf = ({ caller, memberId }: Acting): Actor =>
  caller.keyKind === "widget" || caller.keyKind === "forms"
    ? { type: "visitor", id: null }
    : Option.isSome(memberId)
      ? { type: "member", id: memberId.value }
      : { type: "api", id: caller.keyId }

export const systemActor: Actor = { type: "system", id: null }
