/**
 * The JobQueue's work items (`layers/JobQueue.ts`). A job is `pending` until it
 * is done (then deleted) or given up (`failed`, kept with its reason). A claim
 * is a lease (`locked_until`) fenced by `claims`: only the holder of the latest
 * claim can extend, settle or release it. `id` orders jobs of one key.
 * `hurried`: made due while it ran, so a retry it settles with runs at once.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    create table jobs (
      id bigserial primary key,
      queue text not null,
      key text,
      payload text not null,
      status text not null check (status in ('pending', 'failed')),
      run_at timestamptz not null,
      locked_until timestamptz,
      claims integer not null default 0,
      hurried boolean not null default false,
      attempts integer not null default 0,
      last_error text,
      created_at timestamptz not null,
      finished_at timestamptz
    )`
  yield* sql`create index jobs_due on jobs (queue, run_at) where status = 'pending'`
  yield* sql`create index jobs_key on jobs (queue, key, id) where status = 'pending' and key is not null`
  // E-mails queued before the JobQueue existed: one job per pending e-mail, due when the row was.
  yield* sql`
    insert into jobs (queue, payload, status, run_at, created_at)
    select 'email', json_build_object('emailId', id)::text, 'pending', next_attempt_at, created_at
    from emails where status = 'pending' order by created_at, id`
})
