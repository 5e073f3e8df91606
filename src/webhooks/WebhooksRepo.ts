/** SQL for subscriptions, deliveries and attempts, scoped by workspace and environment. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Delivery, DeliveryStatus, Subscription } from "../../schema/Webhooks.js"
import type { Tenant } from "../../schema/Tenant.js"
import type { PageRequest } from "../../schema/Envelope.js"
import { iso, isoOrNull } from "../Time.js"

export interface SubscriptionRow {
  readonly seq: string
  readonly id: string
  readonly workspace_id: string
  readonly environment: "test" | "live"
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly is_active: boolean
  readonly degraded: boolean
  readonly secret: string
  readonly previous_secret: string | null
  readonly previous_secret_expires_at: Date | null
  readonly consecutive_failures: number
  readonly failing_since: Date | null
  readonly created_at: Date
  readonly updated_at: Date
}

export interface DeliveryRow {
  readonly seq: string
  readonly id: string
  readonly subscription_id: string
  readonly event_id: string
  readonly event_type: string
  readonly status: DeliveryStatus
  readonly attempt_count: number
  readonly max_attempts: number
  readonly horizon_at: Date
  readonly next_attempt_at: Date | null
  readonly last_attempted_at: Date | null
  readonly response_status: number | null
  readonly last_error: string | null
  readonly created_at: Date
}

export interface AttemptRow {
  readonly attempted_at: Date
  readonly response_status: number | null
  readonly duration_ms: number
  readonly response_body_excerpt: string | null
  readonly error: string | null
}

export const toSubscription = (row: SubscriptionRow): Subscription => ({
  id: row.id as Subscription["id"],
  object: "webhook_subscription",
  url: row.url,
  events: row.events,
  is_active: row.is_active,
  degraded: row.degraded,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
})

export const toDelivery = (row: DeliveryRow): Delivery => ({
  id: row.id as Delivery["id"],
  object: "webhook_delivery",
  subscription_id: row.subscription_id as Delivery["subscription_id"],
  event_id: row.event_id as Delivery["event_id"],
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
    const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullable(rows[0])

    const insertSubscription = (
      row: Tenant & { id: string; url: string; events: ReadonlyArray<string>; secret: string; at: Date }
    ) =>
      sql<SubscriptionRow>`
        insert into webhook_subscriptions
          (id, workspace_id, environment, url, events, is_active, secret, created_at, updated_at)
        values (${row.id}, ${row.workspaceId}, ${row.environment}, ${row.url}, string_to_array(${row.events.join(" ")}, ' '),
          true, ${row.secret}, ${row.at}, ${row.at})
        returning ${subCols}`.pipe(Effect.map((rows) => rows[0]!))

    const findSubscription = (tenant: Tenant, id: string, options?: { readonly forUpdate?: boolean }) =>
      sql<SubscriptionRow>`
        select ${subCols} from webhook_subscriptions
        where id = ${id} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and deleted_at is null
        ${options?.forUpdate ? sql.literal("for update") : sql.literal("")}`.pipe(Effect.map(first))

    const pageSubscriptions = (tenant: Tenant, page: PageRequest) =>
      sql<SubscriptionRow>`
        select ${subCols} from webhook_subscriptions
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and deleted_at is null
          ${Option.isSome(page.after) ? sql`and webhook_subscriptions.seq < ${page.after.value}::bigint` : sql.literal("")}
        order by webhook_subscriptions.seq desc
        limit ${page.limit + 1}`

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
      return sql<SubscriptionRow>`
        update webhook_subscriptions set ${sql.update({ ...rest, updated_at: at })}
          ${events === undefined ? sql.literal("") : sql`, events = string_to_array(${events.join(" ")}, ' ')`}
        where id = ${id}
        returning ${subCols}`.pipe(Effect.map((rows) => rows[0]!))
    }

    const deleteSubscription = (id: string, at: Date) =>
      Effect.zipRight(
        sql`update webhook_subscriptions set deleted_at = ${at}, is_active = false, updated_at = ${at} where id = ${id}`,
        sql`
          update webhook_deliveries set status = 'failed', next_attempt_at = null, locked_until = null,
            last_error = 'cancelled: subscription deleted'
          where subscription_id = ${id} and status = 'pending'`
      )

    /** Active subscriptions of a tenant that take this event type: the fan-out targets. */
    const subscribersOf = (tenant: Tenant, type: string) =>
      sql<{ readonly id: string }>`
        select id from webhook_subscriptions
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and is_active and deleted_at is null and ${type} = any(events)`

    const insertDelivery = (row: Tenant & {
      id: string
      subscriptionId: string
      eventId: string
      eventType: string
      at: Date
      horizonAt: Date
    }) =>
      sql`
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
        })}`

    const pageDeliveries = (subscriptionId: string, status: Option.Option<DeliveryStatus>, page: PageRequest) =>
      sql<DeliveryRow>`
        select ${delCols} from webhook_deliveries
        where subscription_id = ${subscriptionId}
          ${Option.isSome(status) ? sql`and status = ${status.value}` : sql.literal("")}
          ${Option.isSome(page.after) ? sql`and webhook_deliveries.seq < ${page.after.value}::bigint` : sql.literal("")}
        order by webhook_deliveries.seq desc
        limit ${page.limit + 1}`

    const findDelivery = (subscriptionId: string, id: string) =>
      sql<DeliveryRow>`
        select ${delCols} from webhook_deliveries where id = ${id} and subscription_id = ${subscriptionId}`.pipe(
        Effect.map(first)
      )

    const attemptsOf = (deliveryId: string) =>
      sql<AttemptRow>`
        select attempted_at, response_status, duration_ms, response_body_excerpt, error
        from webhook_attempts where delivery_id = ${deliveryId} order by webhook_attempts.seq`

    /** Manual retry: one more attempt, now, whatever the schedule said. */
    const requeue = (id: string, at: Date, horizonAt: Date) =>
      sql<DeliveryRow>`
        update webhook_deliveries set status = 'pending', next_attempt_at = ${at}, locked_until = null,
          max_attempts = attempt_count + 1, horizon_at = ${horizonAt}
        where id = ${id}
        returning ${delCols}`.pipe(Effect.map((rows) => rows[0]!))

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
      requeue
    } as const
  })
}) {}
