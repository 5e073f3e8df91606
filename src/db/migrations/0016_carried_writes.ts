/**
 * A worker's claim carries the final writes of the jobs that just ended (see
 * `WorkerOptions.finish` in `layers/JobQueue.ts`): one statement, one round
 * trip, one commit for "record what these jobs did, settle them, claim their
 * successors", where it took two.
 *
 * `jobs_claim_after` settles the ended jobs (each fenced by its claim) and then
 * claims as `jobs_claim` does. It runs after its first argument, the carried
 * write: an expression doing the write (a function call) is an argument of
 * the call, so it is evaluated before the body runs, and the claim's own
 * statements, each with a fresh snapshot, see the jobs deleted just before, so
 * per-key caps count the successors' room exactly. Like every claim it commits
 * without waiting for the WAL flush (`p_async`), the carried write with it.
 *
 * `webhook_deliveries_succeeded` is the webhook dispatcher's carried write:
 * successful attempts recorded, their deliveries marked succeeded, their
 * subscriptions' failure streaks cleared. Inside PL/pgSQL its statements are
 * planned once per session, not at every call.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create function jobs_claim_after(
      p_written integer, p_done bigint[], p_done_claims integer[],
      p_queue text, p_at timestamptz, p_until timestamptz, p_per_key integer, p_limit integer, p_async boolean
    )
    returns setof jobs
    language plpgsql volatile
    as $$
    begin
      if p_async then
        perform set_config('synchronous_commit', 'off', true);
      end if;
      delete from jobs j using unnest(p_done, p_done_claims) as d (id, claims)
      where j.id = d.id and j.claims = d.claims;
      if p_limit > 0 then
        return query select * from jobs_claim(p_queue, p_at, p_until, p_per_key, p_limit, p_async);
      end if;
    end
    $$`)
  yield* sql.unsafe(`
    create function webhook_deliveries_succeeded(
      p_ids text[], p_at timestamptz[], p_status integer[], p_duration integer[], p_excerpt text[],
      p_attempts integer[], p_subscriptions text[]
    )
    returns integer
    language plpgsql volatile
    as $$
    begin
      insert into webhook_attempts (delivery_id, attempted_at, response_status, duration_ms, response_body_excerpt, error)
      select v.id, v.at, v.status, v.duration, v.excerpt, null
      from unnest(p_ids, p_at, p_status, p_duration, p_excerpt) as v (id, at, status, duration, excerpt);
      update webhook_deliveries d set status = 'succeeded', attempt_count = v.attempts, last_attempted_at = v.at,
        first_attempt_at = coalesce(d.first_attempt_at, v.at), response_status = v.status,
        next_attempt_at = null, locked_until = null, last_error = null
      from unnest(p_ids, p_at, p_status, p_attempts) as v (id, at, status, attempts)
      where d.id = v.id;
      update webhook_subscriptions set consecutive_failures = 0, failing_since = null, degraded = false
      where id = any(p_subscriptions) and (consecutive_failures <> 0 or degraded);
      return cardinality(p_ids);
    end
    $$`)
})
