/**
 * Baseline for `POST /v1/tickets`: bare node:http + a pg Pool running the same
 * statements as the service's happy path, and nothing else:
 *
 * - the API key lookup by SHA-256 joined to workspaces (src/auth/ApiKeys.ts),
 *   outside the transaction, as the edge does it;
 * - then one transaction (src/tickets/Tickets.ts `create`): the agent by
 *   id/workspace/environment (src/agents/AgentsRepo.ts), the workspace's plan
 *   and owner, the monthly counter upsert (src/tickets/TicketsRepo.ts), the
 *   ticket insert, its `created` thread event, the first message and its
 *   `message_added` thread event, the `ticket.created` event and the
 *   subscriber select of the fan-out, one delivery per subscriber
 *   (src/events/Outbox.ts, src/webhooks/WebhooksRepo.ts), and the owner's
 *   e-mail (src/email/Emails.ts).
 *
 * Same SQL text, same parameters, same ids (prefix + 24 base62 characters),
 * same `{ data, meta: { request_id } }` envelope with 201. No e-mail sender,
 * webhook dispatcher, rate limiter or schema validation beyond the fields it
 * needs. Run as a child: `node --import tsx scripts/bench/tickets-baseline.ts`
 * with PORT and DATABASE_URL.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto"
import { createServer, type IncomingMessage } from "node:http"
import { fail, pool, port, send, wellFormedKey } from "./baseline-http.js"
import { host } from "./lib.js"


// The pool's client type: `lib.ts` declares the pool only as queryable.
interface PoolClient {
  query<R>(text: string, values?: ReadonlyArray<unknown>): Promise<{ readonly rows: Array<R> }>
  release(error?: Error): void
}
const connect = (): Promise<PoolClient> => (pool as unknown as { connect(): Promise<PoolClient> }).connect()

const maxBodyBytes = 2 * 1024 * 1024
const capOf: Record<string, number | null> = { free: 20, starter: 200, pro: null, enterprise: null }
const horizonMillis = 24 * 60 * 60 * 1000

const base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
/** `prefix_` + 24 uniform base62 characters (bytes >= 248 are skipped). */
const makeId = (prefix: string): string => {
  let out = ""
  for (let round = 0; out.length < 24 && round < 100; round++) {
    for (const byte of randomBytes(48)) {
      if (byte < 248 && out.length < 24) out += base62Alphabet[byte % 62]
    }
  }
  return `${prefix}_${out}`
}

interface KeyRow {
  readonly id: string
  readonly workspace_id: string
  readonly environment: string
  readonly kind: string
  readonly scopes: string
  readonly revoked_at: Date | null
}
interface TicketRow {
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
  readonly tags: unknown
  readonly metadata: unknown
  readonly conversation_id: string | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly resolved_at: Date | null
  readonly first_response_at: Date | null
}
interface Input {
  readonly agent_id: string
  readonly subject: string
  readonly body: string | undefined
  readonly visitor_name: string | null
  readonly visitor_email: string | null
}


const readBody = (req: IncomingMessage) =>
  new Promise<string | undefined>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxBodyBytes) chunks.push(chunk)
    })
    req.on("end", () => resolve(size > maxBodyBytes ? undefined : Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/** The fields this baseline reads, or undefined when the body is not a usable ticket. */
const parseInput = (text: string): Input | undefined => {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof raw !== "object" || raw === null) return undefined
  const o = raw as Record<string, unknown>
  const optional = (v: unknown) => (typeof v === "string" ? v.trim() : null)
  if (typeof o["agent_id"] !== "string" || typeof o["subject"] !== "string" || o["subject"].trim() === "") return undefined
  return {
    agent_id: o["agent_id"],
    subject: o["subject"].trim(),
    body: typeof o["body"] === "string" && o["body"].trim() !== "" ? o["body"] : undefined,
    visitor_name: optional(o["visitor_name"]),
    visitor_email: optional(o["visitor_email"])
  }
}

const json = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)
const isoOrNull = (d: Date | null) => (d === null ? null : d.toISOString())

const toTicket = (row: TicketRow) => ({
  id: row.id,
  public_id: row.public_id,
  object: "ticket",
  agent_id: row.agent_id,
  status: row.status,
  priority: row.priority,
  origin: row.origin,
  visitor_name: row.visitor_name,
  visitor_email: row.visitor_email,
  subject: row.subject,
  assigned_to: row.assigned_to,
  tags: json(row.tags),
  metadata: json(row.metadata),
  conversation_id: row.conversation_id,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
  resolved_at: isoOrNull(row.resolved_at),
  first_response_at: isoOrNull(row.first_response_at)
})

