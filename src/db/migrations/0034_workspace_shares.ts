/**
 * Fair shares: a job's group (`group_key`, the workspace that owns it) beside its key, and claims that take no job
 * whose group already has `p_per_group` jobs of the queue in flight (leased now, across processes), so one
 * workspace's slow work (a receiver that never answers, a slow site) cannot hold every slot of a pool while another
 * workspace's jobs wait. Jobs without a group (those queued before this migration, queues that do not use groups)
 * are not capped.
 *
 * New overloads, each with `p_per_group` before `p_limit`; the old ones stay as they were (a process of the
 * previous release still calls them during a deploy), and `p_per_group` null claims exactly as they do:
 * - `jobs_claimable(queue, at, per_key, per_group, limit)`: the keyed jobs the old rule finds (one walk of the
 *   keys), the unkeyed jobs without a group in due order, and the unkeyed jobs of each group (a walk of the groups
 *   over `jobs_unkeyed_group_due`, each taking at most its room); then, per group, its earliest candidates up to
 *   the cap less its jobs leased now (counted on `jobs_group_leased`, so the count follows the jobs in flight,
 *   not the group's backlog).
 * - `jobs_claim`, `jobs_claim_after`, `webhook_jobs_claim` (as migration 0023 wrote it) and `ingest_jobs_claim`
 *   (as migration 0030 wrote it) claim through it; the last two return the job's group with its row.
 * All keep `enable_seqscan` off (migration 0019). The new `jobs_claimable` ranks a group's candidates (a few rows,
 * no index gives that order), so it sorts: `enable_sort` stays on there, and `jit` is off, as a claim this small
 * never gains from it (on PostgreSQL a cost inflated by a disabled plan node brings JIT compilation, seconds a
 * claim).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`alter table jobs add column group_key text`)
  yield* sql.unsafe(`
    create index jobs_group_leased on jobs (queue, group_key)
    where status = 'pending' and locked_until is not null and group_key is not null`)
  yield* sql.unsafe(`
    create index jobs_unkeyed_group_due on jobs (queue, group_key, run_at, id)
    where status = 'pending' and key is null`)
  yield* sql.unsafe(`
    create or replace function jobs_claimable(
      p_queue text, p_at timestamptz, p_per_key integer, p_per_group integer, p_limit integer
    )
    returns table (id bigint, run_at timestamptz)
    language plpgsql stable
    set enable_seqscan = off set jit = off
    as $$
    begin
      if p_per_group is null then
        return query select c.id, c.run_at from jobs_claimable(p_queue, p_at, p_per_key, p_limit) c;
        return;
      end if;
      return query
        with recursive groups (g) as (
          (select j.group_key from jobs j
           where j.queue = p_queue and j.status = 'pending' and j.key is null and j.group_key is not null
           order by j.group_key limit 1)
          union all
          select (select j.group_key from jobs j
                  where j.queue = p_queue and j.status = 'pending' and j.key is null and j.group_key > groups.g
                  order by j.group_key limit 1)
          from groups where groups.g is not null
        ),
        candidates as (
          -- the keyed ones by the key rule, at most a group's cap of each key (a key is one group's); the old
          -- function's unkeyed ones are left out: they come below
          select j.id, j.run_at, j.group_key from jobs j
          where j.id = any(array(
            select c.id from jobs_claimable(p_queue, p_at, p_per_key, least(p_limit, p_per_group)) c))
            and j.key is not null
          union all
          (select u.id, u.run_at, u.group_key from jobs u
           where u.queue = p_queue and u.status = 'pending' and u.key is null and u.group_key is null
             and u.run_at <= p_at and (u.locked_until is null or u.locked_until <= p_at)
           order by u.run_at, u.id limit p_limit)
          union all
          select x.id, x.run_at, x.group_key from groups cross join lateral (
            select y.id, y.run_at, y.group_key from jobs y
            where y.queue = p_queue and y.status = 'pending' and y.key is null and y.group_key = groups.g
              and y.run_at <= p_at and (y.locked_until is null or y.locked_until <= p_at)
            order by y.run_at, y.id
            limit greatest(least(p_limit, p_per_group - (
              select count(*) from jobs b
              where b.queue = p_queue and b.group_key = groups.g and b.status = 'pending'
                and b.locked_until is not null and b.locked_until > p_at))::integer, 0)
          ) x
          where groups.g is not null
        ),
        ranked as (
          select c.id, c.run_at, c.group_key,
            row_number() over (partition by c.group_key order by c.run_at, c.id) as rank
          from candidates c
        ),
        room as (
          select r.group_key, p_per_group - (
            select count(*) from jobs b
            where b.queue = p_queue and b.group_key = r.group_key and b.status = 'pending'
              and b.locked_until is not null and b.locked_until > p_at) as free
          from (select distinct c.group_key from candidates c where c.group_key is not null) r
        )
        select r.id, r.run_at from ranked r
        left join room m on m.group_key = r.group_key
        where r.group_key is null or r.rank <= m.free;
    end
    $$`)
  yield* sql.unsafe(`
    create or replace function jobs_claim(
      p_queue text, p_at timestamptz, p_until timestamptz, p_per_key integer, p_per_group integer, p_limit integer,
      p_async boolean
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
          where j.id = any(array(select c.id from jobs_claimable(p_queue, p_at, p_per_key, p_per_group, p_limit) c))
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
    create or replace function jobs_claim_after(
      p_written integer, p_done bigint[], p_done_claims integer[],
      p_queue text, p_at timestamptz, p_until timestamptz, p_per_key integer, p_per_group integer, p_limit integer,
      p_async boolean
    )
    returns setof jobs
    language plpgsql volatile
    set enable_seqscan = off
    as $$
    begin
      if p_async then
        perform set_config('synchronous_commit', 'off', true);
      end if;
      delete from jobs j using unnest(p_done, p_done_claims) as d (id, claims)
      where j.id = d.id and j.claims = d.claims;
      if p_limit > 0 then
        return query select * from jobs_claim(p_queue, p_at, p_until, p_per_key, p_per_group, p_limit, p_async);
      end if;
    end
    $$`)
  yield* sql.unsafe(`
    create or replace function webhook_jobs_claim(
      p_ids text[], p_attempted_at timestamptz[], p_status integer[], p_duration integer[], p_excerpt text[],
      p_attempts integer[], p_subscriptions text[],
      p_ended bigint[], p_ended_claims integer[],
      p_queue text, p_at timestamptz, p_until timestamptz, p_per_key integer, p_per_group integer, p_limit integer,
      p_async boolean, p_lease_until timestamptz
    )
    returns table (
      id bigint, queue text, key text, group_key text, payload text, attempts integer, claims integer,
      created_at timestamptz, alongside json
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
          where j.id = any(array(select c.id from jobs_claimable(p_queue, p_at, p_per_key, p_per_group, p_limit) c))
          order by j.run_at, j.id
          limit p_limit
          for update skip locked
        ),
        claimed as (
          update jobs j set locked_until = p_until, claims = j.claims + 1, attempts = j.attempts + 1
          from due where j.id = due.id
          returning j.id, j.queue, j.key, j.group_key, j.payload, j.attempts, j.claims, j.created_at,
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
        select c.id, c.queue, c.key, c.group_key, c.payload, c.attempts, c.claims, c.created_at, to_json(s)
        from claimed c
        left join firsts f on f.id = c.id
        left join sending s on s.id = f.delivery_id;
    end
    $$`)
  yield* sql.unsafe(`
    create or replace function ingest_jobs_claim(
      p_ended bigint[], p_ended_claims integer[],
      p_queue text, p_at timestamptz, p_until timestamptz, p_per_key integer, p_per_group integer, p_limit integer,
      p_async boolean
    )
    returns table (
      id bigint, queue text, key text, group_key text, payload text, attempts integer, claims integer,
      created_at timestamptz, alongside json
    )
    language plpgsql volatile
    set enable_seqscan = off
    as $$
    #variable_conflict use_column
    begin
      if p_async then
        perform set_config('synchronous_commit', 'off', true);
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
          where j.id = any(array(select c.id from jobs_claimable(p_queue, p_at, p_per_key, p_per_group, p_limit) c))
          order by j.run_at, j.id
          limit p_limit
          for update skip locked
        ),
        claimed as (
          update jobs j set locked_until = p_until, claims = j.claims + 1, attempts = j.attempts + 1
          from due where j.id = due.id
          returning j.id, j.queue, j.key, j.group_key, j.payload, j.attempts, j.claims, j.created_at,
            j.payload::jsonb ->> 'sourceId' as source_id
        ),
        started as (
          update knowledge_sources s set status = 'processing', phase = 'fetching', progress = 5,
            attempts = s.attempts + 1, next_attempt_at = null, started_at = p_at, updated_at = p_at
          from claimed c
          where s.id = c.source_id and s.deleted_at is null and s.status not in ('indexed', 'failed')
          returning c.id as job_id, s.*
        )
        select c.id, c.queue, c.key, c.group_key, c.payload, c.attempts, c.claims, c.created_at,
          case when st.job_id is null then null else json_build_object(
            'source', to_jsonb(st) - 'job_id' - 'content' - 'extracted_text' - 'page_body'
              || jsonb_build_object('seq', st.seq::text, 'size_bytes', st.size_bytes::text),
            'categories', coalesce(
              (select json_agg(json_build_object(
                  'id', k.id, 'agent_id', k.agent_id, 'name', k.name, 'description', k.description,
                  'position', k.position, 'created_at', k.created_at, 'updated_at', k.updated_at
                ) order by k.position, k.seq)
               from categories k
               where k.workspace_id = st.workspace_id and k.environment = st.environment and k.agent_id = st.agent_id),
              '[]'::json)
          ) end
        from claimed c
        left join started st on st.job_id = c.id;
    end
    $$`)
})
