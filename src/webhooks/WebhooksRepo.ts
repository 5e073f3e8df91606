/** SQL for subscriptions, deliveries and attempts, scoped by workspace and environment; rows are decoded, not cast. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Environment } from "../../schema/Auth.js"
import type { PageRequest } from "../../schema/Envelope.js"
import { EventId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { type Delivery, DeliveryId, DeliveryStatus, type Subscription, WebhookId } from "../../schema/Webhooks.js"
import { DbDate } from "../db/Columns.js"
import { decodeAll, decodeOne, decodeSingle, execute } from "../db/Sql.js"
import { iso, isoOrNull } from "../Time.js"

export const SubscriptionRow = Schema.Struct({
  seq: Schema.String,
  id: WebhookId,
  workspace_id: Schema.String,
  environment: Environment,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  is_active: Schema.Boolean,
  degraded: Schema.Boolean,
  secret: Schema.String,
  previous_secret: Schema.NullOr(Schema.String),
  previous_secret_expires_at: Schema.NullOr(DbDate),
  consecutive_failures: Schema.Number,
  failing_since: Schema.NullOr(DbDate),
  created_at: DbDate,
  updated_at: DbDate
})
export type SubscriptionRow = typeof SubscriptionRow.Type

export const DeliveryRow = Schema.Struct({
  seq: Schema.String,
  id: DeliveryId,
  subscription_id: WebhookId,
  event_id: EventId,
  event_type: Schema.String,
  status: DeliveryStatus,
  attempt_count: Schema.Number,
  max_attempts: Schema.Number,
  horizon_at: DbDate,
  next_attempt_at: Schema.NullOr(DbDate),
  last_attempted_at: Schema.NullOr(DbDate),
  response_status: Schema.NullOr(Schema.Number),
  last_error: Schema.NullOr(Schema.String),
  created_at: DbDate
})
export type DeliveryRow = typeof DeliveryRow.Type

export const AttemptRow = Schema.Struct({
  attempted_at: DbDate,
  response_status: Schema.NullOr(Schema.Number),
  duration_ms: Schema.Number,
  response_body_excerpt: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String)
})
export type AttemptRow = typeof AttemptRow.Type

export const toSubscription = (row: SubscriptionRow): Subscription => ({
  id: row.id,
  object: "webhook_subscription",
  url: row.url,
  events: row.events,
  is_active: row.is_active,
  degraded: row.degraded,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

export const toDelivery = (row: DeliveryRow): Delivery => ({
  id: row.id,
  object: "webhook_delivery",
  subscription_id: row.subscription_id,
  event_id: row.event_id,
  event_type: row.event_type,
  status: row.status,
  response_status: row.response_status,
  attempt_count: row.attempt_count,
  last_attempted_at: isoOrNull(row.last_attempted_at),
  next_attempt_at: isoOrNull(row.next_attempt_at),
  last_error: row.last_error,
  created_at: iso(row.created_at)
})

// `seq` is read as text (a bigint); order and compare on the table column
const subscriptionColumns = `seq::text as seq, id, workspace_id, environment, url, events, is_active, degraded, secret,
  previous_secret, previous_secret_expires_at, consecutive_failures, failing_since, created_at, updated_at`
const deliveryColumns = `seq::text as seq, id, subscription_id, event_id, event_type, status, attempt_count, max_attempts,
  horizon_at, next_attempt_at, last_attempted_at, response_status, last_error, created_at`

export class WebhooksRepo extends Effect.Service<WebhooksRepo>()("Webhooks/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const subCols = sql.literal(subscriptionColumns)
    const delCols = sql.literal(deliveryColumns)

    const insertSubscription = (
      row: Tenant & { id: string; url: string; events: ReadonlyArray<string>; secret: string; at: Date }
    ) =>
      decodeSingle(SubscriptionRow, sql`
        insert into webhook_subscriptions
          (id, workspace_id, environment, url, events, is_active, secret, created_at, updated_at)
        values (${row.id}, ${row.workspaceId}, ${row.environment}, ${row.url}, string_to_array(${row.events.join(" ")}, ' '),
          true, ${row.secret}, ${row.at}, ${row.at})
        returning ${subCols}`)

    const findSubscription = (tenant: Tenant, id: string, options?: { readonly forUpdate?: boolean }) =>
      decodeOne(SubscriptionRow, sql`
        select ${subCols} from webhook_subscriptions
        where id = ${id} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and deleted_at is null
        ${options?.forUpdate ? sql.literal("for update") : sql.literal("")}`)

    const pageSubscriptions = (tenant: Tenant, page: PageRequest) =>
      decodeAll(SubscriptionRow, sql`
        select ${subCols} from webhook_subscriptions
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and deleted_at is null
          ${Option.isSome(page.after) ? sql`and webhook_subscriptions.seq < ${page.after.value}::bigint` : sql.literal("")}
        order by webhook_subscriptions.seq desc
        limit ${page.limit + 1}`)

    const updateSubscription = (
      id: string,
      changes: {
        url?: string
        events?: ReadonlyArray<string>
        is_active?: boolean
        secret?: string
        previous_secret?: string | null
        previous_secret_expires_at?: Date | null
      },
      at: Date
    ) => {
      const { events, ...rest } = changes
      return decodeSingle(SubscriptionRow, sql`
        update webhook_subscriptions set ${sql.update({ ...rest, updated_at: at })}
          ${events === undefined ? sql.literal("") : sql`, events = string_to_array(${events.join(" ")}, ' ')`}
        where id = ${id}
        returning ${subCols}`)
    }

    const deleteSubscription = (id: string, at: Date) =>
      execute(Effect.zipRight(
        sql`update webhook_subscriptions set deleted_at = ${at}, is_active = false, updated_at = ${at} where id = ${id}`,
        sql`
          update webhook_deliveries set status = 'failed', next_attempt_at = null, locked_until = null,
            last_error = 'cancelled: subscription deleted'
          where subscription_id = ${id} and status = 'pending'`
      ))

    /** Active subscriptions of a tenant that take this event type: the fan-out targets. */
    const subscribersOf = (tenant: Tenant, type: string) =>
      decodeAll(Schema.Struct({ id: WebhookId }), sql`
        select id from webhook_subscriptions
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and is_active and deleted_at is null and ${type} = any(events)`)

    const insertDelivery = (row: Tenant & {
      id: string
      subscriptionId: string
      eventId: string
      eventType: string
      at: Date
      horizonAt: Date
    }) =>
      execute(sql`
        insert into webhook_deliveries ${sql.insert({
          id: row.id,
          subscription_id: row.subscriptionId,
          workspace_id: row.workspaceId,
          environment: row.environment,
          event_id: row.eventId,
          event_type: row.eventType,
          status: "pending",
          horizon_at: row.horizonAt,
          next_attempt_at: row.at,
          created_at: row.at
        })}`)

    const pageDeliveries = (subscriptionId: string, status: Option.Option<DeliveryStatus>, page: PageRequest) =>
      decodeAll(DeliveryRow, sql`
        select ${delCols} from webhook_deliveries
        where subscription_id = ${subscriptionId}
          ${Option.isSome(status) ? sql`and status = ${status.value}` : sql.literal("")}
          ${Option.isSome(page.after) ? sql`and webhook_deliveries.seq < ${page.after.value}::bigint` : sql.literal("")}
        order by webhook_deliveries.seq desc
        limit ${page.limit + 1}`)

    const findDelivery = (subscriptionId: string, id: string) =>
      decodeOne(DeliveryRow, sql`
        select ${delCols} from webhook_deliveries where id = ${id} and subscription_id = ${subscriptionId}`)

    const attemptsOf = (deliveryId: string) =>
      decodeAll(AttemptRow, sql`
        select attempted_at, response_status, duration_ms, response_body_excerpt, error
        from webhook_attempts where delivery_id = ${deliveryId} order by webhook_attempts.seq`)

    /**
     * Reactivation: the subscription's pending deliveries past their horizon (they waited on it while inactive) fail
     * without an attempt, and the subscription is marked degraded if any did. A delivery still leased (an attempt
     * begun before the deactivation) is left to its attempt.
     */
    const dropPastHorizon = (subscriptionId: string, at: Date) =>
      execute(sql`
        with dropped as (
          update webhook_deliveries set status = 'failed', next_attempt_at = null, locked_until = null,
            last_error = 'dropped: the 24 h retry horizon passed'
          where subscription_id = ${subscriptionId} and status = 'pending' and horizon_at < ${at}
            and (locked_until is null or locked_until <= ${at})
          returning 1
        )
        update webhook_subscriptions set degraded = true
        where id = ${subscriptionId} and exists (select 1 from dropped)`)

    /** Manual retry: one more attempt, now, whatever the schedule said. */
    const requeue = (id: string, at: Date, horizonAt: Date) =>
      decodeSingle(DeliveryRow, sql`
        update webhook_deliveries set status = 'pending', next_attempt_at = ${at}, locked_until = null,
          max_attempts = attempt_count + 1, horizon_at = ${horizonAt}
        where id = ${id}
        returning ${delCols}`)

    return {
      insertSubscription,
      findSubscription,
      pageSubscriptions,
      updateSubscription,
      deleteSubscription,
      subscribersOf,
      insertDelivery,
      pageDeliveries,
      findDelivery,
      attemptsOf,
      dropPastHorizon,
      requeue
    } as const
  })
}) {}
