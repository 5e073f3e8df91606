/**
 * `POST /v1/tickets` throughput: the service on PostgreSQL and on PGlite
 * against a bare node:http + pg baseline (scripts/bench/tickets-baseline.ts)
 * running the same statements in one transaction on the same throwaway
 * database, in the same run. One server at a time; autocannon runs in this
 * process.
 *
 * Setup, per database: the service migrates it, then the admin CLI creates a
 * `pro` workspace (no monthly cap) and a secret key, and the API an agent.
 * The baseline uses the PostgreSQL service's workspace, key and agent.
 * Every target answers one probe first; the baseline's answer must have the
 * shape of the service's (ids and times masked), and on PostgreSQL the rows it
 * wrote must match the service's.
 *
 * After each autocannon run (warm-up, measured run) one single request waits
 * for the server to be done with the requests autocannon dropped when its time
 * was up: the service on PostgreSQL can stall for seconds there (`settle`).
 *
 * Afterwards, per target, the rows in the database against the 201s counted
 * (autocannon runs and single requests): no 201 may lack its ticket, and every
 * ticket has its message, its two thread events, its `ticket.created` event,
 * its e-mail and its count in `ticket_usage`. The dropped requests may still
 * commit (the baseline finishes them), so up to that many tickets beyond the
 * 201s are expected and reported. PGlite's database is read after the service
 * stopped, by PGlite in this process.
 */
import { randomBytes } from "node:crypto"
import { loadavg } from "node:os"
import { join } from "node:path"
import {
  autocannon,
  type AutocannonResult,
  type Child,
  connections,
  cpuMs,
  createAgent,
  fmt,
  noRateLimit,
  pg,
  proWorkspace,
  ratio,
  seconds,
  type Section,
  serviceEnv,
  spawnService,
  spawnTracked,
  stop,
  tempDir,
  throwawayDatabase,
  warmupSeconds,
  withServer
} from "./lib.js"

// autocannon as used here: POST with a body; the result also counts 2xx and requests sent
interface PostResult extends AutocannonResult {
  readonly "2xx": number
  readonly requests: AutocannonResult["requests"] & { readonly sent: number }
}
const post = autocannon as unknown as (options: {
  readonly url: string
  readonly connections: number
  readonly duration: number
  readonly method: "POST"
  readonly body: string
  readonly headers: Record<string, string>
}) => PromiseLike<PostResult>

const ticketBody = (agentId: string) =>
  JSON.stringify({
    agent_id: agentId,
    subject: "The widget does not load on our checkout page",
    body: "Since this morning the chat widget stays blank on /checkout; other pages are fine.",
    visitor_name: "Ada Lovelace",
    visitor_email: "ada@example.com"
  })

const load1 = () => loadavg()[0]!.toFixed(2)

// Loading

interface Measured {
  readonly result: PostResult
  /** Server CPU time per request of the measured run. */
  readonly cpuUsPerRequest: number
  /** 201s of the warm-up, the measured run and the two settling probes. */
  readonly created: number
  /** Requests sent but unanswered when autocannon stopped (warm-up and measured run). */
  readonly abandoned: number
  /** From each autocannon stop (warm-up, measured run) to the answer of the next single request. */
  readonly settleMs: readonly [number, number]
}

/**
 * A single `POST /v1/tickets` after autocannon stopped: it answers once the
 * server is done with the requests autocannon dropped. The service interrupts
 * those, and on PostgreSQL the interruption can hold the ticket counter's row
 * lock for seconds (see the report), which must not fall into the measured run.
 */
const settle = async (base: string, token: string, agentId: string): Promise<number> => {
  const started = performance.now()
  await probe(base, token, agentId, 30_000)
  return performance.now() - started
}

const load = async (base: string, token: string, agentId: string, server: Child): Promise<Measured> => {
  const options = {
    url: `${base}/v1/tickets`,
    connections,
    method: "POST",
    body: ticketBody(agentId),
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }
  } as const
  const warm = await post({ ...options, duration: warmupSeconds })
  const settledWarm = await settle(base, token, agentId)
  const cpuBefore = cpuMs(server.pid)
  const result = await post({ ...options, duration: seconds })
  const cpuUsPerRequest = ((cpuMs(server.pid) - cpuBefore) * 1000) / result.requests.total
  // and before the server is stopped, so that the counts afterwards are final
  const settledRun = await settle(base, token, agentId)
  for (const r of [warm, result]) {
    // a run with failures measures error paths, not the endpoint
    if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) {
      throw new Error(`${options.url}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`)
    }
  }
  const created = warm["2xx"] + result["2xx"] + 2
  const abandoned = warm.requests.sent - warm.requests.total + (result.requests.sent - result.requests.total)
  console.log(
    `    ${fmt(result.requests.average)} req/s, mean ${fmt(result.latency.mean, 2)} ms, p50 ${result.latency.p50} ms, ` +
      `p99 ${result.latency.p99} ms, ${fmt(cpuUsPerRequest)} µs CPU/req; ${created} × 201, ${abandoned} dropped in flight; ` +
      `next answer ${fmt(settledWarm)} ms after the warm-up, ${fmt(settledRun)} ms after the run`
  )
  return { result, cpuUsPerRequest, created, abandoned, settleMs: [settledWarm, settledRun] }
}

