/**
 * Crawls (`src/crawls`): a crawl of a site for an agent, with its progress counters, and every address it met
 * with what became of it (`crawl_pages`: kept as a source, skipped with a reason, or unreadable), one row per
 * address, so a crawl run again after a restart neither keeps a page twice nor counts it twice. A source made
 * by a crawl names it (`crawl_id`) and carries the bytes the crawl read (`page_body`, `page_type`) until it is
 * indexed, so the page is not fetched again.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table crawls (
      seq bigint generated always as identity,
      id text primary key,
      workspace_id text not null references workspaces (id),
      environment text not null check (environment in ('test', 'live')),
      agent_id text not null references agents (id),
      url text not null,
      origin text not null,
      sitemap_url text,
      keep_to_path boolean not null,
      page_limit integer not null,
      status text not null check (status in ('queued', 'running', 'completed', 'failed', 'canceled')),
      pages_queued integer not null default 0,
      pages_kept integer not null default 0,
      pages_indexed integer not null default 0,
      pages_unindexed integer not null default 0,
      pages_unreadable integer not null default 0,
      skipped_disallowed integer not null default 0,
      skipped_off_origin integer not null default 0,
      skipped_duplicate integer not null default 0,
      skipped_over_limit integer not null default 0,
      skipped_not_html integer not null default 0,
      skipped_noindex integer not null default 0,
      error_code text,
      error text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      started_at timestamptz,
      finished_at timestamptz
    )`
  yield* sql`create index crawls_page on crawls (agent_id, seq desc)`
  // one crawl of a site at a time per agent: a second is refused while the first waits or runs
  yield* sql`create unique index crawls_active on crawls (agent_id, origin) where status in ('queued', 'running')`
  yield* sql`
    create table crawl_pages (
      seq bigint generated always as identity,
      crawl_id text not null references crawls (id),
      url text not null,
      outcome text not null check (outcome in ('kept', 'skipped', 'unreadable')),
      reason text,
      source_id text,
      created_at timestamptz not null,
      primary key (crawl_id, url)
    )`
  yield* sql`create index crawl_pages_page on crawl_pages (crawl_id, seq desc)`
  yield* sql`alter table knowledge_sources add column crawl_id text, add column page_body bytea, add column page_type text`
})
