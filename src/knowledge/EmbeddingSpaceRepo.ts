/**
 * SQL of `embedding_space` (migration 0025): the one row naming the space the stored vectors belong to and the
 * state of their re-embedding (`Embeddings.ts`). Writes of a re-embedding's progress name its `generation`, so a
 * job of an earlier one, or one whose cursor another run moved, changes nothing.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { ReembedStatus } from "../../schema/Admin.js"
import { decodeAll, decodeSingle } from "../db/Sql.js"

export const ReembedPhase = Schema.Literal("chunks", "qa")
export type ReembedPhase = typeof ReembedPhase.Type

export const SpaceRow = Schema.Struct({
  space: Schema.NullOr(Schema.String),
  previous_space: Schema.NullOr(Schema.String),
  generation: Schema.Int,
  status: ReembedStatus,
  phase: Schema.NullOr(ReembedPhase),
  cursor: Schema.NullOr(Schema.String),
  done: Schema.NumberFromString,
  total: Schema.NumberFromString,
  started_at: Schema.NullOr(Schema.DateFromSelf),
  finished_at: Schema.NullOr(Schema.DateFromSelf),
  last_error: Schema.NullOr(Schema.String)
})
export type SpaceRow = typeof SpaceRow.Type

const Generation = Schema.Struct({ generation: Schema.Int })

// bigints read as text
const columns = `space, previous_space, generation, status, phase, cursor, done::text as done, total::text as total,
  started_at, finished_at, last_error`

/** Where the walk stands: the phase and the last id done in it (null: none yet). */
export interface Position {
  readonly phase: ReembedPhase
  readonly cursor: string | null
}

export class EmbeddingSpaceRepo extends Effect.Service<EmbeddingSpaceRepo>()("Knowledge/EmbeddingSpaceRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    const current = decodeSingle(SpaceRow, sql`select ${cols} from embedding_space`)

    /** The row, locked until the caller's transaction ends: starting processes decide one after another. */
    const lock = decodeSingle(SpaceRow, sql`select ${cols} from embedding_space for update`)

    /** Vectors of `space` with nothing to re-embed (there are no rows): no re-embedding is under way. */
    const record = (space: string, at: Date) =>
      decodeSingle(SpaceRow, sql`
        update embedding_space set space = ${space}, previous_space = space, generation = generation + 1,
          status = 'none', phase = null, cursor = null, done = 0, total = 0, started_at = null, finished_at = null,
          last_error = null, updated_at = ${at}
        returning ${cols}`)

    /** A re-embedding of `total` rows into `space` from their start; its generation, for its job. */
    const queue = (space: string, total: number, at: Date) =>
      Effect.map(
        decodeSingle(Generation, sql`
          update embedding_space set previous_space = space, space = ${space}, generation = generation + 1,
            status = 'queued', phase = 'chunks', cursor = null, done = 0, total = ${total}, started_at = ${at},
            finished_at = null, last_error = null, updated_at = ${at}
          returning generation`),
        (row) => row.generation
      )

    /** A failed re-embedding queued again, from where it stopped; its new generation. */
    const requeue = (at: Date) =>
      Effect.map(
        decodeSingle(Generation, sql`
          update embedding_space set generation = generation + 1, status = 'queued', finished_at = null,
            last_error = null, updated_at = ${at}
          returning generation`),
        (row) => row.generation
      )

    const changed = (rows: ReadonlyArray<unknown>) => rows.length > 0

    /** Its job began work (or began again after a failed attempt). */
    const running = (generation: number, at: Date) =>
      Effect.map(
        decodeAll(Generation, sql`
          update embedding_space set status = 'running', updated_at = ${at}
          where generation = ${generation} and status in ('queued', 'running')
          returning generation`),
        changed
      )

    /**
     * Moves the walk from `from` to `to`, `count` more rows done: false when the row is not there any more (another
     * generation, or another run moved it), and then nothing changed. In the transaction of the batch's vectors.
     */
    const advance = (generation: number, from: Position, to: Position, count: number, at: Date) =>
      Effect.map(
        decodeAll(Generation, sql`
          update embedding_space set phase = ${to.phase}, cursor = ${to.cursor}, done = done + ${count},
            updated_at = ${at}
          where generation = ${generation} and status = 'running' and phase = ${from.phase}
            and cursor is not distinct from ${from.cursor}::text
          returning generation`),
        changed
      )

    /** Every row done: `total` becomes what was done (rows written or deleted meanwhile change it). */
    const finish = (generation: number, at: Date) =>
      Effect.map(
        decodeAll(Generation, sql`
          update embedding_space set status = 'done', phase = null, cursor = null, total = done, finished_at = ${at},
            last_error = null, updated_at = ${at}
          where generation = ${generation} and status = 'running'
          returning generation`),
        changed
      )

    /** Given up: `error` says why. The cursor stays, so a start that queues it again resumes there. */
    const fail = (generation: number, error: string, at: Date) =>
      decodeAll(Generation, sql`
        update embedding_space set status = 'failed', last_error = ${error}, finished_at = ${at}, updated_at = ${at}
        where generation = ${generation} and status in ('queued', 'running')
        returning generation`)

    /** A failed attempt that will be retried: its error shows meanwhile. */
    const retrying = (generation: number, error: string, at: Date) =>
      decodeAll(Generation, sql`
        update embedding_space set last_error = ${error}, updated_at = ${at}
        where generation = ${generation} and status in ('queued', 'running')
        returning generation`)

    return { current, lock, record, queue, requeue, running, advance, finish, fail, retrying } as const
  })
}) {}