// HTTP and the admin CLI

/** One `POST /v1/tickets`; its body text and the ticket's public id. */
const probe = async (base: string, token: string, agentId: string, timeoutMs = 5_000) => {
  const res = await fetch(`${base}/v1/tickets`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: ticketBody(agentId),
    signal: AbortSignal.timeout(timeoutMs)
  })
  const text = await res.text()
  if (res.status !== 201) throw new Error(`POST ${base}/v1/tickets: ${res.status} ${text}`)
  return { text, publicId: (JSON.parse(text) as { readonly data: { readonly public_id: string } }).data.public_id }
}

interface Tenant {
  readonly workspaceId: string
  readonly token: string
  readonly agentId: string
}

/** A `pro` workspace and a secret key through the admin CLI, then an agent through the API. */
const setUp = async (base: string, adminToken: string): Promise<Tenant> => {
  const { workspaceId, token } = await proWorkspace(base, adminToken, "Tickets bench")
  return { workspaceId, token, agentId: await createAgent(base, token) }
}

// Comparing answers and rows: ids and times differ between any two tickets

const randomIds = /\b(tck|tmsg|tev|evt|eml|whd|req|agt)_[0-9A-Za-z]{24}\b/g
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const isoTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

/** JSON text with generated ids, UUIDs, timestamps and `created` (unix seconds) masked. */
const masked = (value: unknown): string =>
  JSON.stringify(value, (key, v: unknown) => {
    if (typeof v === "string") {
      if (uuid.test(v)) return "<uuid>"
      if (isoTime.test(v)) return "<time>"
      return v.replace(randomIds, "$1_<id>")
    }
    return key === "created" && typeof v === "number" ? "<unix>" : v
  })

// Rows in the database

interface Queryable {
  query<R>(text: string, values?: ReadonlyArray<unknown>): Promise<{ readonly rows: Array<R> }>
}

interface Counts {
  readonly tickets: number
  readonly messages: number
  readonly thread: number
  readonly events: number
  readonly emails: number
  readonly emails_sent: number
  readonly usage: number
  /** Tickets without exactly one message and two thread events. */
  readonly incomplete: number
}

const countsOf = async (db: Queryable, workspaceId: string): Promise<Counts> => {
  const rows = await db.query<Counts>(
    `select
       (select count(*)::int from tickets where workspace_id = $1) as tickets,
       (select count(*)::int from ticket_messages m join tickets t on t.id = m.ticket_id where t.workspace_id = $1) as messages,
       (select count(*)::int from ticket_events e join tickets t on t.id = e.ticket_id where t.workspace_id = $1) as thread,
       (select count(*)::int from events where workspace_id = $1 and type = 'ticket.created') as events,
       (select count(*)::int from emails where workspace_id = $1) as emails,
       (select count(*)::int from emails where workspace_id = $1 and status = 'sent') as emails_sent,
       (select coalesce(sum(count), 0)::int from ticket_usage where workspace_id = $1) as usage,
       (select count(*)::int from tickets t where t.workspace_id = $1 and (
          (select count(*) from ticket_messages m where m.ticket_id = t.id) <> 1 or
          (select count(*) from ticket_events e where e.ticket_id = t.id) <> 2)) as incomplete`,
    [workspaceId]
  )
  return rows.rows[0]!
}

/** What one probe ticket wrote, masked: the ticket, its thread, its event and its e-mail. */
const writesOf = async (db: Queryable, publicId: string): Promise<string> => {
  const rows = await db.query<Record<string, unknown>>(
    `select t.public_id, t.agent_id, t.status, t.priority, t.origin, t.visitor_name, t.visitor_email, t.subject,
       t.assigned_to, t.tags, t.metadata, t.conversation_id, t.created_at = t.updated_at as same_times,
       t.resolved_at, t.first_response_at, t.erased_at,
       (select json_agg(json_build_object('id', m.id, 'author_type', m.author_type, 'author_id', m.author_id,
          'body', m.body, 'at_creation', m.created_at = t.created_at) order by m.seq)
        from ticket_messages m where m.ticket_id = t.id) as messages,
       (select json_agg(json_build_object('id', e.id, 'type', e.type, 'from', e.from_value, 'to', e.to_value,
          'actor_type', e.actor_type, 'actor_id', e.actor_id, 'at_creation', e.created_at = t.created_at) order by e.seq)
        from ticket_events e where e.ticket_id = t.id) as thread,
       (select json_agg(v.body::json) from events v
        where v.workspace_id = t.workspace_id and v.type = 'ticket.created' and strpos(v.body, t.public_id) > 0) as events,
       (select json_agg(json_build_object('id', m.id, 'to', m.to_address, 'subject', m.subject, 'text', m.body_text,
          'html', m.body_html, 'due_at_creation', m.next_attempt_at = m.created_at))
        from emails m where m.workspace_id = t.workspace_id and strpos(m.subject, t.public_id) > 0) as emails,
       (select count(*)::int from webhook_deliveries d join events v on v.id = d.event_id
        where strpos(v.body, t.public_id) > 0) as deliveries
     from tickets t where t.public_id = $1`,
    [publicId]
  )
  if (rows.rows.length !== 1) throw new Error(`probe ticket ${publicId} not found`)
  return masked(rows.rows[0])
}

