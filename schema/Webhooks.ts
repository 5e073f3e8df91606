/**
 * Webhooks: subscriptions that receive signed events, the delivery log with
 * every attempt, manual retry, and secret rotation without downtime.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { Authentication, RequiredScope } from "./Auth.js"
import { ShowsSecret } from "./Endpoint.js"
import { Deleted, Envelope, ListEnvelope, PageParams, Timestamp } from "./Envelope.js"
import {
  ApiError,
  InvalidCursor,
  InvalidLimit,
  ResourceMissing,
  SubscriptionInactive,
  UnknownEventType,
  UrlNotAllowed
} from "./Errors.js"
import { EventId } from "./Ids.js"
import { StrictStruct } from "./Payload.js"

export const WebhookId = Schema.String.pipe(
  Schema.pattern(/^whs_[A-Za-z0-9]{8,64}$/, { message: () => "Expected a webhook subscription id (whs_...)" }),
  Schema.brand("WebhookId")
)
export type WebhookId = typeof WebhookId.Type

export const DeliveryId = Schema.String.pipe(
  Schema.pattern(/^whd_[A-Za-z0-9]{8,64}$/, { message: () => "Expected a delivery id (whd_...)" }),
  Schema.brand("DeliveryId")
)
export type DeliveryId = typeof DeliveryId.Type

export const Subscription = Schema.Struct({
  id: WebhookId,
  object: Schema.Literal("webhook_subscription"),
  url: Schema.String,
  events: Schema.Array(Schema.String).annotations({ description: "The event types delivered to it" }),
  is_active: Schema.Boolean.annotations({
    description: "An inactive subscription gets no deliveries; set after 50 failed attempts over 24 h or more"
  }),
  degraded: Schema.Boolean.annotations({
    description: "True after an event was dropped (24 h without success), until the next successful delivery"
  }),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "WebhookSubscription" })
export type Subscription = typeof Subscription.Type

/** Returned by creation and rotation only: the one time the secret is shown. */
export const SubscriptionWithSecret = Schema.Struct({
  ...Subscription.fields,
  secret: Schema.String.annotations({ description: "whsec_...; shown only now" })
}).annotations({ identifier: "WebhookSubscriptionWithSecret" })

export const DeliveryStatus = Schema.Literal("pending", "succeeded", "failed")
export type DeliveryStatus = typeof DeliveryStatus.Type

export const Delivery = Schema.Struct({
  id: DeliveryId,
  object: Schema.Literal("webhook_delivery"),
  subscription_id: WebhookId,
  event_id: EventId,
  event_type: Schema.String,
  status: DeliveryStatus.annotations({
    description: "`pending` until a 2xx (`succeeded`) or the tenth failed attempt (`failed`)"
  }),
  response_status: Schema.NullOr(Schema.Int).annotations({ description: "The last attempt's HTTP status, if any" }),
  attempt_count: Schema.Int.annotations({ description: "Attempts made, at most 10 (and manual retries)" }),
  last_attempted_at: Schema.NullOr(Timestamp),
  next_attempt_at: Schema.NullOr(Timestamp),
  last_error: Schema.NullOr(Schema.String).annotations({
    description: "Why the last attempt failed (timeout, connection, a non-2xx status)"
  }),
  created_at: Timestamp
}).annotations({ identifier: "WebhookDelivery" })
export type Delivery = typeof Delivery.Type

export const Attempt = Schema.Struct({
  attempted_at: Timestamp,
  response_status: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  response_body_excerpt: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String)
}).annotations({ identifier: "WebhookAttempt" })

export const DeliveryWithAttempts = Schema.Struct({ ...Delivery.fields, attempts: Schema.Array(Attempt) }).annotations({
  identifier: "WebhookDeliveryWithAttempts"
})

const Url = Schema.String.pipe(Schema.maxLength(2048))
const EventNames = Schema.Array(Schema.String).pipe(Schema.minItems(1, { message: () => "events must not be empty" }))

export const CreateWebhook = StrictStruct({ url: Url, events: EventNames }).annotations({ identifier: "CreateWebhook" })
export type CreateWebhook = typeof CreateWebhook.Type

export const UpdateWebhook = StrictStruct({
  url: Schema.optional(Url),
  events: Schema.optional(EventNames),
  is_active: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "UpdateWebhook" })
export type UpdateWebhook = typeof UpdateWebhook.Type

export const DeliveryListParams = Schema.Struct({ ...PageParams.fields, status: Schema.optional(DeliveryStatus) })
export type DeliveryListParams = typeof DeliveryListParams.Type

export const TestDelivery = Schema.Struct({ delivery_id: DeliveryId, event_id: EventId })

const id = HttpApiSchema.param("id", WebhookId)
const deliveryId = HttpApiSchema.param("delivery_id", DeliveryId)
const missing = ApiError(ResourceMissing)

