/**
 * Baseline for `GET /v1/agents/{id}` and `GET /v1/tickets/{id}`: bare
 * node:http + a pg Pool doing the same work as the service's happy path, and
 * nothing else: the API key lookup by SHA-256 joined to workspaces
 * (src/auth/ApiKeys.ts), then the agent by id/workspace/environment
 * (src/agents/AgentsRepo.ts), or the ticket by public id with its messages and
 * events in one statement, merged into one thread by sequence (src/tickets/Tickets.ts),
 * in the same envelope.
 * Run as a child: `node --import tsx scripts/bench/baseline-server.ts` with
 * PORT and DATABASE_URL.
 */
import { createHash, randomBytes } from "node:crypto"
import { createServer } from "node:http"
import { fail, pool, port, send, wellFormedKey } from "./baseline-http.js"
import { host } from "./lib.js"


const agentPath = /^\/v1\/agents\/([^/?]+)$/
const ticketPath = /^\/v1\/tickets\/([^/?]+)$/

interface KeyRow {
  readonly workspace_id: string
  readonly environment: string
  readonly revoked_at: Date | null
}
interface AgentRow {
  readonly id: string
  readonly type: string
  readonly name: string
  readonly slug: string
  readonly instructions: string | null
  readonly welcome_message: string | null
  readonly allowed_origins: ReadonlyArray<string>
  readonly refresh_schedule: string
  readonly gone_grace_days: number
  readonly created_at: Date
  readonly updated_at: Date
}

interface TicketRow {
  readonly seq: string
  readonly id: string
  readonly public_id: string
  readonly agent_id: string
  readonly status: string
  readonly priority: string
  readonly origin: string
  readonly visitor_name: string | null
  readonly visitor_email: string | null
  readonly subject: string
  readonly assigned_to: string | null
  readonly tags: ReadonlyArray<string>
  readonly metadata: Record<string, unknown>
  readonly conversation_id: string | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly resolved_at: Date | null
  readonly first_response_at: Date | null
}
interface MessageRow {
  readonly seq: string
  readonly id: string
  readonly ticket_public_id: string
  readonly author_type: string
  readonly author_id: string | null
  readonly body: string
  readonly created_at: Date
}
interface EventRow {
  readonly seq: string
  readonly id: string
  readonly type: string
  readonly from_value: string | null
  readonly to_value: string | null
  readonly actor_type: string
  readonly actor_id: string | null
  readonly created_at: Date
}

interface ThreadRow {
  readonly messages: ReadonlyArray<Omit<MessageRow, "created_at"> & { readonly created_at: string }>
  readonly events: ReadonlyArray<Omit<EventRow, "created_at"> & { readonly created_at: string }>
}

