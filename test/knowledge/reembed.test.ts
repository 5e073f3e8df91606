/**
 * Re-embedding when the deployment's embedding provider changes (src/knowledge/Embeddings.ts): instances of one
 * deployment started one after another on one database, each with its provider: the local hashing embedder at
 * 384 dimensions, then at 256 (another space), through test layers of `Ai` that count, gate or fail `embed`.
 * By the TestClock; `awaitIdle` drives the re-embedding queue's worker.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import type * as SqlClient from "@effect/sql/SqlClient"
import { SqlClient as Sql } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import type { AgentId } from "../../schema/Ids.js"
import * as Ai from "../../layers/Ai.js"
import { hashEmbed } from "../../layers/ai/Text.js"
import type { Database } from "../../layers/Database.js"
import { JobQueue } from "../../layers/JobQueue.js"
import { AdminClient, layer as adminClientLayer } from "../../src/cli/AdminClient.js"
import { batchSize, Embeddings, reembedQueue } from "../../src/knowledge/Embeddings.js"
import { Retrieval } from "../../src/knowledge/Retrieval.js"
import { qaEmbeddingText } from "../../src/qa/QaRepo.js"
import { eventually } from "../support/eventually.js"
import { testDatabaseLayer } from "../support/database.js"
import { Harness, testAdminToken, testServer } from "../support/harness.js"
import { createAgent, waitSettled } from "./support.js"

type DatabaseLayer = Layer.Layer<SqlClient.SqlClient | Database, SqlError>

const before = "local:hash-v1:384"
const after = "local:hash-v1:256"

/** A deployment's database for the whole test: its instances come and go on it. */
const withDatabase = <A, E, R>(use: (database: DatabaseLayer) => Effect.Effect<A, E, R>) =>
  Effect.scoped(Effect.flatMap(Layer.build(testDatabaseLayer), (context) => use(Layer.succeedContext(context))))

type Instance = Layer.Layer.Success<ReturnType<typeof testServer>>

/** An instance on `database` with the provider `ai`, for as long as `use` runs; then it stops (its jobs handed back). */
const instance = <A, E, R>(database: DatabaseLayer, ai: Layer.Layer<Ai.Ai>, use: Effect.Effect<A, E, R | Instance>) =>
  Effect.scoped(Effect.flatMap(Layer.build(testServer({}, { database, ai })), (context) => Effect.provide(use, context)))

/** The messages `self` (and the fibers it starts) logged, beside its own output. */
const logged = <A, E, R>(self: (lines: ReadonlyArray<string>) => Effect.Effect<A, E, R>) => {
  const lines: Array<string> = []
  const capture = Logger.make(({ message }) => {
    lines.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
  })
  return Effect.provide(self(lines), Logger.add(capture))
}

/**
 * The local embedder at 256 dimensions, counting the texts it embeds; `gate`: from that call on (1-based),
 * `embed` waits for `open` (a process stopped mid-way never gets past it); `fail`: what a call fails with.
 */
const provider256 = (options: {
  readonly gate?: { readonly from: number; readonly open: Deferred.Deferred<void> }
  readonly fail?: (call: number) => Ai.AiError | undefined
} = {}) => {
  const record = { calls: 0, texts: 0 }
  const layer = Layer.sync(Ai.Ai, () => {
    const local = Ai.makeLocal(256)
    return {
      ...local,
      embed: (texts: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          const call = ++record.calls
          const failure = options.fail?.(call)
          if (failure !== undefined) return yield* Effect.fail(failure)
          if (options.gate !== undefined && call >= options.gate.from) yield* Deferred.await(options.gate.open)
          record.texts += texts.length
          return yield* local.embed(texts)
        })
    }
  })
  return { layer, record }
}

/** 150 paragraphs: a text source of about 9 chunks and 150 generated Q&A. */
const catalogue = Array.from(
  { length: 150 },
  // each paragraph a sentence the local provider asks a question of ("How long does item 3 of the catalogue take?"): a Q&A each
  (_, i) => `Item ${i} of the catalogue takes ${i + 2} days to ship from warehouse ${i % 7} after the order.`
).join("\n\n")