/** The reference of this group, in Markdown: its tag's description in the OpenAPI document and on `/docs`. */
const webhooksReference = [
  "A subscription: `id` (`whs_…`), `object: \"webhook_subscription\"`, `url`, `events`, `is_active`, `degraded`,",
  "`created_at`, `updated_at`. A delivery: `id` (`whd_…`), `subscription_id`, `event_id`, `event_type`, `status`,",
  "`response_status`, `attempt_count`, `last_attempted_at`, `next_attempt_at`, `last_error`, `created_at`.",
  "",
  "**What is sent.** When an event is written, a delivery is created in the same transaction for every active",
  "subscription of that workspace and environment whose `events` include its type; an inactive subscription gets",
  "nothing for events produced meanwhile. Each attempt is a `POST` of the event's JSON — the same bytes every",
  "time — with `Content-Type: application/json`, `User-Agent: AssistantPlatform-Webhooks/1.0`,",
  "`Service-Event-Id`, `Service-Event-Type`, `Service-Delivery-Id` and",
  "`Service-Signature: t=<unix seconds>,v1=<hex>`. Success is any 2xx within 10 seconds; anything else (timeout,",
  "3xx — redirects are not followed —, 4xx, 5xx, DNS, TLS, connection errors) is a failed attempt. An event can",
  "arrive more than once: deduplicate on `Service-Event-Id` (the event's `id`), and answer 2xx to event types you",
  "do not know.",
  "",
  "**Verifying.** The signature is HMAC-SHA256 of `<t>.<raw body>` keyed by the whole `whsec_…` string, so",
  "Stripe's verifiers accept it as they are. With this project's SDK:",
  "",
  "```ts",
  "import { verifyWebhook } from \"./src/sdk/index.js\"",
  "// rawBody: the bytes as received, not re-serialised JSON",
  "const event = verifyWebhook(rawBody, req.headers[\"service-signature\"], process.env.WEBHOOK_SECRET!, { toleranceSeconds: 300 })",
  "```",
  "",
  "It throws `WebhookVerificationError` when no `v1=` entry matches or `t` is more than 5 minutes away.",
  "Or with Stripe's library: `stripe.webhooks.constructEvent(rawBody, header, secret)`.",
  "",
  "**Rotation without downtime.** `rotate_secret` returns a new secret. For 24 hours every delivery carries two",
  "`v1=` entries, one per secret, so a receiver still on the old secret keeps verifying while you deploy the new",
  "one.",
  "",
  "**Retries.** Attempt 1 is immediate; then, measured from the previous attempt:",
  "",
  "| Attempt | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 |",
  "|---|---|---|---|---|---|---|---|---|---|",
  "| Wait | 30 s | 2 min | 10 min | 30 min | 1 h | 2 h | 4 h | 8 h | 9 h, clamped to 24 h after the event |",
  "",
  "After the tenth failure the event is dropped for that subscription (delivery `failed`) and the subscription is",
  "marked `degraded: true` until its next successful delivery. When a subscription's consecutive failed attempts",
  "reach 50 and span at least 24 hours, it is deactivated (`is_active: false`) and the workspace owner is",
  "e-mailed. Deliveries pending on an inactive subscription wait; set `is_active: true` again and those still",
  "inside their 24-hour horizon are attempted at once (older ones are dropped). A manual retry makes one attempt",
  "now, whatever the schedule said.",
  "",
  "**Which URLs.** Receivers must be `https:` in live mode (`http:` is accepted in the sandbox). URLs whose host is,",
  "or resolves to, a loopback, private, carrier-grade NAT, link-local, multicast or otherwise non-public address",
  "(IPv4 and IPv6, including IPv4-mapped forms and `localhost` names) are refused with `400 url_not_allowed`. The",
  "address is checked again when connecting, so DNS that changes its answer later (rebinding) is refused too.",
  "`ALLOW_PRIVATE_URLS=true` lifts this, for development and tests.",
  "",
  "**How dispatch works.** Every delivery is a job of the service's queue (`webhooks`, keyed by its subscription),",
  "written in the same transaction as the event and the delivery, so a committed event always has its jobs and a",
  "rolled-back one has none. A claim takes the deliveries' own 30-second leases, so a second job for the same",
  "delivery (a manual retry's) never sends it twice at once. Successes are recorded by the worker's next claim,",
  "several at a time under load. A failure records its attempt and reschedules its job at the delivery's next",
  "attempt time, in a transaction of its own. Each POST's 10-second deadline is the fetcher's own timer (under a",
  "test's `TestClock` it is raced by that clock too, so tests drive it). The POSTs reuse kept-alive connections,",
  "pooled apart per URL policy: a pooled connection was checked when it connected and stays on the address that was",
  "checked. A request on a reused connection that fails before any answer is sent once more on a new connection, so",
  "a receiver may see it twice (at-least-once). Reactivating a subscription makes its waiting jobs due at once; a",
  "manual retry enqueues one. An instance sends the deliveries it created as soon as their transaction committed;",
  "it finds other instances' by the poll (`WEBHOOK_POLL_MS`).",
  "",
  "**Many instances.** Jobs are claimed with `FOR UPDATE SKIP LOCKED` and a lease extended while the attempt runs;",
  "an instance that dies mid-delivery loses nothing: its claims lapse after 30 seconds and another instance (or",
  "itself, restarted) sends them (a receiver may then see an event twice). An instance that stops normally hands",
  "its claims back at once. Each process sends at most 16 deliveries at a time, and at most 8 are in flight for",
  "any one subscription across all instances (the queue's per-key cap), so a slow receiver cannot hold up the",
  "others."
].join("\n")

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("create", "/v1/webhooks")
      .setPayload(CreateWebhook)
      .addSuccess(Envelope(SubscriptionWithSecret), { status: 201 })
      .addError(ApiError(UnknownEventType))
      .addError(ApiError(UrlNotAllowed))
      .annotate(RequiredScope, "write:webhooks")
      .annotate(ShowsSecret, true)
      .annotate(
        OpenApi.Description,
        "Body `url`, `events` (known event types); `201`; returns the `whsec_` secret — the only time it is " +
          "shown"
      )
      .annotate(OpenApi.Summary, "Subscribe a receiver; the signing secret is returned once")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/webhooks")
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(Subscription))
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:webhooks")
      .annotate(OpenApi.Summary, "List webhook subscriptions, newest first")
  )
  .add(
    HttpApiEndpoint.get("retrieve")`/v1/webhooks/${id}`
      .addSuccess(Envelope(Subscription))
      .addError(missing)
      .annotate(RequiredScope, "read:webhooks")
      .annotate(OpenApi.Summary, "Retrieve a subscription")
  )
  .add(
    HttpApiEndpoint.patch("update")`/v1/webhooks/${id}`
      .setPayload(UpdateWebhook)
      .addSuccess(Envelope(Subscription))
      .addError(missing)
      .addError(ApiError(UnknownEventType))
      .addError(ApiError(UrlNotAllowed))
      .annotate(RequiredScope, "write:webhooks")
      .annotate(OpenApi.Description, "`url`, `events`, `is_active`")
      .annotate(OpenApi.Summary, "Change url, events or is_active; reactivation resumes pending deliveries")
  )
  .add(
    HttpApiEndpoint.del("delete")`/v1/webhooks/${id}`
      .addSuccess(Envelope(Deleted(WebhookId, "webhook_subscription")))
      .addError(missing)
      .annotate(RequiredScope, "write:webhooks")
      .annotate(OpenApi.Summary, "Revoke a subscription; its pending deliveries are cancelled")
  )
  .add(
    HttpApiEndpoint.post("test")`/v1/webhooks/${id}/test`
      .addSuccess(Envelope(TestDelivery), { status: 202 })
      .addError(missing)
      .addError(ApiError(SubscriptionInactive))
      .annotate(RequiredScope, "write:webhooks")
      .annotate(OpenApi.Summary, "Schedule a `webhook.test` delivery to this subscription")
      .annotate(
        OpenApi.Description,
        "`202`; schedules a `webhook.test` event to this subscription only and returns its `delivery_id`. " +
          "While the subscription is inactive (`is_active: false`) no delivery is scheduled: " +
          "`409 subscription_inactive`."
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries")`/v1/webhooks/${id}/deliveries`
      .setUrlParams(DeliveryListParams)
      .addSuccess(ListEnvelope(Delivery))
      .addError(missing)
      .addError(ApiError(InvalidLimit))
      .addError(ApiError(InvalidCursor))
      .annotate(RequiredScope, "read:webhooks")
      .annotate(OpenApi.Summary, "List a subscription's deliveries, newest first; `status` filters")
  )
  .add(
    HttpApiEndpoint.get("delivery")`/v1/webhooks/${id}/deliveries/${deliveryId}`
      .addSuccess(Envelope(DeliveryWithAttempts))
      .addError(missing)
      .annotate(RequiredScope, "read:webhooks")
      .annotate(
        OpenApi.Description,
        "With every attempt: time, response status, duration, the first 1 KiB of the response body, error"
      )
      .annotate(OpenApi.Summary, "A delivery with every attempt")
  )
  .add(
    HttpApiEndpoint.post("retry")`/v1/webhooks/${id}/deliveries/${deliveryId}/retry`
      .addSuccess(Envelope(Delivery), { status: 202 })
      .addError(missing)
      .annotate(RequiredScope, "write:webhooks")
      .annotate(OpenApi.Description, "`202`; one more attempt, now")
      .annotate(OpenApi.Summary, "Attempt a delivery once more, now")
  )
  .add(
    HttpApiEndpoint.post("rotateSecret")`/v1/webhooks/${id}/rotate_secret`
      .addSuccess(Envelope(SubscriptionWithSecret))
      .addError(missing)
      .annotate(RequiredScope, "write:webhooks")
      .annotate(ShowsSecret, true)
      .annotate(OpenApi.Summary, "New secret; the old one keeps signing (a second v1=) for 24 h")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, webhooksReference)
  .annotate(OpenApi.Title, "Webhooks") {}
