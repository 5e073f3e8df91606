/** Webhook subscription programs: validation, CRUD, test events, manual retry, rotation. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { PageParams } from "../../schema/Envelope.js"
import { ResourceMissing, SubscriptionInactive, UnknownEventType } from "../../schema/Errors.js"
import { EventTypes } from "../../schema/Events.js"
import {
  type CreateWebhook,
  DeliveryId,
  type DeliveryListParams,
  type UpdateWebhook,
  WebhookId
} from "../../schema/Webhooks.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { JobQueue } from "../../layers/JobQueue.js"
import type { Tenant } from "../../schema/Tenant.js"
import { AppConfig } from "../Config.js"
import { Outbox } from "../events/Outbox.js"
import { Paginator, toPage } from "../http/Pagination.js"
import { checkUrl } from "../net/UrlPolicy.js"
import { transaction } from "../db/Sql.js"
import { now } from "../Time.js"
import { webhookQueue } from "./Dispatcher.js"
import { toDelivery, toSubscription, WebhooksRepo } from "./WebhooksRepo.js"

/** How long a rotated-out secret keeps signing beside the new one. */
export const rotationOverlapMillis = 24 * 60 * 60 * 1000
/** A manual retry may run this long after it was asked for (e.g. while the subscription is paused). */
const manualRetryHorizonMillis = 24 * 60 * 60 * 1000

const known: ReadonlySet<string> = new Set(EventTypes)

const missingSubscription = (id: WebhookId) =>
  new ResourceMissing({ message: `No such webhook subscription: '${id}'`, param: "id" })
const missingDelivery = (id: DeliveryId) =>
  new ResourceMissing({ message: `No such delivery: '${id}'`, param: "delivery_id" })

/** Known event types, in the order given, without duplicates. */
const checkEvents = (events: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    for (const [i, name] of events.entries()) {
      if (!known.has(name)) {
        return yield* new UnknownEventType({ message: `Unknown event type: '${name}'`, param: `events[${i}]` })
      }
    }
    return [...new Set(events)]
  })