/** Knowledge written by an instance: an agent with the catalogue, indexed. */
const seedKnowledge = Effect.gen(function* () {
  const h = yield* Harness
  const ws = yield* h.seed()
  const agentId = yield* createAgent(h, ws.secretTest)
  const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
    key: ws.secretTest,
    body: { type: "text", title: "Catalogue", content: catalogue }
  })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  const [source] = yield* waitSettled(h, ws.secretTest, agentId, [created.body.data.id])
  expect(source.status).toBe("indexed")
  return { tenant: { workspaceId: ws.workspace.id, environment: "test" as const }, agentId: agentId as AgentId }
})

/** Every stored row with the text its vector is of. */
const storedRows = Effect.gen(function* () {
  const sql = yield* Sql
  const chunks = yield* sql<{ id: string; content: string; embedding: Array<number> }>`
    select id, content, embedding from knowledge_chunks order by id`
  const qa = yield* sql<{ id: string; question: string; answer: string; embedding: Array<number> }>`
    select id, question, answer, embedding from qa_items order by id`
  return [
    ...chunks.map((r) => ({ text: r.content, embedding: r.embedding.map(Number) })),
    ...qa.map((r) => ({ text: qaEmbeddingText(r.question, r.answer), embedding: r.embedding.map(Number) }))
  ]
}).pipe(Effect.orDie)

/** Whether each stored vector is the one the local embedder gives its text at `dimensions` (as `real`s). */
const expectVectorsOf = (rows: ReadonlyArray<{ readonly text: string; readonly embedding: ReadonlyArray<number> }>, dimensions: number) => {
  const wrong = rows.filter((r) => {
    const expected = hashEmbed(r.text, dimensions)
    return r.embedding.length !== dimensions || r.embedding.some((x, i) => Math.fround(x) !== Math.fround(expected[i]!))
  })
  expect(wrong.map((r) => r.text.slice(0, 40))).toEqual([])
}

const status = Effect.flatMap(Embeddings, (embeddings) => embeddings.status())

const reembedJobs = Effect.gen(function* () {
  const sql = yield* Sql
  const rows = yield* sql<{ n: number }>`select count(*)::int as n from jobs where queue like 'embeddings:%'`
  return rows[0]!.n
}).pipe(Effect.orDie)

const reembedIdle = (space: string) => Effect.flatMap(JobQueue, (queue) => queue.awaitIdle(reembedQueue(space)))