/** The ticket with its thread in one statement, as the service reads it (src/tickets/TicketsRepo.ts). */
const ticket = async (publicId: string, key: KeyRow) => {
  const tickets = await pool.query<TicketRow & ThreadRow>(
    `select seq::text as seq, id::text as id, public_id, agent_id, status, priority, origin, visitor_name, visitor_email,
       subject, assigned_to, tags, metadata, conversation_id, created_at, updated_at, resolved_at, first_response_at, erased_at,
       (select coalesce(json_agg(json_build_object(
           'seq', m.seq::text, 'id', m.id, 'ticket_public_id', tickets.public_id, 'author_type', m.author_type,
           'author_id', m.author_id, 'body', m.body, 'created_at', m.created_at) order by m.seq), '[]'::json)
         from ticket_messages m where m.ticket_id = tickets.id) as messages,
       (select coalesce(json_agg(json_build_object(
           'seq', e.seq::text, 'id', e.id, 'type', e.type, 'from_value', e.from_value, 'to_value', e.to_value,
           'actor_type', e.actor_type, 'actor_id', e.actor_id, 'created_at', e.created_at) order by e.seq), '[]'::json)
         from ticket_events e where e.ticket_id = tickets.id) as events
     from tickets where public_id = $1 and workspace_id = $2 and environment = $3`,
    [publicId, key.workspace_id, key.environment]
  )
  const t = tickets.rows[0]
  if (t === undefined) return undefined
  const thread = [
    ...t.messages.map((m) => ({
      seq: BigInt(m.seq),
      item: {
        id: m.id,
        object: "ticket_message",
        ticket_public_id: m.ticket_public_id,
        author_type: m.author_type,
        author_id: m.author_id,
        body: m.body,
        created_at: new Date(m.created_at).toISOString()
      }
    })),
    ...t.events.map((e) => ({
      seq: BigInt(e.seq),
      item: {
        id: e.id,
        object: "ticket_event",
        type: e.type,
        from: e.from_value,
        to: e.to_value,
        actor: { type: e.actor_type, id: e.actor_id },
        created_at: new Date(e.created_at).toISOString()
      }
    }))
  ].sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0))
  return {
    id: t.id,
    public_id: t.public_id,
    object: "ticket",
    agent_id: t.agent_id,
    status: t.status,
    priority: t.priority,
    origin: t.origin,
    visitor_name: t.visitor_name,
    visitor_email: t.visitor_email,
    subject: t.subject,
    assigned_to: t.assigned_to,
    tags: t.tags,
    metadata: t.metadata,
    conversation_id: t.conversation_id,
    created_at: t.created_at.toISOString(),
    updated_at: t.updated_at.toISOString(),
    resolved_at: t.resolved_at?.toISOString() ?? null,
    first_response_at: t.first_response_at?.toISOString() ?? null,
    thread: thread.map((x) => x.item)
  }
}

const server = createServer((req, res) => {
  // same shape as the service's ids: prefix + 24 characters
  const requestId = `req_${randomBytes(18).toString("base64url")}`
  const match = agentPath.exec(req.url ?? "")
  const ticketMatch = ticketPath.exec(req.url ?? "")
  if (req.method === "GET" && req.url === "/readyz") return send(res, 200, { status: "ready" }, requestId)
  if (req.method !== "GET" || (match === null && ticketMatch === null)) return fail(res, 404, "route_not_found", requestId)
  const token = /^Bearer\s+(.*)$/i.exec(req.headers.authorization?.trim() ?? "")?.[1]?.trim()
  if (token === undefined || !wellFormedKey.test(token)) return fail(res, 401, "invalid_api_key", requestId)

  void (async () => {
    const hash = createHash("sha256").update(token).digest("hex")
    const keys = await pool.query<KeyRow>(
      "select k.*, w.plan from api_keys k join workspaces w on w.id = k.workspace_id where k.key_hash = $1",
      [hash]
    )
    const key = keys.rows[0]
    if (key === undefined || key.revoked_at !== null) return fail(res, 401, "invalid_api_key", requestId)
    if (ticketMatch !== null) {
      const data = await ticket(ticketMatch[1]!, key)
      if (data === undefined) return fail(res, 404, "resource_not_found", requestId)
      return send(res, 200, { data, meta: { request_id: requestId } }, requestId)
    }
    const agents = await pool.query<AgentRow>(
      `select seq::text as seq, id, type, name, slug, instructions, welcome_message, allowed_origins, refresh_schedule,
         gone_grace_days, created_at, updated_at
       from agents where id = $1 and workspace_id = $2 and environment = $3 and deleted_at is null`,
      [match![1], key.workspace_id, key.environment]
    )
    const a = agents.rows[0]
    if (a === undefined) return fail(res, 404, "resource_not_found", requestId)
    const data = {
      id: a.id,
      object: "agent",
      type: a.type,
      name: a.name,
      slug: a.slug,
      instructions: a.instructions,
      welcome_message: a.welcome_message,
      allowed_origins: a.allowed_origins,
      knowledge_refresh: { schedule: a.refresh_schedule, gone_grace_days: a.gone_grace_days },
      created_at: a.created_at.toISOString(),
      updated_at: a.updated_at.toISOString()
    }
    send(res, 200, { data, meta: { request_id: requestId } }, requestId)
  })().catch(() => fail(res, 500, "internal_error", requestId))
})

server.listen(port, host)
const shutdown = () => server.close(() => void pool.end().then(() => process.exit(0)))
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)
