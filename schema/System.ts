/** Liveness, readiness and the OpenAPI document: no key needed. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { ApiError, ServiceUnavailable } from "./Errors.js"

export const Health = Schema.Struct({ status: Schema.Literal("ok") })

export const Readiness = Schema.Struct({
  status: Schema.Literal("ready"),
  database: Schema.Literal("pglite", "postgres"),
  migrations: Schema.Literal("applied")
})

/** The reference of this group, in Markdown: its tag's description in the OpenAPI document and on `/docs`. */
const systemReference = [
  "Operational endpoints: liveness and readiness for probes (not enveloped, not rate limited), this",
  "document, and, beside the API, `GET /metrics` (Prometheus text; loopback callers only, or `Authorization: Bearer",
  "<METRICS_TOKEN>`), `GET /docs` (this reference, Scalar, served locally) and `GET /docs/errors` (every error code).",
  "",
  "### Observability",
  "",
  "**Logs** are JSON lines on stdout, one object per line: `time` (ISO 8601), `level`, `msg`, then the fields of",
  "the line. Every answered request writes one `info` line:",
  "",
  "```json",
  "{\"time\":\"2026-11-23T05:00:00.000Z\",\"level\":\"info\",\"msg\":\"request\",\"request_id\":\"req_…\",\"method\":\"GET\",\"route\":\"/v1/agents/{id}\",\"status\":200,\"duration_ms\":1.84}",
  "```",
  "",
  "`route` is the endpoint's template, never the raw path (ids stay out of logs and metric labels); a path no",
  "endpoint has is `unmatched`. `duration_ms` runs from the request's arrival to its response's start (for an event stream, the",
  "stream's opening, not its end). Lines the service writes while serving a request (a defect's `cause`, say) carry",
  "its `request_id` too. `LOG_LEVEL=warning` drops the request lines; `none` silences everything. Lines are",
  "written together, at most 100 ms after the first of them (each write to a pipe also wakes its reader), and",
  "whatever is still buffered when the process exits is written then.",
  "",
  "What is never logged: API keys, the metrics and admin tokens, `Authorization` / `Service-Api-Key` / `x-api-key`",
  "headers, identity tokens, webhook and identity secrets, e-mail addresses and other personal data. The request",
  "line holds only the fields above (no path, query, header or body). As a second guard every line passes a",
  "redaction before it is written: anything shaped like a key keeps only its visible prefix (`sk_test_[redacted]`),",
  "`whsec_`/`idsec_` secrets, bearer values and JSON Web Tokens are masked, and e-mail addresses become",
  "`[redacted-email]` (so with `SMTP_URL` unset, the logged e-mails show their text without the addresses).",
  "Lines are written once per turn of the event loop (a pipe write per request cost more than the request).",
  "",
  "**Metrics**: `GET /metrics` answers in the Prometheus text format (0.0.4). With `METRICS_TOKEN` set it asks",
  "for `Authorization: Bearer <METRICS_TOKEN>` (`401 missing_authorization` / `invalid_api_key` otherwise);",
  "unset, it answers callers on the loopback address only (a scraper or sidecar on the same host) and is a",
  "`404 route_not_found` to anyone else. Like `/healthz` it takes no API key and no rate-limit token.",
  "",
  "| Metric | Type | Labels | What |",
  "|---|---|---|---|",
  "| `http_requests_total` | counter | `route`, `method`, `status` | answered requests (route as in the logs) |",
  "| `http_request_duration_seconds` | histogram | `route`, `method`, `status` | arrival to response; buckets 1 ms to 10 s |",
  "| `webhook_deliveries_total` | counter | `outcome`: `succeeded`, `retrying`, `failed` | webhook attempts by this process |",
  "| `webhook_deliveries_due` | gauge | | pending deliveries whose next attempt is due now (all instances) |",
  "| `jobs_attempts_failed_total` | counter | `queue` | background job attempts whose handler failed or died (see Scaling, below) |",
  "| `jobs_failed_total` | counter | `queue` | background jobs failed for good (attempts used up, or failed by their handler) |",
  "| `ingestion_jobs` | gauge | `state`: `pending`, `processing`, `indexed`, `failed` | knowledge sources by ingestion state |",
  "| `emails_pending` | gauge | | e-mails waiting to be sent |",
  "| `sse_open_streams` | gauge | | event-stream replies this process holds open |",
  "",
  "Counters and the histogram are this process's (Effect `Metric`s; sum them over instances); the database",
  "gauges are counted at scrape time by three index-backed queries, so every instance reports the same value.",
  "",
  "```sh",
  "curl -s http://127.0.0.1:3000/metrics | grep '^http_requests_total'",
  "```",
  "",
  "**Traces.** With `OTEL_EXPORTER_OTLP_ENDPOINT` set, the spans Effect makes are exported in batches (every",
  "second) through `@effect/opentelemetry` and the OTLP/HTTP exporter: one `http.server <METHOD>` span per request",
  "with `http.route` (the template, `/v1/agents/:id`), status and the request's headers (`Authorization`,",
  "`x-api-key`, `Service-Api-Key`, `Idempotency-Key` and cookies as `<redacted>`), the programs named with",
  "`traced` (`Agents.retrieve`, `Tickets.retrieve`, …, `src/Traced.ts`: `Effect.fn` with its span only while",
  "tracing is on) and the SQL statements under them. The service's resource name is `assistant-platform`. Unset,",
  "`main.ts` never imports the tracing module, and no span is made at all: Effect's tracer is disabled (SQL spans",
  "become no-ops), the named programs run without one, and the per-request HTTP span is skipped, since nothing",
  "would read them.",
  "",
  "```sh",
  "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npm start",
  "```",
  "",
  "**API key cache.** An active key is looked up in the database once per `API_KEY_CACHE_SECONDS` (default 5)",
  "per process, not on every request. Revoking a key through the API or the CLI empties the cache of the process",
  "that served it at once; another instance refuses the key at most 5 seconds later. A workspace's plan change",
  "reaches requests within the same bound. Unknown and revoked keys are never cached. A hit is a plain map read",
  "(at most 10,000 keys, the oldest stored go first); a lookup that began before a revocation in this process does",
  "not store what it read.",
  "",
  "### E-mail",
  "",
  "E-mails (the owner's notices) are written to an `emails` table in the same transaction as the change that",
  "causes them, and a background sender delivers them through the `Mailer` layer: SMTP via nodemailer when",
  "`SMTP_URL` is set, else the log. A failed send is retried (1 min, 5 min, 15 min, 1 h, 3 h, 6 h) and marked",
  "`failed` after 7 attempts; a sender that crashes mid-send leaves a lease that lapses after 60 seconds.",
  "",
  "### Scaling",
  "",
  "Run several instances of the same binary against one PostgreSQL (`DATABASE_URL`) behind a load balancer, with",
  "`REDIS_URL` so rate limits are shared. Migrations run on start and are safe when instances start together",
  "(one migrates, the others wait for it). The first-start bootstrap happens once. Background work — the webhook",
  "dispatcher, the e-mail sender, the idempotency sweeper, the Q&A regeneration worker, ingestion — runs as",
  "supervised fibers in every instance. The e-mail sender, the webhook dispatcher (queue `webhooks`, keyed by",
  "subscription, 8 in flight per subscription), ingestion (queue `ingest`, keyed by agent, so one agent's",
  "sources run one at a time across instances) and Q&A regeneration (queue `qa-regenerate`, keyed by agent) are",
  "workers of the JobQueue (`layers/JobQueue.ts`, the `jobs` table): they claim with `FOR UPDATE SKIP LOCKED` and",
  "a lease (extended while a job runs and handed back on shutdown), so instances share the work and work held by",
  "a crashed instance is taken over when its lease lapses. JobQueue jobs with a key run one at a time in creation",
  "order (or a capped number at once), across instances. A claim walks the distinct keys and, per key, only the",
  "jobs it takes (indexes of migration 0008), so its cost does not grow with the backlog; a worker claims for all",
  "the slots freed since its last claim in one claim: woken while other jobs still run, it first waits for them to",
  "end, at most 3 ms, so that they share the claim. It reads the next due time only after a claim that found",
  "nothing. Ticket and reply caps are counted in one row per workspace, environment",
  "and month, so they hold across instances. Embedded PGlite is one process by nature: use PostgreSQL to scale",
  "out.",
  "",
  "Background workers (webhook dispatch, e-mail, ingestion, Q&A regeneration, idle conversations, sweeps) start",
  "500 ms after the port opens, so the first readiness checks are answered at once; work queued meanwhile is picked",
  "up when they start.",
  "",
  "**When background work fails.** A JobQueue job whose handler fails or dies (a thrown error, a bug, the database",
  "away) is an attempt like any other: counted in the job's `attempts`, its cause kept short in `last_error`, one",
  "error line logged (job id, queue, key, cause), `jobs_attempts_failed_total{queue}` counted, and retried after",
  "5 s, 15 s, 45 s, ... (at most 1 h). At the queue's last attempt (`WorkerOptions.maxAttempts`, default 5; every",
  "attempt counts, also the retries a handler schedules itself) it is given up: the queue's owner records the",
  "failure where people see it (`onGiveUp`), the job is settled `failed` (`jobs_failed_total{queue}`) and the next",
  "job of its key runs, so one broken job never holds its key for ever. What a person sees: a knowledge or lesson",
  "source shows `internal_error` with `next_attempt_at` while it waits, then `failed` with `internal_error` and",
  "its `failed` event (5 attempts); an e-mail becomes `failed` (its own 7 attempts); Q&A regeneration (4 attempts)",
  "and idle-conversation timers (100, since each look at a conversation still in use counts) leave the log line and",
  "the counters; webhook deliveries keep their own schedule and record (the job's bound is 20). If the failure cannot",
  "be recorded (the database away), the job runs again after the backoff rather than failing unseen.",
  "",
  "### Graceful shutdown",
  "",
  "On SIGTERM or SIGINT an instance, in this order (`src/http/Drain.ts`, wired in `src/Server.ts`):",
  "",
  "1. closes its listeners: new connections are refused at once, idle kept-alive ones are closed, and `/readyz`",
  "   answers `503 service_unavailable` (\"The service is shutting down\") to anyone still connected;",
  "2. stops its background workers: the jobs they held (webhook deliveries with their own lease, ingestion, e-mail,",
  "   Q&A regeneration) are handed back at once, so another instance takes them on its next poll (`*_POLL_MS`)",
  "   instead of after the lease, and so are the delivery leases their claims took, also for jobs claimed a moment",
  "   before the stop whose handlers never started; a delivery whose POST was under way may then be sent again (at-least-once), but",
  "   one whose receiver already answered 2xx is recorded first (its job waits the few milliseconds of that write);",
  "3. lets requests in flight finish, event streams included, for at most `SHUTDOWN_GRACE_MS` (their responses",
  "   carry `Connection: close`); what is still open then is cut. An event stream still open first receives a",
  "   last event without an `id:`, `{\"type\":\"error\",\"code\":\"service_unavailable\",\"message\":\"The server is shutting",
  "   down; reconnect with Last-Event-ID to resume the stream\"}`, so its client reconnects (to another instance)",
  "   with the `Last-Event-ID` of the last event it had. The reply itself is stopped as the instance closes, and",
  "   the resumed stream ends with its `error` event;",
  "4. closes the database and exits with status 0.",
  "",
  "A second signal during the drain stops the process at once. A SIGKILL (or a crash) hands nothing back: leases",
  "lapse (30 s for webhook deliveries, `INGEST_LEASE_MS` for ingestion, 60 s otherwise) and the work is taken over",
  "then. Tested in `test/ops/shutdown.test.ts` (the real process: a slow request completes after SIGTERM while new",
  "connections are refused; a request past the grace is cut and the process exits 0; a second process on the same",
  "PostgreSQL takes a held ingestion job within a second of the SIGTERM, not after its 60 s lease) and",
  "`test/ops/scaleout.test.ts` (two processes on one PostgreSQL: 2,000 events each delivered exactly once while",
  "the receiver is healthy; SIGTERM on one while both hold deliveries: the held events arrive through the other",
  "within seconds)."
].join("\n")

export class SystemGroup extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("health", "/healthz")
      .addSuccess(Health)
      .annotate(OpenApi.Description, "`{\"status\":\"ok\"}` while the process answers")
      .annotate(OpenApi.Summary, "Liveness: the process answers")
  )
  .add(
    HttpApiEndpoint.get("ready", "/readyz")
      .addSuccess(Readiness)
      .addError(ApiError(ServiceUnavailable))
      .annotate(
        OpenApi.Description,
        "`200` when the database answers and every migration is applied, else `503 service_unavailable`"
      )
      .annotate(OpenApi.Summary, "Readiness: the database answers and every migration is applied")
  )
  .add(
    HttpApiEndpoint.get("openapi", "/v1/openapi.json")
      .addSuccess(Schema.Unknown)
      .annotate(OpenApi.Description, "OpenAPI 3.1")
      .annotate(OpenApi.Summary, "This document")
  )
  .annotate(OpenApi.Description, systemReference)
  .annotate(OpenApi.Title, "System") {}