interface Integrity {
  readonly created: number
  readonly written: number
  readonly abandoned: number
  readonly emailsSent: number
  /** Empty when every check passed. */
  readonly problems: ReadonlyArray<string>
}

const checkIntegrity = (before: Counts, after: Counts, run: Measured): Integrity => {
  const d = (k: keyof Counts) => after[k] - before[k]
  const written = d("tickets")
  const problems: Array<string> = []
  if (written < run.created) problems.push(`${run.created - written} of the 201s have no ticket`)
  if (written > run.created + run.abandoned) {
    problems.push(`${written - run.created} tickets beyond the 201s, more than the ${run.abandoned} requests in flight`)
  }
  for (const k of ["messages", "events", "emails", "usage"] as const) {
    if (d(k) !== written) problems.push(`${d(k)} new ${k} for ${written} new tickets`)
  }
  if (d("thread") !== 2 * written) problems.push(`${d("thread")} new thread events for ${written} new tickets`)
  if (after.incomplete !== 0) problems.push(`${after.incomplete} tickets without exactly one message and two thread events`)
  return { created: run.created, written, abandoned: run.abandoned, emailsSent: d("emails_sent"), problems }
}

const withPg = async <A>(url: string, body: (db: Queryable) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await body(client)
  } finally {
    await client.end()
  }
}

/** Opens the PGlite database the service left under DATA_DIR (it must be stopped), in this process. */
const withPglite = async <A>(dataDir: string, body: (db: Queryable) => Promise<A>): Promise<A> => {
  const { PGlite } = await import("@electric-sql/pglite")
  // where src/main.ts puts it
  const db = await PGlite.create({ dataDir: join(dataDir, "pglite") })
  try {
    return await body({
      query: async <R>(text: string, values?: ReadonlyArray<unknown>) => ({
        rows: (await db.query<R>(text, values === undefined ? [] : [...values])).rows
      })
    })
  } finally {
    await db.close()
  }
}

// The benchmark

interface Target extends Measured {
  readonly label: string
  readonly integrity: Integrity
  readonly load: string
}

