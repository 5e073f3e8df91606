/**
 * A backlog of pending webhook deliveries written straight into the tables, for tests of the plans that reach
 * them: workspace `ws_plan`, subscription `whs_plan`, and `count` events with one delivery each
 * (`evt_plan_N`, `whd_plan_N`), due at `at`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export const insertDeliveryBacklog = (options: { readonly count: number; readonly at: Date; readonly horizon: Date }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { at, count, horizon } = options
    yield* sql`insert into workspaces (id, name, owner_email, plan, created_at)
      values ('ws_plan', 'Plan', 'owner@example.com', 'free', ${at})`
    yield* sql`insert into webhook_subscriptions (id, workspace_id, environment, url, events, is_active, secret,
        created_at, updated_at)
      values ('whs_plan', 'ws_plan', 'test', 'https://example.com/hook', '{agent.created}', true, 'secret', ${at}, ${at})`
    yield* sql`insert into events (id, workspace_id, environment, type, created_at, body)
      select 'evt_plan_' || n, 'ws_plan', 'test', 'agent.created', ${at}, '{}' from generate_series(1, ${count}) n`
    yield* sql`insert into webhook_deliveries (id, subscription_id, workspace_id, environment, event_id, event_type,
        status, horizon_at, next_attempt_at, created_at)
      select 'whd_plan_' || n, 'whs_plan', 'ws_plan', 'test', 'evt_plan_' || n, 'agent.created',
        'pending', ${horizon}, ${at}, ${at} from generate_series(1, ${count}) n`
  })
