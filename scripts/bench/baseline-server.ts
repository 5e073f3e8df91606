/**
 * Baseline for `GET /v1/agents/{id}`: bare node:http + a pg Pool doing the same
 * work as the service's happy path, and nothing else: the API key lookup by
 * SHA-256 joined to workspaces (src/auth/ApiKeys.ts), then the agent by
 * id/workspace/environment (src/agents/AgentsRepo.ts), in the same envelope.
 * Run as a child: `node --import tsx scripts/bench/baseline-server.ts` with
 * PORT and DATABASE_URL.
 */
import { createHash, randomBytes } from "node:crypto"
import { createServer } from "node:http"
import { fail, pool, port, send, wellFormedKey } from "./baseline-http.js"
import { host } from "./lib.js"


const agentPath = /^\/v1\/agents\/([^/?]+)$/

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
  readonly created_at: Date
  readonly updated_at: Date
}


const server = createServer((req, res) => {
  // same shape as the service's ids: prefix + 24 characters
  const requestId = `req_${randomBytes(18).toString("base64url")}`
  const match = agentPath.exec(req.url ?? "")
  if (req.method === "GET" && req.url === "/readyz") return send(res, 200, { status: "ready" }, requestId)
  if (req.method !== "GET" || match === null) return fail(res, 404, "route_not_found", requestId)
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
    const agents = await pool.query<AgentRow>(
      `select seq::text as seq, id, type, name, slug, instructions, welcome_message, allowed_origins, created_at, updated_at
       from agents where id = $1 and workspace_id = $2 and environment = $3 and deleted_at is null`,
      [match[1], key.workspace_id, key.environment]
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
