/**
 * The retrieval plan this database allows, settled once at start.
 *
 * With pgvector, embeddings (kept as `real[]` on every database) are found
 * through an HNSW index on `embedding::vector(N)`, N being the embedding
 * provider's dimension. The index is partial (`cardinality(embedding) = N`):
 * vectors of another length, left by a provider used before, are simply not in
 * it, and a provider of another dimension gets an index of its own beside it.
 * The dimension is known only to the running service, so the service creates
 * the index, once, under an advisory lock that several processes starting
 * together take in turn.
 *
 * Without pgvector, the vector side has no index: retrieval takes its
 * candidates from the text-search indexes and re-ranks them by cosine.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { Ai } from "../../layers/Ai.js"
import { Database } from "../../layers/Database.js"
import { execute, lockWith, transaction } from "../db/Sql.js"

export type RetrievalPlan =
  | { readonly _tag: "Hnsw"; readonly dimensions: number }
  | { readonly _tag: "TextCandidates" }

/** The tables whose rows retrieval finds, each with a `real[]` `embedding`. */
export const vectorTables = ["knowledge_chunks", "qa_items"] as const

export const vectorIndexName = (table: (typeof vectorTables)[number], dimensions: number) =>
  `${table}_embedding_${dimensions}`

// HNSW's graph is built as rows arrive, inside ingestion's write transaction:
// the build parameters trade insert cost against recall
const hnswBuild = "m = 16, ef_construction = 64"


/**
 * `plan`: what retrieval may use. `ensure`: creates the plan's indexes when they are missing and says at start
 * which plan serves; run after the migrations (`src/Server.ts`).
 */
export class VectorIndex extends Effect.Service<VectorIndex>()("Knowledge/VectorIndex", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const database = yield* Database
    const ai = yield* Ai
    const plan: RetrievalPlan = database.vector ? { _tag: "Hnsw", dimensions: ai.dimensions } : { _tag: "TextCandidates" }
    const createIndexes = (dimensions: number) =>
      transaction(sql)(
        Effect.gen(function* () {
          yield* lockWith(sql)("retrieval vector indexes")
          for (const table of vectorTables) {
            yield* execute(
              sql.unsafe(
                `create index if not exists ${vectorIndexName(table, dimensions)} on ${table}
                 using hnsw ((embedding::vector(${dimensions})) vector_cosine_ops) with (${hnswBuild})
                 where cardinality(embedding) = ${dimensions}`
              )
            )
            // no planner statistics of the cast embeddings: ANALYZE would cast and compare a sample of them at every
            // round (on PGlite, on the session every other statement waits for), and no plan reads them
            yield* execute(sql.unsafe(`alter index ${vectorIndexName(table, dimensions)} alter column 1 set statistics 0`))
          }
        })
      )
    const ensure =
      plan._tag === "Hnsw"
        ? Effect.zipRight(
            createIndexes(plan.dimensions),
            Effect.logInfo(`retrieval: pgvector HNSW indexes on ${plan.dimensions}-dimension embeddings, and text search`)
          )
        : Effect.logInfo(
            "retrieval: pgvector is not installed; passages come from the text-search indexes, re-ranked by cosine"
          )
    return { plan, ensure } as const
  })
}) {}
