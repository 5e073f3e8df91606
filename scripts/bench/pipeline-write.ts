/**
 * The knowledge pipeline's final write alone, on an in-memory PGlite in this
 * thread: per source, one transaction replacing its chunks and its Q&A as
 * `Pipeline.commit` does (`replaceChunks`, `deleteBySource`, `insertQa`), with
 * 22 chunks and 21 Q&A whose 384-float embeddings come from `hashEmbed`.
 * Prints the median and mean ms per source over `sources` (after a warm-up),
 * and the medians of its two bulk writes.
 * Not part of `npm run bench`: `npx tsx scripts/bench/pipeline-write.ts [sources]`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { hashEmbed } from "../../layers/ai/Text.js"
import { layerPglite } from "../../layers/Database.js"
import { layerLive as idsLive } from "../../layers/IdGenerator.js"
import { AgentId, CategoryId, SourceId, WorkspaceId } from "../../schema/Ids.js"
import { transaction } from "../../src/db/Sql.js"
import { runMigrations } from "../../src/db/Migrator.js"
import { migrations } from "../../src/db/migrations/index.js"
import { chunk } from "../../src/knowledge/Chunk.js"
import { KnowledgeRepo } from "../../src/knowledge/KnowledgeRepo.js"
import { QaRepo } from "../../src/qa/QaRepo.js"

const sources = Number(process.argv[2] ?? 60)
const warmUp = 10
const chunksPerSource = 22
const qaPerSource = 21

const words = ("delivery order return refund payment account password invoice warranty shipping parcel customer " +
  "support store price discount size colour stock exchange tracking").split(" ")
const pageText = (n: number) =>
  Array.from({ length: 600 }, (_, i) =>
    `The ${words[(n + i) % words.length]} policy for page ${n} explains ${words[(n * 3 + i) % words.length]} request ${i}.`
  ).join(" ")

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const program = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const knowledge = yield* KnowledgeRepo
  const qa = yield* QaRepo
  yield* runMigrations(migrations)
  const workspaceId = WorkspaceId.make("ws_benchmark1")
  const agentId = AgentId.make("agt_benchmark1")
  const tenant = { workspaceId, environment: "test" as const }
  const at = new Date()
  yield* sql`insert into workspaces ${sql.insert({ id: workspaceId, name: "Bench", owner_email: "b@example.com", plan: "pro", created_at: at })}`
  yield* sql`insert into agents ${sql.insert({
    id: agentId, workspace_id: workspaceId, environment: "test", type: "support", name: "Bench", slug: "bench", created_at: at, updated_at: at
  })}`
  const [category] = yield* qa.createCategories(tenant, agentId, [{ name: "Shipping", description: "" }])

  const times: Array<number> = []
  const chunkTimes: Array<number> = []
  const qaTimes: Array<number> = []
  for (let n = 0; n < warmUp + sources; n++) {
    const [source] = yield* knowledge.insert(tenant, [{
      id: SourceId.make(`src_benchmark${n}`), agentId, type: "text", title: `Page ${n}`, sourceRef: "text", sizeBytes: 1, content: null, at
    }])
    const pieces = chunk(pageText(n)).slice(0, chunksPerSource)
    if (pieces.length < chunksPerSource) throw new Error(`only ${pieces.length} chunks`)
    const chunks = pieces.map((content, position) => ({
      id: `chk_benchmark${n}x${position}`, position, content, embedding: hashEmbed(content, 384)
    }))
    const items = Array.from({ length: qaPerSource }, (_, i) => {
      const question = `How does ${words[(n + i) % words.length]} work for page ${n}?`
      const answer = `See the ${words[(n * 7 + i) % words.length]} section of page ${n}.`
      return {
        question, answer, categoryId: CategoryId.make(category!.id), origin: "generated" as const,
        sourceId: source!.id, embedding: hashEmbed(`${question}\n${answer}`, 384)
      }
    })
    const started = performance.now()
    const [chunkMs, qaMs] = yield* transaction(sql)(
      Effect.gen(function* () {
        const chunksStarted = performance.now()
        yield* knowledge.replaceChunks(source!, chunks)
        const chunksEnded = performance.now()
        yield* qa.deleteBySource(tenant, source!.id)
        const qaStarted = performance.now()
        yield* qa.insertQa(tenant, agentId, items)
        return [chunksEnded - chunksStarted, performance.now() - qaStarted] as const
      })
    )
    if (n >= warmUp) {
      times.push(performance.now() - started)
      chunkTimes.push(chunkMs)
      qaTimes.push(qaMs)
    }
  }
  const [counts] = yield* sql<{ chunks: string; qa: string }>`
    select (select count(*) from knowledge_chunks)::text as chunks, (select count(*) from qa_items)::text as qa`
  const mean = times.reduce((a, b) => a + b, 0) / times.length
  console.log(
    `${sources} sources (${chunksPerSource} chunks + ${qaPerSource} Q&A each): ` +
      `median ${median(times).toFixed(2)} ms, mean ${mean.toFixed(2)} ms per source ` +
      `(medians: replaceChunks ${median(chunkTimes).toFixed(2)} ms, insertQa ${median(qaTimes).toFixed(2)} ms); rows ${counts!.chunks} chunks, ${counts!.qa} Q&A`
  )
})

const layer = Layer.mergeAll(KnowledgeRepo.Default, QaRepo.Default).pipe(
  Layer.provideMerge(Layer.mergeAll(layerPglite({ dataDir: undefined }), idsLive))
)

Effect.runPromise(program.pipe(Effect.provide(layer), Effect.scoped)).catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
