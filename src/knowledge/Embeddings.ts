/**
 * The stored vectors follow the deployment's embedding provider. Vectors are comparable only within one space
 * (`provider:model:dimensions`, `embeddingSpace`); `embedding_space` records the space of the stored ones.
 *
 * - `check`, at every start (after the migrations): when the configured provider's space is not the recorded
 *   one, it records the new space and queues one re-embedding job; with no vectors, or none recorded yet (the
 *   first start of a version that records it), it only records it; a failed re-embedding is queued again.
 *   Starting processes take the row's lock in turn, so of several starting together one queues the job, and
 *   the others find the space recorded.
 * - The job (queue `embeddings:<space>`, run only by processes configured with that space, key `embeddings`)
 *   walks `knowledge_chunks` then `qa_items` by primary key in batches of `batchSize`, embeds their text as
 *   ingestion does, and writes the vectors with the moved cursor and count in one transaction: a crash resumes
 *   at the last batch written, and a row embedded twice is only embedded twice. A transient provider failure
 *   fails the attempt (the queue retries it with its backoff, the error showing meanwhile); a lasting one, or
 *   the last attempt, ends it `failed` with its error, until a start queues it again.
 * - Meanwhile retrieval keeps its text search; rows not yet re-embedded are of the old space (of another length
 *   they are not found by vector search; of the same length they still compare, less well).
 * - `status`: the row, for the admin CLI (`embeddings status`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { EmbeddingsStatus } from "../../schema/Admin.js"
import { Ai, type AiError, embeddingSpace } from "../../layers/Ai.js"
import { type GiveUpHow, type Job, JobQueue, Outcome, withAfterCommit } from "../../layers/JobQueue.js"
import { vectorsFor } from "../AiFailure.js"
import { transaction } from "../db/Sql.js"
import { SourceQa } from "../qa/SourceQa.js"
import { isoOrNull, now } from "../Time.js"
import { EmbeddingSpaceRepo, type Position, type SpaceRow } from "./EmbeddingSpaceRepo.js"
import { ChunkVectorsRepo } from "./ChunkVectorsRepo.js"
import { Reindex } from "./Reindex.js"

/** The queue of re-embeddings into `space`: only processes whose provider gives vectors of that space claim it. */
export const reembedQueue = (space: string) => `embeddings:${space}`

/** Every re-embedding job has this key: they run one at a time, in order, on every instance. */
export const reembedKey = "embeddings"

/** Rows per batch: one `Ai.embed` call (a remote provider's request stays small) and one transaction. */
export const batchSize = 64

const Payload = Schema.Struct({ space: Schema.String, generation: Schema.Int })

/** What a start found and did. */
type Checked =
  | { readonly _tag: "Current"; readonly row: SpaceRow }
  | { readonly _tag: "Recorded"; readonly previous: string | null }
  | { readonly _tag: "Queued"; readonly previous: string | null; readonly total: number }
  | { readonly _tag: "Resumed"; readonly row: SpaceRow }

/** The rows of a batch: their id, and the text their vector is of. */
interface Batch {
  readonly rows: ReadonlyArray<{ readonly id: string; readonly text: string; readonly question?: string; readonly answer?: string }>
}