export class Webhooks extends Effect.Service<Webhooks>()("Webhooks/Programs", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* WebhooksRepo
    const outbox = yield* Outbox
    const ids = yield* IdGenerator
    const pages = yield* Paginator
    const jobs = yield* JobQueue
    const config = yield* AppConfig
    const tx = transaction(sql)

    const receiverUrl = (tenant: Tenant, url: string) =>
      Effect.map(
        checkUrl(url, { environment: tenant.environment, allowPrivate: config.allowPrivateUrls, param: "url" }),
        (u) => u.toString()
      )
    const newSecret = Effect.map(ids.secret(32), (s) => `whsec_${s}`)
    const subscriptionOf = (tenant: Tenant, id: WebhookId, options?: { readonly forUpdate?: boolean }) =>
      Effect.flatMap((repo.findSubscription(tenant, id, options)), (row) =>
        Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(missingSubscription(id))
      )

    const create = Effect.fn("Webhooks.create")(function* (tenant: Tenant, input: CreateWebhook) {
      const events = yield* checkEvents(input.events)
      const url = yield* receiverUrl(tenant, input.url)
      const secret = yield* newSecret
      const id = WebhookId.make(yield* ids.make("whs"))
      const row = yield* repo.insertSubscription({ ...tenant, id, url, events, secret, at: yield* now })
      return { ...toSubscription(row), secret }
    })

    const list = Effect.fn("Webhooks.list")(function* (tenant: Tenant, params: PageParams) {
      const page = yield* pages.parse("webhooks", params)
      const { rows, pagination } = toPage(yield* repo.pageSubscriptions(tenant, page), page)
      return { subscriptions: rows.map(toSubscription), pagination }
    })

    const retrieve = Effect.fn("Webhooks.retrieve")(function* (tenant: Tenant, id: WebhookId) {
      return toSubscription(yield* subscriptionOf(tenant, id))
    })

    const update = Effect.fn("Webhooks.update")(function* (tenant: Tenant, id: WebhookId, input: UpdateWebhook) {
      const events = input.events === undefined ? undefined : yield* checkEvents(input.events)
      const url = input.url === undefined ? undefined : yield* receiverUrl(tenant, input.url)
      const row = yield* Effect.gen(function* () {
        const current = yield* subscriptionOf(tenant, id, { forUpdate: true })
        const at = yield* now
        // reactivation: what waited past its horizon while inactive is dropped now, without an attempt, in the
        // change that lets the dispatcher claim again (so it never claims it)
        if (input.is_active === true && !current.is_active) yield* repo.dropPastHorizon(id, at)
        return yield* repo.updateSubscription(
          id,
          {
            ...(url === undefined ? {} : { url }),
            ...(events === undefined ? {} : { events }),
            ...(input.is_active === undefined ? {} : { is_active: input.is_active })
          },
          at
        )
      }).pipe(tx)
      // reactivation: pending deliveries still inside their horizon are due again
      if (input.is_active === true) yield* jobs.hurry(webhookQueue, id)
      return toSubscription(row)
    })

    const remove = Effect.fn("Webhooks.delete")(function* (tenant: Tenant, id: WebhookId) {
      yield* Effect.gen(function* () {
        yield* subscriptionOf(tenant, id, { forUpdate: true })
        yield* repo.deleteSubscription(id, yield* now)
      }).pipe(tx)
      return { id, object: "webhook_subscription" as const, deleted: true as const }
    })

    const sendTest = Effect.fn("Webhooks.test")(function* (tenant: Tenant, id: WebhookId) {
      return yield* Effect.gen(function* () {
        // read under the lock a deactivation takes, so a test is never scheduled to a subscription just deactivated
        const subscription = yield* subscriptionOf(tenant, id, { forUpdate: true })
        if (!subscription.is_active) {
          return yield* new SubscriptionInactive({
            message: `Webhook subscription '${id}' is inactive: no delivery is scheduled to it. Set is_active to true first.`,
            param: "id"
          })
        }
        const { event, deliveries } = yield* outbox.emit({
          ...tenant,
          type: "webhook.test",
          data: { message: "This is a test event from your webhook subscription." },
          only: [id]
        })
        return { delivery_id: DeliveryId.make(deliveries[0]!), event_id: event.id }
      }).pipe(tx)
    })

    const deliveries = Effect.fn("Webhooks.deliveries")(function* (tenant: Tenant, id: WebhookId, params: DeliveryListParams) {
      const page = yield* pages.parse(`webhooks/${id}/deliveries`, params, { status: params.status })
      yield* subscriptionOf(tenant, id)
      const rows = yield* repo.pageDeliveries(id, Option.fromNullable(params.status), page)
      const { rows: kept, pagination } = toPage(rows, page)
      return { deliveries: kept.map(toDelivery), pagination }
    })

    const delivery = Effect.fn("Webhooks.delivery")(function* (tenant: Tenant, id: WebhookId, deliveryId: DeliveryId) {
      yield* subscriptionOf(tenant, id)
      const row = yield* repo.findDelivery(id, deliveryId)
      if (Option.isNone(row)) return yield* missingDelivery(deliveryId)
      const attempts = yield* repo.attemptsOf(deliveryId)
      return {
        ...toDelivery(row.value),
        attempts: attempts.map((a) => ({
          attempted_at: a.attempted_at.toISOString(),
          response_status: a.response_status,
          duration_ms: a.duration_ms,
          response_body_excerpt: a.response_body_excerpt,
          error: a.error
        }))
      }
    })

    const retry = Effect.fn("Webhooks.retry")(function* (tenant: Tenant, id: WebhookId, deliveryId: DeliveryId) {
      yield* subscriptionOf(tenant, id)
      if (Option.isNone(yield* repo.findDelivery(id, deliveryId))) return yield* missingDelivery(deliveryId)
      const at = yield* now
      const row = yield* repo.requeue(deliveryId, at, new Date(at.getTime() + manualRetryHorizonMillis))
      yield* jobs.enqueue({ queue: webhookQueue, key: id, group: tenant.workspaceId, payload: { deliveryId } })
      return toDelivery(row)
    })

    const rotateSecret = Effect.fn("Webhooks.rotateSecret")(function* (tenant: Tenant, id: WebhookId) {
      const secret = yield* newSecret
      const row = yield* Effect.gen(function* () {
        const current = yield* subscriptionOf(tenant, id, { forUpdate: true })
        const at = yield* now
        return yield* repo.updateSubscription(
          id,
          {
            secret,
            previous_secret: current.secret,
            previous_secret_expires_at: new Date(at.getTime() + rotationOverlapMillis)
          },
          at
        )
      }).pipe(tx)
      return { ...toSubscription(row), secret }
    })

    return { create, list, retrieve, update, remove, sendTest, deliveries, delivery, retry, rotateSecret } as const
  }),
  dependencies: [WebhooksRepo.Default]
}) {}
