/**
 * The webhook dispatcher's claim (`webhook_jobs_claim`, migration 0017) as
 * one function with no PL/pgSQL function below it but the queue's rule of what
 * is claimable (`jobs_claimable`), doing the same things in the same order:
 *
 * 1. the successes it carries recorded: their deliveries first, so the
 *    attempts' foreign-key checks find rows this transaction already holds;
 *    then their attempts, and their subscriptions' failure streaks cleared;
 * 2. the ended jobs deleted, each fenced by its claim;
 * 3. under the queue's advisory lock, in one statement with a snapshot taken
 *    after the lock: the claimable jobs leased (`jobs_claim`'s statement), and
 *    the first claimed job of each delivery leases that delivery by the rule
 *    of `webhook_deliveries_lease` (migration 0018), with what sending it
 *    needs as JSON (`alongside`; null for a job whose delivery was not taken).
 *
 * Through the nested functions of 0017 (`webhook_deliveries_succeeded`,
 * `jobs_claim_after`, `jobs_claim`, `webhook_deliveries_lease`) each nested
 * call copied its array arguments and ran its statements through a call of
 * its own, and the claimed rows went through an array of `jobs` rows and back.
 * Flat, a claim's round trip is shorter (`npm run bench -- claim-call`,
 * `scripts/bench/results/`). The nested functions stay: the queue's own
 * carried claim, a success written alone and a lease taken alone run them.
 *
 * Planned with `enable_seqscan` off like the functions of migration 0019: its
 * statements find their rows by id, whatever the tables held when a session
 * planned them (`test/db/claim-plans.test.ts`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create or replace function webhook_jobs_claim(
      p_ids text[], p_attempted_at timestamptz[], p_status integer[], p_duration integer[], p_excerpt text[],
      p_attempts integer[], p_subscriptions text[],
      p_ended bigint[], p_ended_claims integer[],
      p_queue text, p_at timestamptz, p_until timestamptz, p_per_key integer, p_limit integer, p_async boolean,
      p_lease_until timestamptz
    )
    returns table (
      id bigint, queue text, key text, payload text, attempts integer, claims integer, created_at timestamptz,
      alongside json
    )
    language plpgsql volatile
    set enable_seqscan = off
    as $$
    #variable_conflict use_column
    begin
      if p_async then
        perform set_config('synchronous_commit', 'off', true);
      end if;
      if cardinality(p_ids) > 0 then
        update webhook_deliveries d set status = 'succeeded', attempt_count = v.attempts, last_attempted_at = v.at,
          first_attempt_at = coalesce(d.first_attempt_at, v.at), response_status = v.status,
          next_attempt_at = null, locked_until = null, last_error = null
        from unnest(p_ids, p_attempted_at, p_status, p_attempts) as v (id, at, status, attempts)
        where d.id = v.id;
        insert into webhook_attempts (delivery_id, attempted_at, response_status, duration_ms, response_body_excerpt, error)
        select v.id, v.at, v.status, v.duration, v.excerpt, null
        from unnest(p_ids, p_attempted_at, p_status, p_duration, p_excerpt) as v (id, at, status, duration, excerpt);
        update webhook_subscriptions set consecutive_failures = 0, failing_since = null, degraded = false
        where id = any(p_subscriptions) and (consecutive_failures <> 0 or degraded);
      end if;
      delete from jobs j using unnest(p_ended, p_ended_claims) as d (id, claims)
      where j.id = d.id and j.claims = d.claims;
      if p_limit <= 0 then
        return;
      end if;
      perform pg_advisory_xact_lock(hashtext('jobs:' || p_queue));
      return query
        with due as (
          select j.id from jobs j
          where j.id = any(array(select c.id from jobs_claimable(p_queue, p_at, p_per_key, p_limit) c))
          order by j.run_at, j.id
          limit p_limit
          for update skip locked
        ),
        claimed as (
          update jobs j set locked_until = p_until, claims = j.claims + 1
          from due where j.id = due.id
          returning j.id, j.queue, j.key, j.payload, j.attempts, j.claims, j.created_at,
            j.payload::jsonb ->> 'deliveryId' as delivery_id
        ),
        firsts as (
          select distinct on (c.delivery_id) c.id, c.delivery_id from claimed c order by c.delivery_id, c.id
        ),
        leased as (
    update webhook_deliveries d set locked_until = p_lease_until
    where d.id = any(array(select f.delivery_id from firsts f)) and coalesce(d.status, '') = 'pending' and d.next_attempt_at <= p_at
      and (d.locked_until is null or d.locked_until <= p_at)
      and (select s.is_active and s.deleted_at is null from webhook_subscriptions s where s.id = d.subscription_id)
    returning d.id, d.subscription_id, d.event_id, d.event_type, d.attempt_count, d.max_attempts, d.horizon_at,
      (select s from webhook_subscriptions s where s.id = d.subscription_id) as subscription,
      (select e.body from events e where e.id = d.event_id) as body
  ),
        sending as (
          select l.id, l.subscription_id, l.event_id, l.event_type, l.attempt_count, l.max_attempts, l.horizon_at,
    (l.subscription).url, (l.subscription).secret, (l.subscription).previous_secret,
    (l.subscription).previous_secret_expires_at, l.body from leased l
        )
        select c.id, c.queue, c.key, c.payload, c.attempts, c.claims, c.created_at, to_json(s)
        from claimed c
        left join firsts f on f.id = c.id
        left join sending s on s.id = f.delivery_id;
    end
    $$`)
})
