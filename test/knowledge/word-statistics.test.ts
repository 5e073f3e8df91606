/**
 * The word statistics retrieval weighs words by (`src/knowledge/WordStatistics.ts`), on both databases: counted
 * exactly from every row of a small table, estimated from a sample of a larger one, counted again only once the
 * table has changed enough, and no longer taken by ANALYZE.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import { countDueWords, countWords } from "../../src/knowledge/WordStatistics.js"
import { wordsOf } from "../../src/knowledge/WordStatisticsRepo.js"
import { eventually } from "../support/eventually.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { createAgent, waitSettled } from "./support.js"

/** `count` Q&A rows, each holding "market" and "day", and one town name of its own. */
const marketRows = (count: number) =>
  Array.from({ length: count }, (_, i) => {
    const town = `Town${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`
    return `When is market day in ${town}?,The market in ${town} is weekly.,Markets`
  })

/**
 * The next round that counts `qa_items`: at once on PGlite; PostgreSQL's sessions report their counts of changes
 * within seconds of going idle, so on it a few rounds may find nothing yet.
 */
const dueNow = eventually(countDueWords(), (counted) => counted.some((c) => c.table === "qa_items"), {
  tries: 3_000,
  label: "qa_items counted"
})

/** A `csv_qa` source of `rows`, indexed. */
const addQa = (h: HarnessShape, key: string, agentId: string, rows: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
      key,
      body: { type: "csv_qa", content: `question,answer,category\n${rows.join("\n")}\n` }
    })
    yield* waitSettled(h, key, agentId, [created.body.data.id])
  })

const listedRows = (word: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(wordsOf(sql, [word]), (stats) => stats.qa_items.words[word]))

describe("word statistics", () => {
  // the service's own round runs once at its start, then not again in the test: the test's calls do the counting
  layer(testServer({ maintenanceMillis: 3_600_000 }), { timeout: "120 seconds" })((it) => {
    it.effect("a small table's words are counted exactly, counted again only after enough changes, and ANALYZE leaves tsv out", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const sql = yield* SqlClient.SqlClient
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        const add = (rows: ReadonlyArray<string>) => addQa(h, ws.secretTest, agentId, rows)
        yield* add(marketRows(120))

        const qa = (yield* dueNow).find((c) => c.table === "qa_items")
        expect(qa!.sampled).toBe(qa!.rows)
        expect(yield* listedRows("market")).toBe(qa!.rows)
        expect(yield* listedRows("day")).toBe(qa!.rows)
        // a word of one row is counted too: every row was read
        expect(yield* listedRows("towncb")).toBe(1)
        expect(yield* listedRows("zanzibar")).toBeUndefined()

        // unchanged since: nothing to count; a few more rows (under 50 plus 10 %): still nothing
        expect((yield* countDueWords()).find((c) => c.table === "qa_items")).toBeUndefined()
        yield* add(["Is there a market in Zanzibar?,Yes. It is weekly.,Markets"])
        expect((yield* countDueWords()).find((c) => c.table === "qa_items")).toBeUndefined()
        expect(yield* listedRows("zanzibar")).toBeUndefined()
        // many more: counted again
        yield* add(marketRows(80))
        yield* dueNow
        expect(yield* listedRows("zanzibar")).toBe(1)

        // the planner keeps no statistics of the text-search columns (migration 0046): ANALYZE does not sample them
        yield* sql`analyze qa_items`
        const tsv = yield* sql<{ n: number }>`select count(*)::int as n from pg_stats
          where tablename = 'qa_items' and attname = 'tsv'`
        expect(tsv[0]?.n).toBe(0)
      }))

    it.effect("a table larger than the sample: words every row holds are estimated at the table's rows, a word of one row is not listed", () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const sql = yield* SqlClient.SqlClient
        const ws = yield* h.seed()
        const agentId = yield* createAgent(h, ws.secretTest)
        yield* addQa(h, ws.secretTest, agentId, marketRows(400))
        const [{ n }] = yield* sql<{ n: number }>`select count(*)::int as n from qa_items`
        const [{ holding }] = yield* sql<{ holding: number }>`select count(*)::int as holding from qa_items
          where tsv @@ 'market'::tsquery`

        const sampled = yield* countWords("qa_items", n, 0, { sampleRows: 60, stepRows: 20, keptWords: 1_000 }).pipe(
          Effect.withRandom(Random.make("word statistics"))
        )
        expect(sampled.sampled).toBeGreaterThan(0)
        expect(sampled.sampled).toBeLessThan(n)
        expect(sampled.rows).toBe(n)
        // every row this test added holds "market"; the earlier test's rows too: the estimate is near the table's rows
        expect(holding).toBe(n)
        expect(yield* listedRows("market")).toBeCloseTo(n, 6)
        expect(yield* listedRows("towncb")).toBeUndefined()
      }))
  })
})
