/**
 * The public contract: every group composed into one `HttpApi`. It is the single
 * source of the route table, the OpenAPI document and the typed client.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { AgentsGroup } from "./Agents.js"
import {
  ApiError,
  InternalError,
  InvalidIdempotencyKey,
  IdempotencyKeyMismatch,
  IdempotencyRequestInProgress,
  MethodNotAllowed,
  ParameterInvalid,
  ParameterMissing,
  PayloadTooLarge,
  RateLimited,
  RouteNotFound,
  ServiceUnavailable,
  UnsupportedMediaType
} from "./Errors.js"
import { ConversationsGroup } from "./Conversations.js"
import { FormsGroup, FormsPublicGroup } from "./Forms.js"
import { GlossaryGroup } from "./Glossary.js"
import { QaGroup } from "./Qa.js"
import { FilesGroup } from "./Files.js"
import { KeysGroup } from "./Keys.js"
import { KnowledgeGroup } from "./Knowledge.js"
import { CrawlsGroup } from "./Crawls.js"
import { LeadsGroup } from "./Leads.js"
import { completeDocument } from "./OpenApiDocument.js"
import { SystemGroup } from "./System.js"
import { TicketsGroup } from "./Tickets.js"
import { TrainingGroup } from "./Training.js"
import { UsageGroup } from "./Usage.js"
import { WebhooksGroup } from "./Webhooks.js"
import { WidgetGroup } from "./Widget.js"

/**
 * The library's own decode-error schema is replaced on the wire by our envelope
 * (`parameter_invalid` / `parameter_missing`), so the document drops it too.
 */
const dropLibraryDecodeError = (spec: Record<string, any>): Record<string, any> => {
  const isLibraryRef = (s: unknown) =>
    typeof s === "object" && s !== null && (s as { $ref?: string }).$ref === "#/components/schemas/HttpApiDecodeError"
  for (const item of Object.values<Record<string, any>>(spec.paths ?? {})) {
    for (const op of Object.values<Record<string, any>>(item)) {
      const schema = op?.responses?.["400"]?.content?.["application/json"]?.schema
      if (schema?.anyOf) schema.anyOf = schema.anyOf.filter((s: unknown) => !isLibraryRef(s))
      else if (isLibraryRef(schema)) delete op.responses["400"]
    }
  }
  delete spec.components?.schemas?.HttpApiDecodeError
  return spec
}

