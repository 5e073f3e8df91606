/**
 * Lead programs. A capture and its `lead.captured` event commit in one
 * transaction; a delete leaves a tombstone, so deleting again answers the same,
 * and asks the outbox and the idempotency store to clear the lead's personal
 * data from their stored documents in the same transaction.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ParameterMissing, ResourceMissing } from "../../schema/Errors.js"
import { type AgentId, type ConversationId, LeadId } from "../../schema/Ids.js"
import type { CaptureLead, LeadListParams } from "../../schema/Leads.js"
import type { Tenant } from "../../schema/Tenant.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { Agents } from "../agents/Agents.js"
import { transaction } from "../db/Sql.js"
import { Outbox } from "../events/Outbox.js"
import { StoredResponses } from "../http/Idempotency.js"
import { ConversationLink } from "./ConversationLink.js"
import { Paginator, toPage } from "../http/Pagination.js"
import { editObjects } from "../JsonDocument.js"
import { now } from "../Time.js"
import { LeadsRepo, toLead } from "./LeadsRepo.js"

/** Where a lead came from: the default of its `metadata.source`. */
export type LeadChannel = "api" | "widget" | "form"

/**
 * A copy of a stored JSON document with this lead's personal data cleared as in
 * its tombstone (`email`, `name`, `phone` null, `metadata` empty) wherever the
 * lead appears in it (`object: "lead"` with its id); none when nothing changes.
 */
export const scrubLead = (text: string, leadId: string): Option.Option<string> =>
  editObjects(text, (out) => {
    if (out.object !== "lead" || out.id !== leadId) return false
    let changed = false
    for (const field of ["email", "name", "phone"]) {
      if (out[field] !== null && out[field] !== undefined) {
        out[field] = null
        changed = true
      }
    }
    if (typeof out.metadata === "object" && out.metadata !== null && Object.keys(out.metadata).length > 0) {
      out.metadata = {}
      changed = true
    }
    return changed
  })

const missing = (id: string) => new ResourceMissing({ message: `No such lead: '${id}'`, param: "id" })

export class Leads extends Effect.Service<Leads>()("Leads/Programs", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* LeadsRepo
    const agents = yield* Agents
    const outbox = yield* Outbox
    const ids = yield* IdGenerator
    const pages = yield* Paginator
    const responses = yield* StoredResponses
    const conversations = yield* ConversationLink
    const tx = transaction(sql)

    /**
     * Records a lead of `agentId` (an agent of the tenant, else 404 on
     * `agentParam`). `conversation_id` is kept as given; a conversation of the
     * tenant by that id gets the lead as its `lead_id` (the `ConversationLink` port).
     */
    const capture = Effect.fn("Leads.capture")(function* (
      tenant: Tenant,
      agentId: AgentId,
      input: CaptureLead,
      options: { readonly channel: LeadChannel; readonly agentParam: string }
    ) {
      const email = input.email ?? null
      const phone = input.phone ?? null
      if ((email === null || email === "") && (phone === null || phone === "")) {
        return yield* new ParameterMissing({ message: "A lead needs an `email` or a `phone`", param: "email" })
      }
      const id = LeadId.make(yield* ids.make("ldx"))
      return yield* Effect.gen(function* () {
        if (!(yield* agents.exists(tenant, agentId))) {
          return yield* new ResourceMissing({ message: `No such agent: '${agentId}'`, param: options.agentParam })
        }
        const conversationId: ConversationId | null = input.conversation_id ?? null
        const lead = toLead(
          yield* repo.insert({
            ...tenant,
            id,
            agent_id: agentId,
            email,
            name: input.name === undefined || input.name === "" ? null : input.name,
            phone,
            metadata: { source: options.channel, ...input.metadata },
            conversation_id: conversationId,
            created_at: yield* now
          })
        )
        if (conversationId !== null) yield* conversations.linkLead(tenant, conversationId, id)
        yield* outbox.emit({ ...tenant, type: "lead.captured", data: { lead, conversation_id: conversationId } })
        return lead
      }).pipe(tx)
    })

    const retrieve = Effect.fn("Leads.retrieve")(function* (tenant: Tenant, id: LeadId) {
      const row = yield* repo.find(tenant, id)
      return Option.isSome(row) && row.value.deleted_at === null ? toLead(row.value) : yield* missing(id)
    })

    const list = Effect.fn("Leads.list")(function* (tenant: Tenant, params: LeadListParams) {
      const page = yield* pages.parse("leads", params, {
        agent_id: params.agent_id,
        email: params.email?.toLowerCase(),
        conversation_id: params.conversation_id
      })
      const filters = {
        agentId: Option.fromNullable(params.agent_id),
        email: Option.fromNullable(params.email),
        conversationId: Option.fromNullable(params.conversation_id)
      }
      const { rows, pagination } = toPage(yield* repo.page(tenant, filters, page), page)
      return { leads: rows.map(toLead), pagination }
    })

    /** Idempotent: a lead deleted before answers as it did then; one that never existed is 404. */
    const remove = Effect.fn("Leads.delete")(function* (tenant: Tenant, id: LeadId) {
      return yield* Effect.gen(function* () {
        const row = yield* repo.find(tenant, id, { forUpdate: true })
        if (Option.isNone(row)) return yield* missing(id)
        if (row.value.deleted_at === null) {
          yield* repo.tombstone(id, yield* now)
          yield* conversations.unlinkLead(tenant, id)
          const scrub = (body: string) => scrubLead(body, id)
          yield* outbox.scrub(tenant, id, scrub, "lead.")
          yield* responses.scrub(tenant, id, scrub)
        }
        return { id, object: "lead" as const, deleted: true as const }
      }).pipe(tx)
    })

    return { capture, retrieve, list, remove } as const
  }),
  dependencies: [LeadsRepo.Default, Agents.Default]
}) {}