const monthOf = (d: Date) => `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, "0")}`

type Outcome =
  | { readonly _tag: "Created"; readonly ticket: ReturnType<typeof toTicket> }
  | { readonly _tag: "Failed"; readonly status: number; readonly code: string }

/** The transaction of `Tickets.create`, statement for statement. */
const createTicket = async (key: KeyRow, input: Input): Promise<Outcome> => {
  const workspaceId = key.workspace_id
  const environment = key.environment
  const publicId = makeId("tck")
  const ticketId = randomUUID()
  const client = await connect()
  let done = false
  try {
    await client.query("BEGIN")
    const abort = async (status: number, code: string): Promise<Outcome> => {
      await client.query("ROLLBACK")
      done = true
      return { _tag: "Failed", status, code }
    }
    const agents = await client.query(
      `
        select seq::text as seq, id, type, name, slug, instructions, welcome_message, created_at, updated_at from agents
        where id = $1 and workspace_id = $2 and environment = $3
          and deleted_at is null
        `,
      [input.agent_id, workspaceId, environment]
    )
    if (agents.rows.length === 0) return await abort(404, "resource_missing")
    const at = new Date()
    const workspace = (
      await client.query<{ plan: string; owner_email: string }>(
        `
        select plan, owner_email from workspaces where id = $1`,
        [workspaceId]
      )
    ).rows[0]!
    const cap = capOf[workspace.plan] ?? null
    const counted =
      cap === null
        ? await client.query(
            `
        insert into ticket_usage (workspace_id, environment, month, count)
        values ($1, $2, $3, 1)
        on conflict (workspace_id, environment, month) do update set count = ticket_usage.count + 1
        
        returning count`,
            [workspaceId, environment, monthOf(at)]
          )
        : await client.query(
            `
        insert into ticket_usage (workspace_id, environment, month, count)
        values ($1, $2, $3, 1)
        on conflict (workspace_id, environment, month) do update set count = ticket_usage.count + 1
        where ticket_usage.count < $4
        returning count`,
            [workspaceId, environment, monthOf(at), cap]
          )
    if (counted.rows.length === 0) return await abort(402, "limit_reached")
    const row = (
      await client.query<TicketRow>(
        `
        insert into tickets (id, public_id, workspace_id, environment, agent_id, status, priority, origin,
          visitor_name, visitor_email, subject, assigned_to, tags, metadata, conversation_id, created_at, updated_at,
          resolved_at, first_response_at)
        values ($1::uuid, $2, $3, $4, $5,
          $6, $7, $8, $9, $10, $11,
          $12, $13::text::jsonb, $14::text::jsonb, $15, $16,
          $17, $18, $19)
        returning tickets.seq::text as seq, tickets.id::text as id, public_id, agent_id, status, priority, origin,
  visitor_name, visitor_email, subject, assigned_to, tags, metadata, conversation_id, created_at, updated_at,
  resolved_at, first_response_at, erased_at`,
        [
          ticketId,
          publicId,
          workspaceId,
          environment,
          input.agent_id,
          "open",
          "normal",
          "api",
          input.visitor_name,
          input.visitor_email,
          input.subject,
          null,
          "[]",
          "{}",
          null,
          at,
          at,
          null,
          null
        ]
      )
    ).rows[0]!
    const ticket = toTicket(row)
    const threadEvent = (type: string, to: string, actorType: string, actorId: string | null) =>
      client.query(
        `
        insert into ticket_events (id, ticket_id, type, from_value, to_value, actor_type, actor_id, created_at)
        values ($1, $2::uuid, $3, $4, $5, $6,
          $7, $8)`,
        [makeId("tev"), ticketId, type, null, to, actorType, actorId, at]
      )
    // a secret key without Service-Member-Id acts as `api`
    await threadEvent("created", "open", "api", key.id)
    let firstMessage: Record<string, unknown> | null = null
    if (input.body !== undefined) {
      const messageId = makeId("tmsg")
      await client.query(
        `
        insert into ticket_messages (id, ticket_id, author_type, author_id, body, created_at)
        values ($1, $2::uuid, $3, $4, $5, $6)`,
        [messageId, ticketId, "visitor", null, input.body, at]
      )
      await threadEvent("message_added", messageId, "visitor", null)
      firstMessage = {
        id: messageId,
        object: "ticket_message",
        ticket_public_id: publicId,
        author_type: "visitor",
        author_id: null,
        body: input.body,
        created_at: at.toISOString()
      }
    }

    // the outbox: the event, then one pending delivery per subscriber
    const eventAt = new Date()
    const eventId = makeId("evt")
    const event = {
      id: eventId,
      object: "event",
      type: "ticket.created",
      created: Math.floor(eventAt.getTime() / 1000),
      data: { ticket, first_message: firstMessage },
      workspace_id: workspaceId,
      api_version: "v1",
      livemode: environment === "live"
    }
    await client.query(
      `
        insert into events ("id","workspace_id","environment","type","created_at","body") VALUES ($1,$2,$3,$4,$5,$6)`,
      [eventId, workspaceId, environment, "ticket.created", eventAt, JSON.stringify(event)]
    )
    const subscribers = await client.query<{ id: string }>(
      `
        select id from webhook_subscriptions
        where workspace_id = $1 and environment = $2
          and is_active and deleted_at is null and $3 = any(events)`,
      [workspaceId, environment, "ticket.created"]
    )
    for (const s of subscribers.rows) {
      await client.query(
        `
        insert into webhook_deliveries ("id","subscription_id","workspace_id","environment","event_id","event_type","status","horizon_at","next_attempt_at","created_at") VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`,
        [
          makeId("whd"),
          s.id,
          workspaceId,
          environment,
          eventId,
          "ticket.created",
          "pending",
          new Date(eventAt.getTime() + horizonMillis),
          eventAt,
          eventAt
        ]
      )
    }

    // the owner's e-mail
    const emailAt = new Date()
    await client.query(
      `
        insert into emails ("id","workspace_id","to_address","subject","body_text","body_html","status","attempts","next_attempt_at","created_at") VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`,
      [
        makeId("eml"),
        workspaceId,
        workspace.owner_email,
        `New ticket ${publicId}: ${ticket.subject}`,
        [
          `A new ${ticket.priority}-priority ticket was opened (origin: api, environment: ${environment}).`,
          "",
          `Ticket: ${publicId}`,
          `Subject: ${ticket.subject}`,
          `Agent: ${ticket.agent_id}`
        ].join("\n"),
        null,
        "pending",
        0,
        emailAt,
        emailAt
      ]
    )
    await client.query("COMMIT")
    done = true
    return { _tag: "Created", ticket }
  } finally {
    if (done) client.release()
    else {
      // a failed statement: roll back, and drop the connection if even that fails
      await client.query("ROLLBACK").then(
        () => client.release(),
        (error: unknown) => client.release(error instanceof Error ? error : new Error(String(error)))
      )
    }
  }
}