/** The conventions every endpoint follows, in Markdown: the document's description, at the top of `/docs`. */
const apiReference = [
  "Configurable AI assistants: agents, knowledge, conversations, leads, tickets, webhooks and forms.",
  "",
  "Base path `/v1`. Request bodies are JSON: `Content-Type: application/json` or any `+json` type",
  "(`application/merge-patch+json`, …), with or without `charset`; anything else is `415 unsupported_media_type`.",
  "The machine-readable contract is `GET /v1/openapi.json`, generated from the same schemas the server decodes",
  "with, so it cannot drift. Each operation names the scope it needs in the `x-scopes` extension (an empty list:",
  "any key), and the widget scope that also admits a widget key in `x-widget-scopes`; the document also lists the",
  "`Idempotency-Key` request header of every `POST` and the response headers below.",
  "",
  "### Input policy",
  "",
  "One policy at the edge, for every endpoint, before any handler runs; each refusal names the offending `param`:",
  "",
  "- Bodies are at most 2 MB, counted while they stream in (with or without `Content-Length`, chunked too):",
  "  `413 payload_too_large`, in the error envelope. A refusal given before the whole body has arrived (too",
  "  large; an upload's bytes refused before they are read, say for a wrong key) is sent at once with",
  "  `Connection: close`; the rest of the body is then read and dropped",
  "  (for up to 30 s, 5 s without a byte, and 32 MB) before the connection closes, so a client still writing its",
  "  body receives the answer instead of a reset.",
  "- JSON nests at most 32 levels (checked before decoding): deeper is `400 parameter_invalid`.",
  "- No string may contain the NUL character (U+0000): bodies (values and field names), query values and path",
  "  segments; `400 parameter_invalid` with `param` (`metadata.note[1]`, `tag`, `path`).",
  "- No string may contain a lone UTF-16 surrogate either: a JSON escape `\\ud800`–`\\udfff` that is not half of a",
  "  pair (`\"a\\ud800b\"`, a reversed pair) is no Unicode text, in any value or field name at any depth, so it is",
  "  `400 parameter_invalid` with `param` (`tags[1]`, `metadata.page`; a field name is written with its escape,",
  "  `metadata.k\\ud800`), never stored. A pair (`\"\\ud83e\\udd84\"`) is its character. Bytes that are not UTF-8",
  "  are not escapes: they read as U+FFFD, like any decoder; and a query or path cannot carry a lone surrogate",
  "  (percent-encoding is UTF-8).",
  "- Numbers must survive a round trip: `1e999` (not finite) and integer literals past ±(2^53 − 1) are",
  "  `400 parameter_invalid`, instead of being stored as something else.",
  "- A path segment with bad percent-encoding is `400 parameter_invalid` (`param: \"path\"`); an id that cannot exist",
  "  (too long for the router) is `404 resource_missing`. `405` only ever means the path exists and the method",
  "  does not.",
  "- `POST`s without a body (resolve, reopen, test, retry, rotate_secret) accept no body or `{}`; anything else",
  "  is `400 parameter_invalid` (`param: \"body\"`).",
  "- Decode errors say what was expected in words (\"expected one of 'support', 'training'\", \"expected an",
  "  object\") and quote the input only as a short excerpt.",
  "- Node's own refusals answer in the envelope too: headers over 16 KB are `431 header_too_large`, bytes not",
  "  allowed in a header `400 parameter_invalid`, bytes that are not HTTP/1.1 at all `400 parameter_invalid`; the",
  "  connection is closed after the refusal. Requests that came before the bad bytes on the same connection",
  "  (pipelined, or in the same write) were carried out, so each gets its own answer first, in order.",
  "- `CONNECT` (a tunnel, which the service never opens) is answered like any method a path does not serve:",
  "  `405 method_not_allowed` with `Allow` on a path of the API, `404 route_not_found` on any other target",
  "  (`host:443`); the connection is closed after it.",
  "- `Expect: 100-continue` is met (the interim `100 Continue`, then the request runs as usual). Any other",
  "  expectation (`Expect: 200-ok`) is `417 expectation_failed`, in the envelope with its `Request-Id`, and the",
  "  request is not processed, whatever its method: HTTP defines no other expectation, and a client that states one",
  "  relies on something the service cannot promise, so a write is refused rather than done silently. Drop the",
  "  header (most HTTP clients never send one) and retry.",
  "- A request that arrives while the service is starting (the port is open, the API not yet attached) is",
  "  answered at once with `503 service_unavailable` and `Retry-After: 1`, never held.",
  "",
  "### Authentication",
  "",
  "Send a secret key as `Authorization: Bearer sk_test_…`. The legacy header `x-api-key: sk_test_…` works the",
  "same for all of v1. An `Authorization` header in another scheme (`Basic …`, or the bare key) is",
  "`401 invalid_api_key`: the `Bearer` scheme is required.",
  "",
  "| Key | Environment | Works on |",
  "|---|---|---|",
  "| `sk_test_…` | sandbox (`test`) | the whole API, within its scopes |",
  "| `sk_live_…` | production (`live`) | the whole API, within its scopes; consumes plan credit |",
  "| `widget_pk_test_…` / `widget_pk_live_…` | as named | only the widget surface (scopes `widget:tickets`, `widget:chat`); elsewhere `403 key_scope_mismatch` |",
  "| `pk_test_…` / `pk_live_…` | as named | only the two form endpoints, sent as `Service-Api-Key`; elsewhere `403 key_scope_mismatch` |",
  "",
  "- Every object belongs to one workspace and one environment. A sandbox key never sees live data and vice",
  "  versa: another environment's id answers `404 resource_missing`, exactly like an id that does not exist.",
  "- Keys are stored as SHA-256 hashes; the full value is shown once, at creation. A lost key is revoked and",
  "  replaced. Rotate keys at least every 90 days.",
  "- Secret keys carry scopes: `read:` and `write:` on `agents`, `knowledge`, `conversations`, `leads`,",
  "  `tickets`, `webhooks`, `files`, `forms`, plus `read:usage`. A new key gets all of them unless narrowed",
  "  (`--scope` in the CLI). Each endpoint declares the scope it needs (it is in the OpenAPI document); a key",
  "  without it gets `403 key_scope_mismatch`.",
  "",
  "### Responses",
  "",
  "Success: `{\"data\": …, \"meta\": {\"request_id\": \"req_…\"}}`. Lists put an array in `data` and add",
  "`meta.pagination = {\"has_more\": bool, \"next_cursor\": string | null}`. Every response, errors included,",
  "carries the request id in the `Request-Id` header as well; quote it when reporting a problem.",
  "",
  "Status codes: `201` for a creation, `200` otherwise. A delete answers `200` with",
  "`{\"id\", \"object\", \"deleted\": true}`; deleting again answers `404` (leads excepted: deleting one again",
  "answers the same `200`).",
  "",
  "### Errors",
  "",
  "```json",
  "{",
  "  \"error\": {",
  "    \"type\": \"invalid_request\",",
  "    \"code\": \"parameter_missing\",",
  "    \"message\": \"Missing required parameter: name\",",
  "    \"param\": \"name\",",
  "    \"doc_url\": \"http://127.0.0.1:3000/docs/errors#parameter_missing\"",
  "  },",
  "  \"meta\": { \"request_id\": \"req_…\" }",
  "}",
  "```",
  "",
  "`param` names the offending parameter as a path (`urls[3]`, `metadata.plan`), and is omitted when no single",
  "parameter is at fault. Unknown body parameters are refused by name (`parameter_invalid`), so typos do not pass",
  "silently. Unexpected failures are `500 internal_error` with no internals in the body; the details are in the",
  "service log under the request id.",
  "",
  "Every code, with its status, `type` and meaning, is listed at `/docs/errors` (the target of `doc_url`).",
  "",
  "### Pagination",
  "",
  "Lists are newest first. `limit` is one integer from 1 to 100 (default 20; anything else, including `limit`",
  "twice, is `400 invalid_limit`). To get the next page pass `meta.pagination.next_cursor` as `starting_after`;",
  "on the first page send no `starting_after` at all.",
  "",
  "Cursors are opaque, signed by the server (HMAC-SHA-256) and bound to their list and its filters: a cursor is",
  "valid only on the list that produced it (the same parent, e.g. the same webhook's deliveries) with the same",
  "filters (repeated values in any order count as the same). Anything else — another list's cursor, other",
  "filters, an edited or made-up cursor — is `400 invalid_cursor`. Cursors stay valid when the object they point",
  "at is deleted. The signing key is `CURSOR_SECRET`; unset, it is derived from `ADMIN_TOKEN`; with neither, an",
  "embedded service keeps a generated one in `DATA_DIR/cursor-secret`, and instances on a shared database each",
  "draw their own (set `CURSOR_SECRET` there so a cursor works on every instance).",
  "",
  "```sh",
  "CURSOR=\"\"",
  "while :; do",
  "  page=$(curl -s \"http://127.0.0.1:3000/v1/agents?limit=20${CURSOR:+&starting_after=$CURSOR}\" -H \"Authorization: Bearer $KEY\")",
  "  echo \"$page\" | jq -c '.data[]'",
  "  CURSOR=$(echo \"$page\" | jq -r '.meta.pagination.next_cursor // empty')",
  "  [ -n \"$CURSOR\" ] || break",
  "done",
  "```",
  "",
  "### Idempotency",
  "",
  "Every `POST` accepts `Idempotency-Key` (1–255 printable ASCII characters; else",
  "`400 invalid_idempotency_key`). Keys are kept 24 hours per workspace and environment, with a fingerprint of",
  "method, path and body:",
  "",
  "- the same key and the same request again: the stored response (status and body byte for byte) with the",
  "  header `Idempotent-Replayed: true` (a streamed reply to a message: its events from the first, see",
  "  the Conversations group);",
  "- the same key with another request: `422 idempotency_key_mismatch`;",
  "- while the first request is still running: `409 idempotency_request_in_progress` (retry shortly);",
  "- responses with status 5xx are not stored, so the request can be retried with the same key; 4xx are stored.",
  "",
  "A request that dies mid-way holds its key for at most 60 seconds (a lease), after which a retry runs again.",
  "",
  "### Rate limits",
  "",
  "Per key, a token bucket of `RATE_LIMIT_BURST` requests refilled at `RATE_LIMIT_RPS` per second (200 and 100 by",
  "default); requests without a valid key are limited per client address. Every `/v1` response carries",
  "`X-RateLimit-Limit` (bucket size), `X-RateLimit-Remaining` and `X-RateLimit-Reset` (Unix seconds when the bucket",
  "is full again). An empty bucket answers `429 rate_limited` with `Retry-After` in seconds. Buckets live in",
  "memory, or in Redis with `REDIS_URL` so that all instances share them. If Redis is unreachable, requests are",
  "let through and a warning is logged.",
  "",
  "### Events",
  "",
  "Changes write an event to an outbox table in the same transaction as the change, so an event exists exactly",
  "when its change committed. The envelope: `id` (`evt_…`), `object: \"event\"`, `type`, `created` (Unix seconds),",
  "`data`, `workspace_id`, `api_version: \"v1\"` and `livemode`. Its JSON is fixed when written.",
  "Webhooks deliver them: see the Webhooks group.",
  "",
  "**Choices** (where the spec leaves one open):",
  "",
  "- Success statuses: `201` on creation, `200` otherwise; deletes return `{id, object, deleted: true}`.",
  "- Every JSON object has an `object` field naming its kind (`agent`, `event`).",
  "- Unknown body parameters are rejected (`400 parameter_invalid`, `param` = the parameter) rather than ignored.",
  "- A malformed id in a path (`/v1/agents/nope`) is `400 parameter_invalid` with `param: \"id\"`; a well-formed id",
  "  that is not there (or belongs to another environment) is `404 resource_missing`.",
  "- The body of a request is limited to 2 MB (`413 payload_too_large`), except a file's raw bytes (25 MB); see",
  "  Input policy, above.",
  "- Integer literals past ±(2^53 − 1) are refused rather than rounded: a JSON number is a double, and silently",
  "  storing another number is worse than an error.",
  "- A path id too long for the router (over 100 characters) answers `404 resource_missing`: no such id exists.",
  "- Scopes appear in the OpenAPI document as the `x-scopes` extension (and `x-widget-scopes`), not as OAuth",
  "  security scopes: the keys are API keys, not OAuth tokens.",
  "- Error `type` values: `invalid_request`, `authentication_error` (401), `permission_error` (403),",
  "  `idempotency_error`, `rate_limit_error`, `api_error` (5xx).",
  "- Widget keys carry their environment in the prefix (`widget_pk_test_…`) so people can tell them apart.",
  "- An agent's slug follows its name on rename (the change appears in `agent.updated` `changes`).",
  "- `/healthz` and `/readyz` are not enveloped and not rate limited: they are for probes."
].join("\n")

