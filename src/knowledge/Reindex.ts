/**
 * Re-indexing the text search of rows written before migration 0048, which indexed every passage and Q&A item as
 * English (`tsv`). The migration leaves their `search_tsv` null and the progress row `queued` when there are any;
 * the first start after it makes the row `running` and queues one job (queue `text-search-reindex`), under the
 * row's lock, so of several starting processes one queues it.
 *
 * The job walks, by primary key: the sources whose language is not known (`sourceBatch` a statement), detecting
 * each one's from a sample of its text; then `knowledge_chunks`, then `qa_items` (`rowBatch` a statement), each
 * row given its source's language (else its agent's, else English) and so its `search_tsv`. Each batch moves the
 * cursor in its own transaction: a crash resumes at the last batch written, and a row done twice is only done
 * twice. Its progress (`done` of `total` rows) shows in the admin API's embeddings status
 * (`npm run cli -- embeddings status`). Meanwhile retrieval finds the rows not done yet by their vectors only.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "@effect/sql/SqlClient"
import type { TextSearchReindexStatus } from "../../schema/Admin.js"
import type { AgentLanguage } from "../../schema/Languages.js"
import { type GiveUpHow, type Job, JobQueue, Outcome, withAfterCommit } from "../../layers/JobQueue.js"
import { transaction } from "../db/Sql.js"
import { sourceLanguage } from "../languages/AgentLanguages.js"
import { isoOrNull, now } from "../Time.js"
import { type ReindexPhase, ReindexRepo } from "./ReindexRepo.js"

export const REINDEX_QUEUE = "text-search-reindex"

/** Rows a statement. */
export const rowBatch = 500
/** Sources a statement (each one's language detected from a sample of its text). */
export const sourceBatch = 100

const isAgentLanguage = (s: string): s is AgentLanguage => s.length > 0

export class Reindex extends Effect.Service<Reindex>()("Knowledge/Reindex", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ReindexRepo
    const queue = yield* JobQueue
    const inTransaction = transaction(sql)

    /** At start: a re-indexing the migration left queued (or one that failed) is begun, its job queued. */
    const check = Effect.gen(function* () {
      const seen = yield* repo.current
      if (seen.status !== "queued" && seen.status !== "failed") return
      const begun = yield* withAfterCommit(
        inTransaction(
          Effect.gen(function* () {
            const row = yield* repo.lock
            if (row.status !== "queued" && row.status !== "failed") return false
            yield* repo.begin(yield* now)
            yield* queue.enqueue({ queue: REINDEX_QUEUE, key: "text-search-reindex", payload: {} })
            return true
          })
        )
      )
      if (begun) {
        yield* Effect.logInfo(
          `text search: re-indexing ${seen.total} rows written before languages were kept, in the background ` +
            "(`npm run cli -- embeddings status`)"
        )
      }
    }).pipe(Effect.withSpan("Reindex.check"))

    /** One batch from `phase` at `cursor`: the next phase and cursor, or `over`. */
    const step = (phase: ReindexPhase, cursor: string | null) =>
      inTransaction(
        Effect.gen(function* () {
          const at = yield* now
          const from = cursor ?? ""
          if (phase === "sources") {
            const sources = yield* repo.oldSources(from, sourceBatch)
            const last = sources[sources.length - 1]
            if (last === undefined) {
              yield* repo.advance("chunks", null, 0, at)
              return { phase: "chunks" as const, cursor: null }
            }
            yield* repo.setSourceLanguages(
              sources.map((s) => ({
                id: s.id,
                language: sourceLanguage(s.sample ?? "", isAgentLanguage(s.setting) ? s.setting : "auto")
              }))
            )
            yield* repo.advance("sources", last.id, 0, at)
            return { phase: "sources" as const, cursor: last.id }
          }
          const batch = yield* repo.indexRows(phase === "chunks" ? "knowledge_chunks" : "qa_items", from, rowBatch)
          if (batch.last === null) {
            if (phase === "qa") return "over" as const
            yield* repo.advance("qa", null, 0, at)
            return { phase: "qa" as const, cursor: null }
          }
          yield* repo.advance(phase, batch.last, batch.rows, at)
          return { phase, cursor: batch.last }
        })
      )

    const handle = (_job: Job): Effect.Effect<Outcome, string> =>
      Effect.gen(function* () {
        const row = yield* repo.current
        if (row.status !== "running") return Outcome.done
        let position: { phase: ReindexPhase; cursor: string | null } = { phase: row.phase ?? "sources", cursor: row.cursor }
        for (;;) {
          const next = yield* step(position.phase, position.cursor)
          if (next === "over") break
          position = next
        }
        yield* repo.finish(yield* now)
        const done = yield* repo.current
        yield* Effect.logInfo(`text search: re-indexed ${done.done} rows`)
        return Outcome.done
      }).pipe(Effect.withSpan("Reindex.run"))

    const retrying = (_job: Job, reason: string, at: Date) =>
      Effect.flatMap(now, (when) => repo.retrying(`${reason} (retrying at ${at.toISOString()})`, when))

    const giveUp = (_job: Job, reason: string, _how: GiveUpHow) =>
      Effect.flatMap(now, (at) =>
        Effect.zipRight(repo.fail(reason, at), Effect.logError(`text search: re-indexing given up: ${reason}`))
      )

    const status = Effect.gen(function* () {
      const row = yield* repo.current
      return {
        status: row.status,
        done: row.done,
        total: row.total,
        started_at: isoOrNull(row.started_at),
        finished_at: isoOrNull(row.finished_at),
        last_error: row.last_error
      } satisfies TextSearchReindexStatus
    })

    return { check, handle, retrying, giveUp, status } as const
  }),
  dependencies: [ReindexRepo.Default]
}) {}
