/**
 * The Q&A a knowledge source brings, as the knowledge area writes it: the agent's categories its items go in
 * (an agent's first document creates them), the items (written with the source's commit, removed with the
 * source), and the Q&A side of a re-embedding. Each joins the caller's transaction.
 */
import * as Effect from "effect/Effect"
import { qaEmbeddingText, QaRepo } from "./QaRepo.js"
import { QaVectorsRepo } from "./QaVectorsRepo.js"

export class SourceQa extends Effect.Service<SourceQa>()("Qa/SourceQa", {
  effect: Effect.map(Effect.all([QaRepo, QaVectorsRepo]), ([repo, vectors]) => ({
    categoriesOf: repo.categoriesOf,
    /** One category per draft, in draft order: the agent's own of that name (ignoring case), else a new one. */
    createCategories: repo.createCategories,
    insert: repo.insertQa,
    /** The source's generated and CSV Q&A removed (one edited since, now manual, stays). */
    removeOf: repo.deleteBySource,
    /** Re-embedding (`knowledge/Embeddings.ts`) walks every Q&A of every workspace by id. */
    reembedding: {
      any: vectors.anyQa,
      count: vectors.countQa,
      /** At most `limit` Q&A after `cursor` (null: from the first), with the text their vector is of. */
      after: (cursor: string | null, limit: number) =>
        Effect.map(vectors.qaAfter(cursor, limit), (rows) =>
          rows.map((r) => ({ id: r.id, text: qaEmbeddingText(r.question, r.answer), question: r.question, answer: r.answer }))
        ),
      /** New vectors, each of the question and answer given: one edited since keeps its own, one gone is skipped. */
      set: vectors.setQaEmbeddings
    }
  })),
  dependencies: [QaRepo.Default, QaVectorsRepo.Default]
}) {}
