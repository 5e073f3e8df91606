/**
 * A job's attempt is counted when it is claimed, not when it is settled: an
 * attempt that kills its process (a decoder's native crash, the memory
 * exhausted) never settles, and counted at its settle it was never counted at
 * all, so such a job was claimed again, and killed its next process, for
 * ever. Counted at the claim, the claim past the last attempt finds the
 * attempts used up and the worker gives the job up (`layers/jobqueue/Worker.ts`).
 *
 * The two claims that lease jobs change only in that: `attempts` goes up with
 * `claims` in the same update (`jobs_claim`, whose callers `jobs_claim_after`
 * and the queue's probes are unchanged, and the webhook dispatcher's flat
 * `webhook_jobs_claim`, as migration 0020 wrote it, its lease of deliveries
 * spelled out here). Their plans keep `enable_seqscan` off (migration 0019): a
 * function replaced takes the settings its new definition gives.
 *
 * A settle no longer counts (the claim did); a claim handed back unrun, on
 * shutdown, gives its count back (`Postgres.ts`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create or replace function jobs_claim(
      p_queue text, p_at timestamptz, p_until timestamptz, p_per_key integer, p_limit integer, p_async boolean
    )
    returns setof jobs
    language plpgsql volatile
    set enable_seqscan = off
    as $$
    begin
      perform pg_advisory_xact_lock(hashtext('jobs:' || p_queue));
      if p_async then
        perform set_config('synchronous_commit', 'off', true);
      end if;
      return query
        with due as (
          select j.id from jobs j
          where j.id = any(array(select c.id from jobs_claimable(p_queue, p_at, p_per_key, p_limit) c))
          order by j.run_at, j.id
          limit p_limit
          for update skip locked
        )
        update jobs j set locked_until = p_until, claims = j.claims + 1, attempts = j.attempts + 1
        from due where j.id = due.id
        returning j.*;
    end
    $$`)
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
          update jobs j set locked_until = p_until, claims = j.claims + 1, attempts = j.attempts + 1
          from due where j.id = due.id
          returning j.id, j.queue, j.key, j.payload, j.attempts, j.claims, j.created_at,
            j.payload::jsonb ->> 'deliveryId' as delivery_id
        ),
        firsts as (
          select distinct on (c.delivery_id) c.id, c.delivery_id from claimed c order by c.delivery_id, c.id
        ),
        leased as (
          update webhook_deliveries d set locked_until = p_lease_until
          where d.id = any(array(select f.delivery_id from firsts f)) and coalesce(d.status, '') = 'pending'
            and d.next_attempt_at <= p_at
            and (d.locked_until is null or d.locked_until <= p_at)
            and (select s.is_active and s.deleted_at is null from webhook_subscriptions s where s.id = d.subscription_id)
          returning d.id, d.subscription_id, d.event_id, d.event_type, d.attempt_count, d.max_attempts, d.horizon_at,
            (select s from webhook_subscriptions s where s.id = d.subscription_id) as subscription,
            (select e.body from events e where e.id = d.event_id) as body
        ),
        sending as (
          select l.id, l.subscription_id, l.event_id, l.event_type, l.attempt_count, l.max_attempts, l.horizon_at,
            (l.subscription).url, (l.subscription).secret, (l.subscription).previous_secret,
            (l.subscription).previous_secret_expires_at, l.body
          from leased l
        )
        select c.id, c.queue, c.key, c.payload, c.attempts, c.claims, c.created_at, to_json(s)
        from claimed c
        left join firsts f on f.id = c.id
        left join sending s on s.id = f.delivery_id;
    end
    $$`)
})
