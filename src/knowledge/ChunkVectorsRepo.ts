/**
 * SQL for chunks' vectors: re-embedding (`Embeddings.ts`) walks every chunk, of every workspace, by primary key,
 * and writes each one's new vector.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { realArrayLiteral } from "../db/Columns.js"
import { decodeAll, execute } from "../db/Sql.js"

const ChunkText = Schema.Struct({ id: Schema.String, content: Schema.String })
const Present = Schema.Struct({ present: Schema.Boolean })
const Count = Schema.Struct({ n: Schema.Number })

const vectorLiteral = (vector: ReadonlyArray<number>) => realArrayLiteral(vector.map((x) => (Number.isFinite(x) ? x : 0)))

export class ChunkVectorsRepo extends Effect.Service<ChunkVectorsRepo>()("Knowledge/ChunkVectorsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** At most `limit` chunks after `cursor` (null: from the first), in id order: their text to embed again. */
    const chunksAfter = (cursor: string | null, limit: number) =>
      decodeAll(ChunkText, sql`
        select id, content from knowledge_chunks ${cursor === null ? sql.literal("") : sql`where id > ${cursor}`}
        order by id limit ${limit}`)

    /** New vectors of chunks: a chunk's text never changes (a changed page replaces its chunks), a gone one is skipped. */
    const setChunkEmbeddings = (rows: ReadonlyArray<{ readonly id: string; readonly embedding: ReadonlyArray<number> }>) =>
      rows.length === 0
        ? Effect.void
        : execute(sql`
            update knowledge_chunks c set embedding = r.embedding::real[]
            from jsonb_to_recordset(${JSON.stringify(rows.map((r) => ({ id: r.id, embedding: vectorLiteral(r.embedding) })))}::text::jsonb)
              as r(id text, embedding text)
            where c.id = r.id`)

    const anyChunk = Effect.map(
      decodeAll(Present, sql`select exists (select 1 from knowledge_chunks) as present`),
      (rows) => rows[0]?.present ?? false
    )

    const countChunks = Effect.map(decodeAll(Count, sql`select count(*)::int as n from knowledge_chunks`), (rows) => rows[0]?.n ?? 0)

    return { chunksAfter, setChunkEmbeddings, anyChunk, countChunks } as const
  })
}) {}
