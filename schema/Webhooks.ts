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
import { reference } from "./Reference.js"

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
  .annotate(OpenApi.Description, reference("webhooks"))
  .annotate(OpenApi.Title, "Webhooks") {}
