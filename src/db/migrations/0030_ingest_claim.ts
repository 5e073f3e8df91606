/**
 * The ingestion worker's claim (`ingest_jobs_claim`) as one call that also starts what it claims: the ended jobs
 * deleted (each fenced by its claim), the claimable jobs leased under the queue's advisory lock as `jobs_claim`
 * leases them, and each claimed job's source, unless deleted or settled, made `processing` with one more attempt
 * counted, as the pipeline's own start does (`KnowledgeRepo.start`). What the job's handler needs comes back with
 * it as JSON (`alongside`): the source's row (without its input, its text and a crawl's page, which are read when
 * needed; `seq` and `size_bytes` as text) and its agent's categories, in order. Null: nothing to start.
 *
 * The start and the categories' read were two statements of their own for every source; here they ride on the
 * claim that was sent anyway. Planned with `enable_seqscan` off like the other claims (migration 0019).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    create function ingest_jobs_claim(
      p_ended bigint[], p_ended_claims integer[],
      p_queue text, p_at timestamptz, p_until timestamptz, p_per_key integer, p_limit integer, p_async boolean
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
            j.payload::jsonb ->> 'sourceId' as source_id
        ),
        started as (
          update knowledge_sources s set status = 'processing', phase = 'fetching', progress = 5,
            attempts = s.attempts + 1, next_attempt_at = null, started_at = p_at, updated_at = p_at
          from claimed c
          where s.id = c.source_id and s.deleted_at is null and s.status not in ('indexed', 'failed')
          returning c.id as job_id, s.*
        )
        select c.id, c.queue, c.key, c.payload, c.attempts, c.claims, c.created_at,
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
