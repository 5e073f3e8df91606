/**
 * The webhook dispatcher's claim as one call of a function of its own
 * (`WorkerOptions.claimCall` in `layers/JobQueue.ts`): the successes carried
 * by the claim recorded (`webhook_deliveries_succeeded`), the ended jobs
 * settled and their successors claimed (`jobs_claim_after`), and the claimed
 * jobs' deliveries leased, each a statement of the function.
 *
 * Sent as one statement text (a CTE around `jobs_claim_after` and the lease),
 * the claim was parsed and planned at every claim, which PostgreSQL's log
 * showed taking nearly as long as running it.
 * Inside PL/pgSQL the statements are planned once per session, and the call
 * itself is a short text.
 *
 * The lease runs after the claim, with a snapshot of its own: it sees every
 * delivery committed before the claim took the queue's lock, and the deliveries
 * the same call just recorded as succeeded are no longer pending, so a
 * duplicate job of one of them finds it done. Rows: the claimed jobs' columns,
 * and for each job whose delivery was leased that delivery with what sending
 * it needs, as JSON (`alongside`, null otherwise; of two jobs of one delivery
 * in one claim, the first by id gets it, the other finds it taken).
 *
 * `webhook_deliveries_lease` is the one rule of a delivery's lease, also run on
 * its own by a job whose claim did not take its delivery: leased when it is
 * due, unleased and its subscription active, looked up by id (an array, so the
 * plan is an index lookup whatever the planner guesses of how many).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create function webhook_deliveries_lease(p_ids text[], p_at timestamptz, p_until timestamptz)
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
        update webhook_deliveries d set locked_until = p_until
        from webhook_subscriptions s, events e
        where d.id = any(p_ids) and d.status = 'pending' and d.next_attempt_at <= p_at
          and (d.locked_until is null or d.locked_until <= p_at)
          and s.id = d.subscription_id and s.is_active and s.deleted_at is null and e.id = d.event_id
        returning d.id, d.subscription_id, d.event_id, d.event_type, d.attempt_count, d.max_attempts, d.horizon_at,
          s.url, s.secret, s.previous_secret, s.previous_secret_expires_at, e.body;
    end
    $$`)
  yield* sql.unsafe(`
    create function webhook_jobs_claim(
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
    as $$
    #variable_conflict use_column
    declare
      v_claimed jobs[];
      v_deliveries text[];
    begin
      if cardinality(p_ids) > 0 then
        perform webhook_deliveries_succeeded(p_ids, p_attempted_at, p_status, p_duration, p_excerpt, p_attempts,
          p_subscriptions);
      end if;
      select coalesce(array_agg(c), '{}') into v_claimed
      from jobs_claim_after(0, p_ended, p_ended_claims, p_queue, p_at, p_until, p_per_key, p_limit, p_async) c;
      if cardinality(v_claimed) = 0 then
        return;
      end if;
      v_deliveries := array(select c.payload::jsonb ->> 'deliveryId' from unnest(v_claimed) c);
      return query
        with claimed as (
          select c.*, row_number() over (partition by c.payload::jsonb ->> 'deliveryId' order by c.id) as nth
          from unnest(v_claimed) c
        ),
        leased as (select * from webhook_deliveries_lease(v_deliveries, p_at, p_lease_until))
        select c.id, c.queue, c.key, c.payload, c.attempts, c.claims, c.created_at, to_json(l)
        from claimed c left join leased l on l.id = (c.payload::jsonb ->> 'deliveryId') and c.nth = 1;
    end
    $$`)
})