describe("re-embedding when the embedding provider changes", () => {
  it.scoped("a new provider re-embeds every chunk and Q&A with its vectors; retrieval finds with them", () =>
    withDatabase((database) =>
      Effect.gen(function* () {
        const { tenant, agentId } = yield* instance(database, Ai.layerLocal, seedKnowledge)
        const seeded = yield* instance(database, Ai.layerLocal, Effect.zip(storedRows, status))
        const [rows, first] = seeded
        expect(rows.length).toBeGreaterThan(2 * batchSize)
        expectVectorsOf(rows, 384)
        expect(first).toMatchObject({ space: before, configured_space: before, status: "none" })

        const switched = provider256()
        yield* logged((lines) => instance(
          database,
          switched.layer,
          Effect.gen(function* () {
            yield* reembedIdle(after)
            // the start log says what happens, and the job when it is over
            expect(lines.filter((l) => l.startsWith("embeddings:"))).toEqual([
              `embeddings: provider changed from ${before} to ${after}: re-embedding ${rows.length} rows in the background; ` +
                "retrieval uses text search and the rows already done meanwhile (`npm run cli -- embeddings status`)",
              `embeddings: re-embedding into ${after} from ${before}: 0 of ${rows.length} rows done`,
              `embeddings: re-embedded ${rows.length} rows into ${after}`
            ])
            expectVectorsOf(yield* storedRows, 256)
            expect(switched.record.texts).toBe(rows.length)
            const done = yield* status
            expect(done).toMatchObject({
              space: after,
              previous_space: before,
              configured_space: after,
              status: "done",
              done: rows.length,
              total: rows.length,
              last_error: null
            })
            expect(done.finished_at).not.toBeNull()
            // the admin CLI's view of it
            const h = yield* Harness
            const viaRpc = yield* Effect.flatMap(AdminClient, (admin) => admin.EmbeddingsStatus()).pipe(
              Effect.provide(
                adminClientLayer({ url: Option.some(h.url), adminToken: Option.some(Redacted.make(testAdminToken)) }).pipe(
                  Layer.provide(NodeContext.layer)
                )
              )
            )
            expect(viaRpc).toEqual(done)
            const hits = yield* Effect.flatMap(Retrieval, (r) => r.search(tenant, agentId, "Which warehouse ships item 42?"))
            expect(hits[0]?.text ?? "").toContain("Item 42 of the catalogue")
          })
        ))
        // the next start of the same provider finds nothing to do
        const again = provider256()
        yield* instance(database, again.layer, Effect.zip(reembedIdle(after), reembedJobs)).pipe(
          Effect.tap(([, jobs]) => expect(jobs).toBe(0))
        )
        expect(again.record.texts).toBe(0)
      })
    ), { timeout: 120_000 })

  it.scoped("stopped mid-way, the re-embedding resumes at its cursor on the next instance", () =>
    withDatabase((database) =>
      Effect.gen(function* () {
        yield* instance(database, Ai.layerLocal, seedKnowledge)
        const total = (yield* instance(database, Ai.layerLocal, storedRows)).length
        // the third batch never gets its vectors: the instance stops while it waits
        const open = yield* Deferred.make<void>()
        const stopped = provider256({ gate: { from: 3, open } })
        const midway = yield* instance(
          database,
          stopped.layer,
          Effect.gen(function* () {
            yield* eventually(Effect.sync(() => stopped.record.calls), (calls) => calls >= 3, { label: "third batch asked for" })
            return yield* status
          })
        )
        expect(midway.status).toBe("running")
        expect(midway.done).toBe(stopped.record.texts)
        expect(midway.done).toBeGreaterThan(batchSize)
        expect(midway.done).toBeLessThan(total)

        const resumed = provider256()
        yield* instance(
          database,
          resumed.layer,
          Effect.gen(function* () {
            // the job handed back on the stop is still queued: this start queues none
            expect(yield* reembedJobs).toBe(1)
            yield* reembedIdle(after)
            expect(yield* status).toMatchObject({ status: "done", done: total, total })
            expectVectorsOf(yield* storedRows, 256)
          })
        )
        // only the rows after the cursor were embedded again
        expect(resumed.record.texts).toBe(total - midway.done)
      })
    ), { timeout: 120_000 })

  it.scoped("instances starting together queue one job; no rows, or rows of an unrecorded space: only a record", () =>
    withDatabase((database) =>
      Effect.gen(function* () {
        // no rows: each start records its provider's space, and queues nothing
        const empty = yield* instance(database, Ai.layerLocal, Effect.zip(status, reembedJobs))
        expect(empty).toEqual([expect.objectContaining({ space: before, previous_space: null, status: "none" }), 0])
        const emptySwitch = yield* instance(database, provider256().layer, Effect.zip(status, reembedJobs))
        expect(emptySwitch).toEqual([expect.objectContaining({ space: after, previous_space: before, status: "none" }), 0])

        yield* instance(database, provider256().layer, seedKnowledge)
        const total = (yield* instance(database, provider256().layer, storedRows)).length
        // two instances of the old provider start at once; their embedder waits until both have started
        const open = yield* Deferred.make<void>()
        const gated = (record: { texts: number }) =>
          Layer.sync(Ai.Ai, () => {
            const local = Ai.makeLocal()
            return {
              ...local,
              embed: (texts: ReadonlyArray<string>) =>
                Effect.zipRight(Deferred.await(open), Effect.tap(local.embed(texts), () => Effect.sync(() => (record.texts += texts.length))))
            }
          })
        const one = { texts: 0 }
        const two = { texts: 0 }
        yield* Effect.scoped(
          Effect.gen(function* () {
            const [a, b] = yield* Effect.all(
              [Layer.build(testServer({}, { database, ai: gated(one) })), Layer.build(testServer({}, { database, ai: gated(two) }))],
              { concurrency: "unbounded" }
            )
            expect(yield* Effect.provide(reembedJobs, a)).toBe(1)
            yield* Deferred.succeed(open, undefined)
            yield* Effect.all([Effect.provide(reembedIdle(before), a), Effect.provide(reembedIdle(before), b)], { concurrency: "unbounded" })
            expect(yield* Effect.provide(status, b)).toMatchObject({ space: before, previous_space: after, status: "done", done: total })
            expect(yield* Effect.provide(reembedJobs, b)).toBe(0)
          })
        )
        expect(one.texts + two.texts).toBe(total)
        expectVectorsOf(yield* instance(database, Ai.layerLocal, storedRows), 384)

        // a database from before the record (the first start of a version with it): its vectors are taken to be of
        // the provider it starts with, and nothing is embedded again
        yield* instance(database, Ai.layerLocal, Effect.flatMap(Sql, (sql) => sql`update embedding_space set space = null, status = 'none'`))
        const upgraded = provider256()
        const lines = yield* logged((lines) => Effect.as(instance(database, upgraded.layer, status), lines))
        expect(lines).toContain(`embeddings: vectors are of ${after}`)
        expect(upgraded.record.texts).toBe(0)
        expect(yield* instance(database, upgraded.layer, Effect.zip(status, reembedJobs))).toEqual([
          expect.objectContaining({ space: after, status: "none" }),
          0
        ])
      })
    ), { timeout: 120_000 })

  it.scoped("a transient failure is retried by the queue; a lasting one fails with its error, and a start resumes it", () =>
    withDatabase((database) =>
      Effect.gen(function* () {
        yield* instance(database, Ai.layerLocal, seedKnowledge)
        const total = (yield* instance(database, Ai.layerLocal, storedRows)).length
        // the second call times out once: the attempt fails, the queue retries it after its backoff
        const flaky = provider256({
          fail: (call) => (call === 2 ? new Ai.AiError({ message: "embeddings request timed out after 60 seconds", transient: true }) : undefined)
        })
        yield* instance(
          database,
          flaky.layer,
          Effect.gen(function* () {
            yield* reembedIdle(after)
            const waiting = yield* status
            expect(waiting).toMatchObject({ status: "running" })
            expect(waiting.last_error).toMatch(/^the embedding provider did not answer: embeddings request timed out after 60 seconds \(retrying at /)
            yield* TestClock.adjust("5 seconds")
            yield* reembedIdle(after)
            expect(yield* status).toMatchObject({ status: "done", done: total, last_error: null })
          })
        )
        expect(flaky.record.texts).toBe(total)

        // back to 384 with a provider that refuses its key: failed at once, with why
        const refused = new Ai.AiError({ message: "401 Unauthorized: invalid API key", transient: false })
        const refusing = Layer.sync(Ai.Ai, () => ({ ...Ai.makeLocal(), embed: () => Effect.fail(refused) }))
        yield* instance(
          database,
          refusing,
          Effect.gen(function* () {
            yield* reembedIdle(before)
            expect(yield* status).toMatchObject({
              space: before,
              status: "failed",
              done: 0,
              last_error: "the embedding provider failed: 401 Unauthorized: invalid API key"
            })
          })
        )
        // the key mended, a start queues it again and it completes
        yield* instance(
          database,
          Ai.layerLocal,
          Effect.gen(function* () {
            yield* reembedIdle(before)
            expect(yield* status).toMatchObject({ space: before, status: "done", done: total, last_error: null })
            expectVectorsOf(yield* storedRows, 384)
          })
        )
      })
    ), { timeout: 120_000 })
})
