/**
 * The JobQueue's claim as one statement. A claim takes the queue's advisory
 * lock before it reads what is claimable (so per-key order and caps hold
 * across processes); done from the client that was a transaction of four round
 * trips (begin, lock, claim, commit). `jobs_claim` does the same inside the
 * database: a VOLATILE PL/pgSQL function reads with a fresh snapshot per
 * statement, so its claim, after the lock, sees every claim committed before
 * it, and the statement's own transaction releases the lock when it ends.
 *
 * `jobs_claimable` is the rule of what may be claimed (also the `claimable`
 * probe's): due, not leased, and room in its key, found by a walk over the
 * distinct keys (a loose index scan of `jobs_key`) and, per key, an index walk
 * of its due jobs, so the cost follows the keys and the jobs taken, not the
 * backlog. Per key: serial (`per_key` null), only its earliest pending job;
 * capped, its earliest due jobs up to the cap less those leased now (counted on
 * `jobs_leased`). Jobs without a key come first in due order. `max_rows` null:
 * no limit.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create function jobs_claimable(p_queue text, p_at timestamptz, p_per_key integer, p_limit integer)
    returns table (id bigint, run_at timestamptz)
    language plpgsql stable
    as $$
    begin
      return query
        select u.id, u.run_at from jobs u
        where u.queue = p_queue and u.status = 'pending' and u.key is null and u.run_at <= p_at
          and (u.locked_until is null or u.locked_until <= p_at)
        order by u.run_at, u.id limit p_limit;
      if p_per_key is null then
        return query
          with recursive keys (key) as (
            (select j.key from jobs j
             where j.queue = p_queue and j.status = 'pending' and j.key is not null order by j.key limit 1)
            union all
            select (select j.key from jobs j
                    where j.queue = p_queue and j.status = 'pending' and j.key is not null and j.key > keys.key
                    order by j.key limit 1)
            from keys where keys.key is not null
          )
          select h.id, h.run_at from keys cross join lateral (
            select x.id, x.run_at, x.locked_until from jobs x
            where x.queue = p_queue and x.key = keys.key and x.status = 'pending'
            order by x.id limit 1
          ) h
          where keys.key is not null and h.run_at <= p_at and (h.locked_until is null or h.locked_until <= p_at);
      else
        return query
          with recursive keys (key) as (
            (select j.key from jobs j
             where j.queue = p_queue and j.status = 'pending' and j.key is not null order by j.key limit 1)
            union all
            select (select j.key from jobs j
                    where j.queue = p_queue and j.status = 'pending' and j.key is not null and j.key > keys.key
                    order by j.key limit 1)
            from keys where keys.key is not null
          )
          select c.id, c.run_at from keys cross join lateral (
            select x.id, x.run_at from jobs x
            where x.queue = p_queue and x.key = keys.key and x.status = 'pending' and x.key is not null
              and x.run_at <= p_at and (x.locked_until is null or x.locked_until <= p_at)
            order by x.run_at, x.id
            limit greatest(least(p_limit, p_per_key - (
              select count(*) from jobs b
              where b.queue = p_queue and b.key = keys.key and b.status = 'pending'
                and b.locked_until is not null and b.locked_until > p_at))::integer, 0)
          ) c
          where keys.key is not null;
      end if;
    end
    $$`)
  // p_async: the claim commits without waiting for the WAL flush (false inside a caller's transaction,
  // whose commit mode is the caller's)
  yield* sql.unsafe(`
    create function jobs_claim(
      p_queue text, p_at timestamptz, p_until timestamptz, p_per_key integer, p_limit integer, p_async boolean
    )
    returns setof jobs
    language plpgsql volatile
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
        update jobs j set locked_until = p_until, claims = j.claims + 1
        from due where j.id = due.id
        returning j.*;
    end
    $$`)
})
