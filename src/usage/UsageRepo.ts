/**
 * SQL for the monthly counters per workspace, environment and month: replies and credits (`reply_usage`), and
 * refreshes of sources (`refresh_usage`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Plan } from "../../schema/Auth.js"
import type { Tenant } from "../../schema/Tenant.js"
import { decodeOne, decodeSingle, execute } from "../db/Sql.js"

const CounterRow = Schema.Struct({ replies: Schema.Number, credits: Schema.Number })
export type CounterRow = typeof CounterRow.Type

export class UsageRepo extends Effect.Service<UsageRepo>()("Usage/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const plan = (tenant: Tenant) =>
      decodeSingle(Schema.Struct({ plan: Plan }), sql`select plan from workspaces where id = ${tenant.workspaceId}`).pipe(
        Effect.map((r) => r.plan)
      )

    /**
     * Counts one reply (and `credits`) in `month`, unless the month's replies
     * already reached the cap of the workspace's plan (`caps`: the cap of each
     * plan, `null` for none); then none. One statement, the plan read in it: the
     * upsert locks the counter row and re-checks the condition on its latest
     * version, so concurrent reservations queue on it and the cap is exact, on
     * every instance.
     */
    const reserve = (tenant: Tenant, month: string, credits: number, caps: Readonly<Record<Plan, number | null>>) =>
      decodeOne(CounterRow, sql`
        with cap as (
          select (${JSON.stringify(caps)}::jsonb ->> plan)::integer as replies from workspaces where id = ${tenant.workspaceId}
        )
        insert into reply_usage (workspace_id, environment, month, replies, credits)
        values (${tenant.workspaceId}, ${tenant.environment}, ${month}, 1, ${credits})
        on conflict (workspace_id, environment, month) do update
          set replies = reply_usage.replies + 1, credits = reply_usage.credits + ${credits}
          where (select replies from cap) is null or reply_usage.replies < (select replies from cap)
        returning replies, credits`)

    /** Takes back one reservation of `month` (never below zero). */
    const release = (tenant: Tenant, month: string, credits: number) =>
      execute(sql`
        update reply_usage
        set replies = greatest(replies - 1, 0), credits = greatest(credits - ${credits}, 0)
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and month = ${month}`)

    const counter = (tenant: Tenant, month: string) =>
      decodeOne(CounterRow, sql`
        select replies, credits from reply_usage
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and month = ${month}`).pipe(
        Effect.map(Option.getOrElse((): CounterRow => ({ replies: 0, credits: 0 })))
      )

    /**
     * Counts up to `wanted` refreshes in `month` within `cap` (null: none): how many were counted. The counter row
     * is locked by its upsert, so concurrent reservations queue on it and the cap is exact on every instance.
     */
    const reserveRefreshes = (tenant: Tenant, month: string, wanted: number, cap: number | null) =>
      decodeSingle(Schema.Struct({ granted: Schema.Number }), sql`
        with before as (
          select refreshes from refresh_usage
          where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and month = ${month}
          for update
        ),
        granted as (
          select greatest(0, least(${wanted}::integer,
            coalesce(${cap}::integer - coalesce((select refreshes from before), 0), ${wanted}::integer))) as n
        ),
        counted as (
          insert into refresh_usage (workspace_id, environment, month, refreshes)
          select ${tenant.workspaceId}, ${tenant.environment}, ${month}, n from granted where n > 0
          on conflict (workspace_id, environment, month) do update
            set refreshes = refresh_usage.refreshes + excluded.refreshes
          returning refreshes
        )
        select n as granted from granted`)

    /** Gives back `count` refreshes counted in `month` and not run (never below zero). */
    const releaseRefreshes = (tenant: Tenant, month: string, count: number) =>
      execute(sql`
        update refresh_usage set refreshes = greatest(refreshes - ${count}, 0)
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and month = ${month}`)

    return { plan, reserve, release, counter, reserveRefreshes, releaseRefreshes } as const
  })
}) {}