export class Embeddings extends Effect.Service<Embeddings>()("Knowledge/Embeddings", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ai = yield* Ai
    const queue = yield* JobQueue
    const state = yield* EmbeddingSpaceRepo
    const chunks = yield* ChunkVectorsRepo
    const qa = (yield* SourceQa).reembedding
    const reindex = yield* Reindex
    const space = embeddingSpace(ai)
    const queueName = reembedQueue(space)
    const inTransaction = transaction(sql)

    const enqueue = (generation: number) =>
      queue.enqueue({ queue: queueName, key: reembedKey, payload: Schema.encodeSync(Payload)({ space, generation }) })

    const decide = Effect.gen(function* () {
      const at = yield* now
      const row = yield* state.lock
      if (row.space === space) {
        if (row.status !== "failed") return { _tag: "Current", row } satisfies Checked
        yield* enqueue(yield* state.requeue(at))
        return { _tag: "Resumed", row } satisfies Checked
      }
      // never recorded (the first start of a version that records it): the stored vectors were made by the provider
      // the deployment runs with, which an upgrade does not change; re-embedding them would only cost
      if (row.space === null || (!(yield* chunks.anyChunk) && !(yield* qa.any))) {
        yield* state.record(space, at)
        return { _tag: "Recorded", previous: row.space } satisfies Checked
      }
      const total = (yield* chunks.countChunks) + (yield* qa.count)
      yield* enqueue(yield* state.queue(space, total, at))
      return { _tag: "Queued", previous: row.space, total } satisfies Checked
    })

    /** At start: the recorded space against the configured one (see the top of this file), and a line in the log. */
    const check = Effect.gen(function* () {
      // most starts find their space recorded: one read, no transaction; anything else is decided under the lock
      const seen = yield* state.current
      const checked: Checked =
        seen.space === space && seen.status !== "failed"
          ? { _tag: "Current", row: seen }
          : yield* withAfterCommit(inTransaction(decide))
      switch (checked._tag) {
        case "Current": {
          const row = checked.row
          if (row.status === "queued" || row.status === "running") {
            yield* Effect.logInfo(
              `embeddings: re-embedding into ${space} under way, ${row.done} of ${row.total} rows done` +
                " (`npm run cli -- embeddings status`)"
            )
          }
          return
        }
        case "Recorded":
          return yield* Effect.logInfo(
            checked.previous === null
              ? `embeddings: vectors are of ${space}`
              : `embeddings: provider changed from ${checked.previous} to ${space}; no vectors are stored, none to re-embed`
          )
        case "Queued":
          return yield* Effect.logWarning(
            `embeddings: provider changed from ${checked.previous} to ${space}: re-embedding ` +
              `${checked.total} rows in the background; retrieval uses text search and the rows already done ` +
              "meanwhile (`npm run cli -- embeddings status`)"
          )
        case "Resumed":
          return yield* Effect.logWarning(
            `embeddings: the re-embedding into ${space} failed (${checked.row.last_error ?? "no error recorded"}); ` +
              `queued again from row ${checked.row.done} of ${checked.row.total}`
          )
      }
    }).pipe(Effect.withSpan("Embeddings.check"))

    const read = (position: Position): Effect.Effect<Batch> =>
      position.phase === "chunks"
        ? Effect.map(chunks.chunksAfter(position.cursor, batchSize), (rows) => ({
            rows: rows.map((r) => ({ id: r.id, text: r.content }))
          }))
        : Effect.map(qa.after(position.cursor, batchSize), (rows) => ({ rows }))

    const write = (phase: Position["phase"], batch: Batch, vectors: ReadonlyArray<ReadonlyArray<number>>) =>
      phase === "chunks"
        ? chunks.setChunkEmbeddings(batch.rows.map((r, i) => ({ id: r.id, embedding: vectors[i]! })))
        : qa.set(
            batch.rows.map((r, i) => ({ id: r.id, question: r.question ?? "", answer: r.answer ?? "", embedding: vectors[i]! }))
          )

    /**
     * One batch from `position`: its vectors, then, in one transaction, the moved cursor and the rows. The next
     * position; `over` when every row is done; `lost` when the row moved on without this run (another generation).
     */
    const step = (generation: number, position: Position): Effect.Effect<Position | "over" | "lost", AiError> =>
      Effect.gen(function* () {
        const batch = yield* read(position)
        const last = batch.rows[batch.rows.length - 1]
        if (last === undefined) {
          if (position.phase === "qa") return "over" as const
          const next: Position = { phase: "qa", cursor: null }
          return (yield* state.advance(generation, position, next, 0, yield* now)) ? next : ("lost" as const)
        }
        const vectors = yield* Effect.flatMap(ai.embed(batch.rows.map((r) => r.text)), (v) => vectorsFor(batch.rows.length, v))
        const next: Position = { phase: position.phase, cursor: last.id }
        const at = yield* now
        return yield* inTransaction(
          Effect.gen(function* () {
            // the state row first: its lock orders the writers, and a run that lost it writes no vectors
            if (!(yield* state.advance(generation, position, next, batch.rows.length, at))) return "lost" as const
            yield* write(position.phase, batch, vectors)
            return next
          })
        )
      })

    /** Batches from `position` until every row is done (true) or the walk is not this run's any more (false). */
    const walk = (generation: number, from: Position): Effect.Effect<boolean, AiError> =>
      Effect.gen(function* () {
        let position = from
        for (;;) {
          const next = yield* step(generation, position)
          if (next === "lost") return false
          if (next === "over") return yield* state.finish(generation, yield* now)
          position = next
        }
      })

    /** A provider failure no retry mends (a refused key, a wrong length): the re-embedding ends `failed`. */
    const lasting = (generation: number, error: AiError) =>
      Effect.gen(function* () {
        const reason = `the embedding provider failed: ${error.message}`
        yield* state.fail(generation, reason, yield* now)
        yield* Effect.logError(`embeddings: re-embedding into ${space} failed: ${reason}`)
        return Outcome.failed(reason)
      })

    /**
     * The job: the walk from the recorded cursor. A transient provider failure fails the attempt (retried by the
     * queue); a lasting one ends the re-embedding `failed`.
     */
    const handle = (job: Job): Effect.Effect<Outcome, string> =>
      Effect.gen(function* () {
        const payload = Schema.decodeUnknownOption(Payload)(job.payload)
        if (Option.isNone(payload)) return Outcome.failed("unreadable payload")
        const { generation } = payload.value
        const row = yield* state.current
        // a later start queued another re-embedding, or this one ended before its job's settle was written
        if (payload.value.space !== space || row.generation !== generation) return Outcome.done
        if (!(yield* state.running(generation, yield* now))) return Outcome.done
        yield* Effect.logInfo(
          `embeddings: re-embedding into ${space} from ${row.previous_space ?? "an unrecorded space"}: ` +
            `${row.done} of ${row.total} rows done`
        )
        const finished = yield* walk(generation, { phase: row.phase ?? "chunks", cursor: row.cursor }).pipe(
          Effect.catchTag("AiError", (error) =>
            error.transient ? Effect.fail(`the embedding provider did not answer: ${error.message}`) : lasting(generation, error)
          )
        )
        if (typeof finished !== "boolean") return finished
        if (finished) {
          const done = yield* state.current
          yield* Effect.logInfo(`embeddings: re-embedded ${done.done} rows into ${space}`)
        }
        return Outcome.done
      }).pipe(Effect.withSpan("Embeddings.reembed"))

    const generationOf = (job: Job) =>
      Option.map(Schema.decodeUnknownOption(Payload)(job.payload), (payload) => payload.generation)

    /** A failed attempt the queue retries at `at`: its error shows in the status meanwhile. */
    const retrying = (job: Job, reason: string, at: Date) =>
      Option.match(generationOf(job), {
        onNone: () => Effect.void,
        onSome: (generation) =>
          Effect.flatMap(now, (when) => Effect.asVoid(state.retrying(generation, `${reason} (retrying at ${at.toISOString()})`, when)))
      })

    /** Given up by the queue (its last attempt failed, or its attempts stopped their processes): `failed`, with why. */
    const giveUp = (job: Job, reason: string, _how: GiveUpHow) =>
      Option.match(generationOf(job), {
        onNone: () => Effect.void,
        onSome: (generation) =>
          Effect.flatMap(now, (at) =>
            Effect.zipRight(
              state.fail(generation, reason, at),
              Effect.logError(`embeddings: re-embedding into ${space} given up: ${reason}`)
            )
          )
      })

    const status = Effect.fn("Embeddings.status")(function* () {
      const row = yield* state.current
      return {
        space: row.space,
        previous_space: row.previous_space,
        configured_space: space,
        status: row.status,
        done: row.done,
        total: row.total,
        started_at: isoOrNull(row.started_at),
        finished_at: isoOrNull(row.finished_at),
        last_error: row.last_error,
        text_search: yield* reindex.status
      } satisfies EmbeddingsStatus
    })

    return { space, queue: queueName, check, handle, retrying, giveUp, status } as const
  }),
  dependencies: [EmbeddingSpaceRepo.Default, ChunkVectorsRepo.Default, SourceQa.Default, Reindex.Default]
}) {}
