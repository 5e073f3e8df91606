/**
 * `webhook_deliveries_lease` (migration 0017) finds its deliveries by id,
 * whatever the planner knows of the tables.
 *
 * The lease asks for a few deliveries by id, pending and due. Without
 * statistics on the tables (a new database, or autovacuum off, as on the CI
 * machines) the planner takes the pending deliveries for a handful, and chose
 * to reach them through the indexes of pending deliveries: from the
 * subscription's side (`webhook_deliveries_pending`, joined to the
 * subscription), or through the due ones (`webhook_deliveries_due`, ANDed with
 * the ids). Either way each claim read the whole backlog (auto_explain), where
 * the ids alone are a few index probes.
 *
 * Here the ids are the only way in:
 * - the status is tested as `coalesce(status, '') = 'pending'` (the column is
 *   never null), which no partial index of pending deliveries matches, so the
 *   due time cannot be reached through them either;
 * - the subscription and the event are read per leased delivery through scalar
 *   subqueries, which PostgreSQL never turns into joins, so no plan can start
 *   from them.
 * Same rule, same rows as before. `test/webhooks/lease-plan.test.ts` holds
 * the plan to it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create or replace function webhook_deliveries_lease(p_ids text[], p_at timestamptz, p_until timestamptz)
    returns table (
      id text, subscription_id text, event_id text, event_type text, attempt_count integer, max_attempts integer,
      horizon_at timestamptz, url text, secret text, previous_secret text, previous_secret_expires_at timestamptz,
      body text
    )
    language plpgsql volatile
    as $$
    #variable_conflict use_column
    begin
      return query 
  with leased as (
    update webhook_deliveries d set locked_until = p_until
    where d.id = any(p_ids) and coalesce(d.status, '') = 'pending' and d.next_attempt_at <= p_at
      and (d.locked_until is null or d.locked_until <= p_at)
      and (select s.is_active and s.deleted_at is null from webhook_subscriptions s where s.id = d.subscription_id)
    returning d.id, d.subscription_id, d.event_id, d.event_type, d.attempt_count, d.max_attempts, d.horizon_at,
      (select s from webhook_subscriptions s where s.id = d.subscription_id) as subscription,
      (select e.body from events e where e.id = d.event_id) as body
  )
  select l.id, l.subscription_id, l.event_id, l.event_type, l.attempt_count, l.max_attempts, l.horizon_at,
    (l.subscription).url, (l.subscription).secret, (l.subscription).previous_secret,
    (l.subscription).previous_secret_expires_at, l.body
  from leased l;
    end
    $$`)
})
