/**
 * SQL for Q&A vectors: re-embedding (`knowledge/Embeddings.ts`, through `SourceQa.ts`) walks every Q&A, of every
 * workspace, by primary key, and writes each one's new vector.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { realArrayLiteral } from "../db/Columns.js"
import { decodeAll, execute } from "../db/Sql.js"

const QaText = Schema.Struct({ id: Schema.String, question: Schema.String, answer: Schema.String })
const Present = Schema.Struct({ present: Schema.Boolean })
const Count = Schema.Struct({ n: Schema.Number })

export class QaVectorsRepo extends Effect.Service<QaVectorsRepo>()("Qa/VectorsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** At most `limit` Q&A after `cursor` (null: from the first), in id order: their text to embed again. */
    const qaAfter = (cursor: string | null, limit: number) =>
      decodeAll(QaText, sql`
        select id, question, answer from qa_items ${cursor === null ? sql.literal("") : sql`where id > ${cursor}`}
        order by id limit ${limit}`)

    /**
     * New vectors of Q&A, each computed from the `question` and `answer` given: one edited since keeps the vector
     * its edit wrote (of its new text), one gone is skipped.
     */
    const setQaEmbeddings = (
      rows: ReadonlyArray<{ readonly id: string; readonly question: string; readonly answer: string; readonly embedding: ReadonlyArray<number> }>
    ) =>
      rows.length === 0
        ? Effect.void
        : execute(sql`
            update qa_items q set embedding = r.embedding::real[]
            from jsonb_to_recordset(${JSON.stringify(
              rows.map((r) => ({
                id: r.id,
                question: r.question,
                answer: r.answer,
                embedding: realArrayLiteral(r.embedding.map((x) => (Number.isFinite(x) ? x : 0)))
              }))
            )}::text::jsonb) as r(id text, question text, answer text, embedding text)
            where q.id = r.id and q.question = r.question and q.answer = r.answer`)

    const anyQa = Effect.map(
      decodeAll(Present, sql`select exists (select 1 from qa_items) as present`),
      (rows) => rows[0]?.present ?? false
    )

    const countQa = Effect.map(decodeAll(Count, sql`select count(*)::int as n from qa_items`), (rows) => rows[0]?.n ?? 0)

    return { qaAfter, setQaEmbeddings, anyQa, countQa } as const
  })
}) {}