const server = createServer((req, res) => {
  // same shape as the service's ids: prefix + 24 characters
  const requestId = makeId("req")
  if (req.method === "GET" && req.url === "/readyz") return send(res, 200, { status: "ready" }, requestId)
  if (req.method !== "POST" || req.url !== "/v1/tickets") return fail(res, 404, "route_not_found", requestId)
  const token = /^Bearer\s+(.*)$/i.exec(req.headers.authorization?.trim() ?? "")?.[1]?.trim()

  void (async () => {
    const text = await readBody(req)
    if (token === undefined || !wellFormedKey.test(token)) return fail(res, 401, "invalid_api_key", requestId)
    if (text === undefined) return fail(res, 413, "payload_too_large", requestId)
    const hash = createHash("sha256").update(token).digest("hex")
    const keys = await pool.query<KeyRow>(
      `
        select k.*, w.plan from api_keys k join workspaces w on w.id = k.workspace_id
        where k.key_hash = $1`,
      [hash]
    )
    const key = keys.rows[0]
    if (key === undefined || key.revoked_at !== null) return fail(res, 401, "invalid_api_key", requestId)
    if (key.kind !== "secret" || !key.scopes.split(" ").includes("write:tickets")) {
      return fail(res, 403, "key_scope_mismatch", requestId)
    }
    const input = parseInput(text)
    if (input === undefined) return fail(res, 400, "parameter_invalid", requestId)
    const outcome = await createTicket(key, input)
    if (outcome._tag === "Failed") return fail(res, outcome.status, outcome.code, requestId)
    send(res, 201, { data: outcome.ticket, meta: { request_id: requestId } }, requestId)
  })().catch(() => {
    if (!res.headersSent) fail(res, 500, "internal_error", requestId)
  })
})

server.listen(port, host)
const shutdown = () => server.close(() => void pool.end().then(() => process.exit(0)))
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)