export const tickets = async (): Promise<Section> => {
  const databaseUrl = await throwawayDatabase()
  const adminToken = randomBytes(24).toString("hex")
  const failed: Array<string> = []
  const record = (label: string, run: Measured, integrity: Integrity, load: string): Target => {
    if (integrity.problems.length > 0) failed.push(`${label}: ${integrity.problems.join("; ")}`)
    console.log(
      `    rows: ${integrity.written} tickets for ${integrity.created} × 201 ` +
        `(${integrity.written - integrity.created} committed after autocannon dropped the request); ` +
        (integrity.problems.length === 0 ? "consistent" : `PROBLEMS: ${integrity.problems.join("; ")}`)
    )
    return { label, ...run, integrity, load }
  }

  console.log("  service on PostgreSQL")
  const pgService = (port: number) =>
    spawnService(serviceEnv({ PORT: String(port), DATABASE_URL: databaseUrl, ADMIN_TOKEN: adminToken, ...noRateLimit }))
  const { tenant, expected, servicePublicId, onPg } = await withServer(pgService, async (base, child) => {
    const tenant = await setUp(base, adminToken)
    const first = await probe(base, tenant.token, tenant.agentId)
    const before = await withPg(databaseUrl, (db) => countsOf(db, tenant.workspaceId))
    const load = load1()
    const run = await loadRun(base, tenant, child)
    await stop(child)
    const after = await withPg(databaseUrl, (db) => countsOf(db, tenant.workspaceId))
    const onPg = record("service on PostgreSQL", run, checkIntegrity(before, after, run), load)
    return { tenant, expected: masked(JSON.parse(first.text)), servicePublicId: first.publicId, onPg }
  })

  console.log("  baseline node:http + pg")
  const baseline = (port: number) =>
    spawnTracked(process.execPath, ["--import", "tsx", "scripts/bench/tickets-baseline.ts"], {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl
    })
  const bare = await withServer(baseline, async (base, child) => {
    // the baseline must answer what the service answers, and write what it writes
    const first = await probe(base, tenant.token, tenant.agentId)
    const got = masked(JSON.parse(first.text))
    if (got !== expected) throw new Error(`baseline body differs:\n  service  ${expected}\n  baseline ${got}`)
    const [serviceWrites, baselineWrites] = await withPg(databaseUrl, async (db) => [
      await writesOf(db, servicePublicId),
      await writesOf(db, first.publicId)
    ])
    if (serviceWrites !== baselineWrites) {
      throw new Error(`baseline rows differ:\n  service  ${serviceWrites}\n  baseline ${baselineWrites}`)
    }
    const before = await withPg(databaseUrl, (db) => countsOf(db, tenant.workspaceId))
    const load = load1()
    const run = await loadRun(base, tenant, child)
    await stop(child)
    const after = await withPg(databaseUrl, (db) => countsOf(db, tenant.workspaceId))
    return record("baseline node:http + pg", run, checkIntegrity(before, after, run), load)
  })

  console.log("  service on PGlite")
  const dataDir = await tempDir("tickets")
  const pgliteService = (port: number) =>
    spawnService(serviceEnv({ PORT: String(port), DATA_DIR: dataDir, ADMIN_TOKEN: adminToken, ...noRateLimit }))
  // set up, stop so this process can read the counts, start again and load
  const pgliteTenant = await withServer(pgliteService, async (base) => {
    const t = await setUp(base, adminToken)
    const first = await probe(base, t.token, t.agentId)
    const got = masked(JSON.parse(first.text))
    if (got !== expected) throw new Error(`PGlite body differs from PostgreSQL's:\n  ${expected}\n  ${got}`)
    return t
  })
  const pgliteBefore = await withPglite(dataDir, (db) => countsOf(db, pgliteTenant.workspaceId))
  const pgliteRun = await withServer(pgliteService, async (base, child) => {
    const load = load1()
    return { run: await loadRun(base, pgliteTenant, child), load }
  })
  const pgliteAfter = await withPglite(dataDir, (db) => countsOf(db, pgliteTenant.workspaceId))
  const onPglite = record(
    "service on PGlite",
    pgliteRun.run,
    checkIntegrity(pgliteBefore, pgliteAfter, pgliteRun.run),
    pgliteRun.load
  )

  if (failed.length > 0) {
    console.error(`\nrow checks failed:\n  ${failed.join("\n  ")}`)
    process.exitCode = 1
  }

  // baseline first: the ratios are against it
  const targets: ReadonlyArray<Target> = [bare, onPg, onPglite]
  return {
    title: `POST /v1/tickets (${connections} connections, ${seconds} s after ${warmupSeconds} s warm-up, one server at a time, \`pro\` plan)`,
    lines: [
      // autocannon's percentiles are whole milliseconds; the mean is finer
      "| target | tickets/s | mean ms | p50 ms | p99 ms | server CPU µs/req | tickets/s vs baseline | CPU/req vs baseline | load avg at start |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
      ...targets.map(
        ({ label, result: r, cpuUsPerRequest: cpu, load }) =>
          `| ${label} | ${fmt(r.requests.average)} | ${fmt(r.latency.mean, 2)} | ${r.latency.p50} | ${r.latency.p99} | ` +
          `${fmt(cpu)} | ${ratio(r.requests.average, bare.result.requests.average)} | ${ratio(cpu, bare.cpuUsPerRequest)} | ${load} |`
      ),
      "",
      "Rows written by the warm-up, the measured run and one single request after each (autocannon drops the requests " +
        "in flight when its time is up; they may still commit). Next answer: from autocannon's stop to the answer of " +
        "that single request, after the warm-up / after the run.",
      "",
      "| target | 201s | tickets written | dropped in flight | committed after the drop | rows per ticket | next answer ms | e-mails the service sent meanwhile |",
      "|---|---:|---:|---:|---:|---|---:|---:|",
      ...targets.map(
        ({ label, integrity: i, settleMs }) =>
          `| ${label} | ${i.created} | ${i.written} | ${i.abandoned} | ${i.written - i.created} | ` +
          `${i.problems.length === 0 ? "ok" : `**${i.problems.join("; ")}**`} | ${settleMs.map((ms) => fmt(ms)).join(" / ")} | ` +
          `${label.startsWith("baseline") ? "–" : i.emailsSent} |`
      )
    ]
  }
}

/** Loads `POST /v1/tickets` with the tenant's key and agent. */
const loadRun = (base: string, tenant: Tenant, child: Child) => load(base, tenant.token, tenant.agentId, child)
