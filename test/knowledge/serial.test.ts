/**
 * A local site of 30 pages on 127.0.0.1, ingested by batch on the wall clock:
 * every source is indexed, one at a time per agent in creation order (from the
 * recorded start and end instants of each source), the first page sets the
 * categories and later pages put their Q&A into them, and two agents run at
 * the same time (INGEST_CONCURRENCY 2).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Harness, testServer } from "../support/harness.js"
import { createAgent, html, page, serveSite, waitSettled } from "./support.js"

const topics = ["Shipping", "Returns", "Payments", "Accounts"] as const

const sitePage = (n: number) =>
  n === 1
    ? page("Example Shop help centre", [
        ["Shipping", "We ship every order within two business days. Delivery in Europe takes five days."],
        ["Returns", "Items can be returned within 30 days of delivery for a full refund of the price."],
        ["Payments", "We accept credit cards, debit cards and bank transfers. Invoices are sent by e-mail."],
        ["Accounts", "Create an account to follow your orders. Reset your password from the sign-in page."]
      ])
    : page(`Help article ${n}`, [
        [
          `${topics[n % 4]} question ${n}`,
          `Article ${n} explains ${topics[n % 4]!.toLowerCase()} in more detail: ${topics[n % 4]!.toLowerCase()} rules for order ${n} apply to every customer.`
        ],
        [`More about ${topics[(n + 1) % 4]}`, `Also about ${topics[(n + 1) % 4]!.toLowerCase()}: see page ${n} for the ${topics[(n + 1) % 4]!.toLowerCase()} policy details.`]
      ])

interface Interval {
  readonly id: string
  readonly agent_id: string
  readonly seq: string
  readonly started_at: Date
  readonly finished_at: Date
}

layer(testServer(), { excludeTestServices: true })("ingestion order", (it) => {
  it.effect(
    "30 pages: all indexed, strictly one at a time per agent in order, categories from page 1, two workspaces' agents in parallel",
    () =>
      Effect.gen(function* () {
        const site = yield* serveSite((req, res) => {
          const n = Number(/^\/page\/(\d+)$/.exec(req.url ?? "")?.[1] ?? 0)
          // a short real delay, so overlapping work would show in the instants
          setTimeout(() => (n > 0 ? html(res, sitePage(n)) : html(res, "not found", 404)), 15)
        })
        const h = yield* Harness
        // two workspaces: one workspace's agents share its part of the ingestion slots (INGEST_WORKSPACE_SHARE, 1 of 2)
        const workspaces = [yield* h.seed(), yield* h.seed()]
        const keys = workspaces.map((ws) => ws.secretTest)
        const agents = [yield* createAgent(h, keys[0]!, "Shop A"), yield* createAgent(h, keys[1]!, "Shop B")]
        const urls = Array.from({ length: 30 }, (_, i) => `${site.origin}/page/${i + 1}`)
        const batches = yield* Effect.forEach(
          agents,
          (agentId, i) => h.call("POST", `/v1/agents/${agentId}/knowledge/batch`, { key: keys[i]!, body: { urls } }),
          { concurrency: 2 }
        )
        for (const batch of batches) expect(batch.status, JSON.stringify(batch.body).slice(0, 300)).toBe(201)
        const ids = batches.map((b) => b.body.data.sources.map((s: any) => s.id as string))

        const settled = yield* Effect.forEach(agents, (agentId, i) => waitSettled(h, keys[i]!, agentId, ids[i]!, 6000))
        for (const sources of settled) {
          expect(sources.map((s: any) => s.status)).toEqual(Array(30).fill("indexed"))
          expect(sources.every((s: any) => s.attempts === 1 && s.phase === "done" && s.progress === 100)).toBe(true)
        }

        const sql = yield* SqlClient.SqlClient
        const intervals = yield* Effect.orDie(sql<Interval>`
          select id, agent_id, seq::text as seq, started_at, finished_at from knowledge_sources
          where workspace_id in (${workspaces[0]!.workspace.id}, ${workspaces[1]!.workspace.id}) order by knowledge_sources.seq`)
        for (const agentId of agents) {
          const mine = intervals.filter((r) => r.agent_id === agentId)
          expect(mine).toHaveLength(30)
          for (let i = 1; i < mine.length; i++) {
            // the next source starts only after the previous one ended, and in creation order
            expect(mine[i]!.started_at.getTime(), `source ${i} of ${agentId}`).toBeGreaterThanOrEqual(mine[i - 1]!.finished_at.getTime())
          }
        }
        const [a, b] = agents.map((agentId) => intervals.filter((r) => r.agent_id === agentId))
        const overlaps = a!.some((x) => b!.some((y) => x.started_at < y.finished_at && y.started_at < x.finished_at))
        expect(overlaps, "the two agents' sources ran at the same time").toBe(true)

        for (const agentId of agents) {
          const categories = yield* h.call("GET", `/v1/agents/${agentId}/categories?limit=100`, { key: keys[agents.indexOf(agentId)]! })
          const names = categories.body.data.map((c: any) => c.name as string)
          const firstFinished = intervals.find((r) => r.agent_id === agentId)!.finished_at
          // every category exists since the first page; none was added by a later page
          const created = yield* Effect.orDie(sql<{ created_at: Date }>`
            select created_at from categories where agent_id = ${agentId}`)
          expect(created.every((c) => c.created_at.getTime() <= firstFinished.getTime())).toBe(true)
          expect(names.length).toBeGreaterThanOrEqual(1)
          const later = yield* Effect.orDie(sql<{ category_id: string | null }>`
            select q.category_id from qa_items q join knowledge_sources s on s.id = q.source_id
            where q.agent_id = ${agentId} and s.id <> ${ids[agents.indexOf(agentId)]![0]!}`)
          expect(later.length).toBeGreaterThan(0)
          const ids_ = new Set(categories.body.data.map((c: any) => c.id))
          expect(later.filter((q) => q.category_id !== null).length, "later pages' Q&A placed in the categories").toBeGreaterThan(0)
          expect(later.every((q) => q.category_id === null || ids_.has(q.category_id))).toBe(true)
        }
        // each page was fetched once per agent
        expect(site.hits.length).toBe(60)
      }).pipe(Effect.scoped),
    180_000
  )
})
