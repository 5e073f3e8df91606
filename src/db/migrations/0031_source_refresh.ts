/**
 * Freshness of what was learnt from the web. A `url` source keeps the validators its page last answered with
 * (`etag`, `last_modified`) for a conditional GET, and its refresh's state: `refresh_status` (`idle`, `queued`),
 * `checked_at` (the last refresh that read the page), `changed_at` (the last one that found it changed and
 * re-indexed it), `gone_since` (answering 404 or 410 since then; its knowledge goes after the agent's grace).
 * An agent keeps its refresh schedule (`off`, `daily`, `weekly`) with the instant of its next run, and the grace a
 * gone page keeps its knowledge, in days. Refreshes are counted per workspace, environment and month against the
 * plan's cap (`refresh_usage`). A crawl counts the pages it met that the agent already had (`skipped_known`): they
 * are refreshed from the bytes the crawl read, not kept twice.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    alter table knowledge_sources
      add column etag text,
      add column last_modified text,
      add column refresh_status text not null default 'idle',
      add column checked_at timestamptz,
      add column changed_at timestamptz,
      add column gone_since timestamptz`)
  yield* sql.unsafe(`
    alter table agents
      add column refresh_schedule text not null default 'off',
      add column refresh_next_at timestamptz,
      add column gone_grace_days integer not null default 7`)
  // the schedules' sweep reads the due agents only
  yield* sql.unsafe(`create index agents_refresh_due on agents (refresh_next_at) where refresh_next_at is not null`)
  // a crawl of a site meets pages the agent already has: found by address, refreshed from the page read
  yield* sql.unsafe(`
    create index knowledge_sources_by_url on knowledge_sources (agent_id, source_ref)
    where type = 'url' and deleted_at is null and lesson_source_id is null`)
  yield* sql.unsafe(`alter table crawls add column skipped_known integer not null default 0`)
  yield* sql.unsafe(`
    create table refresh_usage (
      workspace_id text not null,
      environment text not null,
      month text not null,
      refreshes integer not null,
      primary key (workspace_id, environment, month)
    )`)
})
