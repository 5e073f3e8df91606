/** Monthly caps per plan, in one place: tickets (the tickets area's), replies and refreshes. */
import type { Plan } from "../../schema/Auth.js"

export { monthlyTicketCap } from "../tickets/Rules.js"

/** Replies a workspace may generate per calendar month (UTC) and environment; null: no cap. */
export const monthlyReplyCap: Record<Plan, number | null> = { free: 100, starter: 2_000, pro: null, enterprise: null }

export { monthlyRefreshCap } from "../../schema/Knowledge.js"

/** `YYYY-MM` of `d` in UTC: the period a count belongs to. */
export const monthOf = (d: Date) => `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, "0")}`

/** The calendar month (UTC) holding `d`: its first instant and the next month's (exclusive). */
export const periodOf = (d: Date): { readonly start: Date; readonly end: Date } => ({
  start: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)),
  end: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1))
})
