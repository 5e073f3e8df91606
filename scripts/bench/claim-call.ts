/**
 * The webhook dispatcher's claim call on PostgreSQL, alone: what one
 * `webhook_jobs_claim` costs the database in a drain, without the service,
 * the receiver or their noise. Two throwaway databases, one migrated through
 * 0019 (the claim over nested functions, migration 0017) and one migrated
 * fully (today's claim), get the same backlog of `deliveries` pending
 * deliveries with their jobs; each is drained the way the dispatcher drains
 * it: claims of 8 (the per-subscription cap), each carrying the previous
 * claim's 8 successes and ended jobs. The rounds alternate between the two,
 * so both see the same machine. Counted: the round trip of each claim that
 * carried 8 and took 8 (one `pg` client, statement text as the dispatcher
 * sends it).
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { runMigrations } from "../../src/db/Migrator.js"
import { migrations } from "../../src/db/migrations/index.js"
import { fmt, pg, ratio, type Section, throwawayDatabase } from "./lib.js"

const deliveries = Number(process.env["BENCH_DELIVERIES"] ?? 2_000)
const rounds = Number(process.env["BENCH_CLAIM_ROUNDS"] ?? 6)
const perClaim = 8

/** The migrations up to and including `last`. */
const through = (last: string) =>
  Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= last)) as typeof migrations

const migrated = async (label: string, set: typeof migrations) => {
  const url = await throwawayDatabase({ prefix: "claims" })
  await Effect.runPromise(Effect.scoped(Effect.provide(runMigrations(set), PgClient.layer({ url: Redacted.make(url) }))))
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const at = new Date("2026-01-01T00:00:00Z")
  await client.query(
    `insert into workspaces (id, name, owner_email, plan, created_at) values ('ws_claims', 'Claims', 'owner@example.com', 'free', $1)`,
    [at]
  )
  await client.query(
    `insert into webhook_subscriptions (id, workspace_id, environment, url, events, is_active, secret, created_at, updated_at)
     values ('whs_claims', 'ws_claims', 'test', 'https://example.com/hook', '{agent.created}', true, 'secret', $1, $1)`,
    [at]
  )
  return { label, client, times: [] as Array<number> }
}

type Target = Awaited<ReturnType<typeof migrated>>

interface ClaimedRow {
  readonly id: string
  readonly claims: number
  readonly alongside: { readonly id: string } | null
}

/** One backlog drained: `deliveries` due deliveries (an `agent.created`-sized body each), claimed 8 at a time. */
const drain = async (target: Target, round: number) => {
  const { client } = target
  const at = new Date(Date.UTC(2026, 0, 1, 0, round))
  const body = JSON.stringify({ type: "agent.created", data: { agent: { id: "agt_bench", name: "x".repeat(400) } } })
  await client.query(
    `insert into events (id, workspace_id, environment, type, created_at, body)
     select 'evt_${round}_' || g, 'ws_claims', 'test', 'agent.created', $1, $2 from generate_series(1, $3::integer) g`,
    [at, body, deliveries]
  )
  await client.query(
    `insert into webhook_deliveries (id, subscription_id, workspace_id, environment, event_id, event_type, status,
       horizon_at, next_attempt_at, created_at)
     select 'whd_${round}_' || g, 'whs_claims', 'ws_claims', 'test', 'evt_${round}_' || g, 'agent.created', 'pending',
       $2, $1, $1 from generate_series(1, $3::integer) g`,
    [at, new Date(at.getTime() + 86_400_000), deliveries]
  )
  await client.query(
    `insert into jobs (queue, key, payload, status, run_at, created_at)
     select 'webhooks', 'whs_claims', json_build_object('deliveryId', 'whd_${round}_' || g)::text, 'pending', $1, $1
     from generate_series(1, $2::integer) g`,
    [at, deliveries]
  )
  const until = new Date(at.getTime() + 30_000)
  let ended: ReadonlyArray<ClaimedRow> = []
  let settled = 0
  for (let i = 0; i <= deliveries; i++) {
    const ids = ended.flatMap((job) => (job.alongside === null ? [] : [job.alongside.id]))
    const started = performance.now()
    const result = await client.query<ClaimedRow>(
      `select id, queue, key, payload, attempts, claims, created_at, alongside from webhook_jobs_claim(
         $1::text[], $2::timestamptz[], $3::integer[], $4::integer[], $5::text[], $6::integer[], $7::text[],
         $8::bigint[], $9::integer[], $10, $11, $12, $13::integer, $14::integer, $15, $16)`,
      [
        ids,
        ids.map(() => at.toISOString()),
        ids.map(() => 200),
        ids.map(() => 3),
        ids.map(() => "ok"),
        ids.map(() => 1),
        ids.length === 0 ? [] : ["whs_claims"],
        ended.map((job) => job.id),
        ended.map((job) => job.claims),
        "webhooks",
        at,
        until,
        perClaim,
        perClaim,
        true,
        until
      ]
    )
    const millis = performance.now() - started
    if (ids.length === perClaim && result.rows.length === perClaim) target.times.push(millis)
    settled += ended.length
    if (result.rows.length === 0) break
    ended = result.rows
  }
  if (settled !== deliveries) throw new Error(`${target.label}: ${settled} of ${deliveries} settled`)
}

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length

export const claimCall = async (): Promise<Section> => {
  const nested = await migrated("nested functions (migrations through 0019)", through("0019_claim_plans"))
  const flat = await migrated("one function (all migrations)", migrations)
  try {
    for (let round = 0; round < rounds; round++) {
      for (const target of round % 2 === 0 ? [nested, flat] : [flat, nested]) await drain(target, round)
    }
    for (const t of [nested, flat]) {
      console.log(`  ${t.label}: ${t.times.length} claims, p50 ${fmt(percentile(t.times, 50), 3)} ms`)
    }
    return {
      title: `Webhook claim call on PostgreSQL (${rounds} drains of ${deliveries} deliveries each, claims of ${perClaim} carrying ${perClaim} successes)`,
      lines: [
        "| claim | claims | p50 ms | p90 ms | mean ms | p50 vs nested |",
        "|---|---:|---:|---:|---:|---:|",
        ...[nested, flat].map(
          (t) =>
            `| ${t.label} | ${t.times.length} | ${fmt(percentile(t.times, 50), 3)} | ${fmt(percentile(t.times, 90), 3)} | ` +
            `${fmt(mean(t.times), 3)} | ${ratio(percentile(t.times, 50), percentile(nested.times, 50))} |`
        )
      ]
    }
  } finally {
    await Promise.all([nested.client.end(), flat.client.end()])
  }
}