const Contract = HttpApi.make("assistant-platform")
  .add(SystemGroup)
  .add(AgentsGroup)
  .add(WebhooksGroup)
  .add(TicketsGroup)
  .add(QaGroup)
  .add(GlossaryGroup)
  .add(KnowledgeGroup)
  .add(CrawlsGroup)
  .add(TrainingGroup)
  .add(FilesGroup)
  .add(ConversationsGroup)
  .add(LeadsGroup)
  .add(UsageGroup)
  .add(KeysGroup)
  .add(WidgetGroup)
  .add(FormsGroup)
  .add(FormsPublicGroup)
  .addError(ApiError(ParameterInvalid))
  .addError(ApiError(ParameterMissing))
  .addError(ApiError(InvalidIdempotencyKey))
  .addError(ApiError(RouteNotFound))
  .addError(ApiError(MethodNotAllowed))
  .addError(ApiError(IdempotencyRequestInProgress))
  .addError(ApiError(PayloadTooLarge))
  .addError(ApiError(UnsupportedMediaType))
  .addError(ApiError(IdempotencyKeyMismatch))
  .addError(ApiError(RateLimited))
  .addError(ApiError(InternalError))
  .addError(ApiError(ServiceUnavailable))
  .annotate(OpenApi.Title, "Assistant Platform API")
  .annotate(OpenApi.Version, "v1")
  .annotate(OpenApi.Description, apiReference)

export class Api extends Contract.annotate(OpenApi.Transform, (spec) =>
  completeDocument(Contract)(dropLibraryDecodeError(spec))
) {}
