/**
 * Retrieval: a question worded differently from a Q&A item finds it in the
 * top 3, on both database paths: pgvector (PGlite; a PostgreSQL that has it)
 * and `real[]` cosine over the text-search candidates (a PostgreSQL without
 * it, like the local one; on PGlite the same code is run by switching the
 * capability off). Glossary synonyms expand the query. A text source's chunks
 * and generated Q&A, as the pipeline writes them (binary COPY on PGlite), are found.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { AgentId, WorkspaceId } from "../../schema/Ids.js"
import { Database } from "../../layers/Database.js"
import { GlossaryRepo } from "../../src/glossary/GlossaryRepo.js"
import { AgentLanguages } from "../../src/languages/AgentLanguages.js"
import { fold, formsPattern, tiers } from "../../src/knowledge/QueryWords.js"
import { relevanceThreshold, Retrieval } from "../../src/knowledge/Retrieval.js"
import { VectorIndex } from "../../src/knowledge/VectorIndex.js"
import { countDueWords } from "../../src/knowledge/WordStatistics.js"
import { wordsOf } from "../../src/knowledge/WordStatisticsRepo.js"
import { databaseKind } from "../support/database.js"
import { eventually } from "../support/eventually.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { createAgent, waitSettled } from "./support.js"

const csv = `question,answer,category
How long does delivery take?,Orders arrive within five business days anywhere in Europe.,Shipping
Can I return an item?,You can send any item back within 30 days for a full refund.,Returns
Which payment methods do you accept?,"We take credit cards, debit cards and bank transfers.",Payments
How do I reset my password?,Use the link on the sign-in page to choose a new password.,Account
Do you have a physical store?,No: we sell online only.,General
Is gift wrapping available?,Yes: tick the gift box at checkout.,General
`

const faq = `# Shipping and returns

## Shipping
We ship every order within two business days. Delivery takes five days in Europe.

## Returns
You can return any item within 30 days of delivery for a full refund.`

const paraphrases: ReadonlyArray<readonly [string, string]> = [
  ["how many days until my order arrives", "How long does delivery take?"],
  ["what if I want my money back for a product", "Can I return an item?"],
  ["I forgot my password, how do I change it", "How do I reset my password?"],
  ["do you accept bank cards", "Which payment methods do you accept?"]
]

// "money back" shares no word with "return" or "refund": the local embedder ranks the right item first, but
// cannot be sure of it; a glossary term (refund: money back) is how an agent learns such a synonym

/** Questions a shop's FAQ does not answer, some sharing a word with it. */
const offTopic = [
  "Who won the battle of Hastings?",
  "What is the boiling point of water on a mountain?",
  "Can you recommend a good book about Roman history?",
  "How many moons does Jupiter have?"
]

/** Retrieval over the same database with the pgvector capability forced on or off. */
const onPath = (vector: boolean) =>
  Retrieval.DefaultWithoutDependencies.pipe(
    Layer.provide([GlossaryRepo.Default, VectorIndex.Default, AgentLanguages.Default]),
    Layer.provide(Layer.effect(Database, Effect.map(Database, (d) => ({ ...d, vector }))))
  )

const setup = (h: HarnessShape) =>
  Effect.gen(function* () {
    const ws = yield* h.seed()
    const agentId = yield* createAgent(h, ws.secretTest)
    const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
      key: ws.secretTest,
      body: { type: "csv_qa", content: csv }
    })
    yield* waitSettled(h, ws.secretTest, agentId, [created.body.data.id])
    const tenant = { workspaceId: ws.workspace.id as WorkspaceId, environment: "test" as const }
    return { ws, agentId: agentId as AgentId, tenant }
  })

const topQuestions = (tenant: { workspaceId: WorkspaceId; environment: "test" }, agentId: AgentId, query: string) =>
  Effect.flatMap(Retrieval, (r) => r.search(tenant, agentId, query, { limit: 3 })).pipe(
    Effect.map((hits) => hits.map((hit) => hit.question))
  )

describe("retrieval's text tiers", () => {
  it("every word and any rare word, ranked; pairs of common words, as found, only when fewer than two are rare", () => {
    const lexemes = ["market", "day", "zanzibar", "sell"]
    const ranked = (query: string) => ({ query, ranked: true })
    const found = (query: string) => ({ query, ranked: false })
    expect(tiers(lexemes, new Set())).toEqual([ranked("market & day & zanzibar & sell"), ranked("market | day | zanzibar | sell")])
    expect(tiers(lexemes, new Set(["market", "day", "sell"]))).toEqual([
      ranked("market & day & zanzibar & sell"),
      ranked("zanzibar"),
      found("market & day"),
      found("market & sell"),
      found("day & sell")
    ])
    expect(tiers(["market", "day"], new Set(["market", "day"]))).toEqual([ranked("market & day"), found("market & day")])
    expect(tiers(["zanzibar"], new Set())).toEqual([ranked("zanzibar")])
    expect(tiers([], new Set())).toEqual([])
  })
})

layer(testServer())("retrieval", (it) => {
  const paths = databaseKind === "pglite" ? [true, false] : [false]
  for (const vector of paths) {
    it.effect(`a paraphrased question finds its Q&A in the top 3 (${vector ? "pgvector" : "real[] cosine"})`, () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { agentId, tenant } = yield* setup(h)
        for (const [query, expected] of paraphrases) {
          const top = yield* topQuestions(tenant, agentId, query)
          expect(top, query).toContain(expected)
        }
      }).pipe(Effect.provide(onPath(vector)))
    )
  }

  for (const vector of paths) {
    it.effect(`scores are absolute: what the knowledge answers scores over the threshold, the off-topic under (${vector ? "pgvector" : "real[] cosine"})`, () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const { agentId, tenant } = yield* setup(h)
        const search = (query: string) => Effect.flatMap(Retrieval, (r) => r.search(tenant, agentId, query, { limit: 5 }))
        for (const [query, expected] of paraphrases.filter(([query]) => !query.includes("money back"))) {
          const [first] = yield* search(query)
          expect(first?.question, query).toBe(expected)
          expect(first?.score, query).toBeGreaterThanOrEqual(relevanceThreshold)
        }
        for (const query of offTopic) {
          const hits = yield* search(query)
          expect(hits.filter((hit) => hit.score >= relevanceThreshold), query).toEqual([])
        }
      }).pipe(Effect.provide(onPath(vector)))
    )
  }

  it.effect("a text source's chunks and generated Q&A, written by the pipeline, are found", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = (yield* createAgent(h, ws.secretTest)) as AgentId
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "text", title: "Shop FAQ", content: faq }
      })
      const sourceId: string = created.body.data.id
      const [source] = yield* waitSettled(h, ws.secretTest, agentId, [sourceId])
      expect(source).toMatchObject({ status: "indexed" })
      const tenant = { workspaceId: ws.workspace.id as WorkspaceId, environment: "test" as const }
      const search = (query: string) => Effect.flatMap(Retrieval, (r) => r.search(tenant, agentId, query, { limit: 10 }))

      const chunkHits = (yield* search("how many days does delivery take in Europe")).filter((hit) => hit.kind === "chunk")
      expect(chunkHits.map((hit) => hit.sourceId)).toContain(sourceId)
      expect(chunkHits.find((hit) => hit.sourceId === sourceId)?.text).toContain("Delivery takes five days in Europe")

      const generated = yield* h.call("GET", `/v1/agents/${agentId}/qa?origin=generated`, { key: ws.secretTest })
      const items: ReadonlyArray<{ id: string; question: string; source_id: string }> = generated.body.data
      expect(items.length).toBeGreaterThan(0)
      for (const item of items) {
        expect(item.source_id).toBe(sourceId)
        const hits = yield* search(item.question)
        expect(hits.some((hit) => hit.kind === "qa" && hit.id === item.id), item.question).toBe(true)
      }
    }).pipe(Effect.provide(onPath(databaseKind === "pglite")))
  )

  it.effect("among hundreds of rows sharing the question's common words, its rare word finds its row", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = (yield* createAgent(h, ws.secretTest)) as AgentId
      const towns = Array.from({ length: 400 }, (_, i) => `Town${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`)
      const rows = [...towns, "Zanzibar"].map(
        (town) => `When is market day in ${town}?,Market day in ${town} is every week; the stalls sell bread and cheese.,Markets`
      )
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "csv_qa", content: `question,answer,category\n${rows.join("\n")}\n` }
      })
      yield* waitSettled(h, ws.secretTest, agentId, [created.body.data.id])
      // the word statistics, as the service counts them in the background: "market" and "day" are common now, and
      // draw no candidates alone (PostgreSQL's sessions report the inserts within seconds)
      yield* eventually(
        Effect.zipRight(countDueWords(), Effect.flatMap(SqlClient.SqlClient, (sql) => wordsOf(sql, ["market"]))),
        (stats) => (stats.qa_items.words["market"] ?? 0) >= rows.length,
        { tries: 3_000, label: "market counted" }
      )
      const tenant = { workspaceId: ws.workspace.id as WorkspaceId, environment: "test" as const }
      const hits = yield* Effect.flatMap(Retrieval, (r) => r.search(tenant, agentId, "on which day do they hold market day in Zanzibar", { limit: 3 }))
      expect(hits[0]?.question).toBe("When is market day in Zanzibar?")
    }).pipe(Effect.provide(onPath(databaseKind === "pglite")))
  )

  it.effect("between rows holding the same words, the one holding them near each other and in the question's forms comes first", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = (yield* createAgent(h, ws.secretTest)) as AgentId
      // the same words in each pair of rows: only where they stand, or their form, tells the rows apart
      const rows = [
        "Getting there,The railway station is at Calmardun; the east road leads past the mill.,Travel",
        "Directions,The railway station is at the mill; the east road leads to Calmardun.,Travel",
        "Wildlife,In the gorge live hares; the white heron nests by the weir.,Nature",
        "Birds,In the gorge live herons; the white hare nests by the weir.,Nature"
      ]
      const created = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, {
        key: ws.secretTest,
        body: { type: "csv_qa", content: `question,answer,category\n${rows.join("\n")}\n` }
      })
      yield* waitSettled(h, ws.secretTest, agentId, [created.body.data.id])
      const tenant = { workspaceId: ws.workspace.id as WorkspaceId, environment: "test" as const }
      const first = (question: string) =>
        Effect.map(Effect.flatMap(Retrieval, (r) => r.search(tenant, agentId, question, { limit: 2 })), (hits) => hits[0]?.question)
      expect(yield* first("Is the railway station at Calmardun?")).toBe("Getting there")
      expect(yield* first("Where do hares live in the gorge?")).toBe("Wildlife")
    }).pipe(Effect.provide(onPath(databaseKind === "pglite")))
  )

  it.effect("a question's forms are found in a passage as the database folds it: any case, accents or not, whole words", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const letters = "ÁÀÂÄÃÅĀĂĄÉÈÊËĒĖĘĚÍÌÎÏĪĮÓÒÔÖÕØŌŐÚÙÛÜŪŮŰŲÑŃŇÇĆČÝŸŠŚŽŹŻĎŤŘĽĹŁĐ áàâäãåāăąéèêëēėęěíìîïīįóòôöõøōőúùûüūůűųñńňçćčýÿšśžźżďťřľĺłđ"
      const [row] = yield* sql<{ folded: string }>`select search_fold(${letters}) as folded`
      expect(fold(letters)).toBe(row!.folded)
      const found = (text: string, forms: ReadonlyArray<string>) =>
        Effect.map(
          sql<{ form: string }>`select search_fold(m[1]) as form from regexp_matches(${text}, ${formsPattern(forms)}::text, 'gi') as m`,
          (rows) => rows.map((r) => r.form)
        )
      const text = "Los ENVÍOS tardan; el envio llega. Envíosa no cuenta, ni reenvíos."
      expect(yield* found(text, ["envios", "Envío"])).toEqual(["envios", "envio"])
      expect(yield* found(text, ["envíos"])).toEqual(["envios"])
      expect(yield* found(text, [])).toEqual([])
    })
  )

  it.effect("the server's own capability matches the database (pgvector on PGlite)", () =>
    Effect.gen(function* () {
      const database = yield* Database
      if (databaseKind === "pglite") expect(database.vector).toBe(true)
      else expect(typeof database.vector).toBe("boolean")
    })
  )

  it.effect("glossary synonyms expand the query", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const { ws, agentId, tenant } = yield* setup(h)
      const before = yield* topQuestions(tenant, agentId, "where is my parcel")
      const put = yield* h.call("PUT", `/v1/agents/${agentId}/glossary`, {
        key: ws.secretTest,
        body: { terms: [{ term: "parcel", definition: "A package we ship", synonyms: ["delivery", "order arrive"] }] }
      })
      expect(put.status, JSON.stringify(put.body)).toBe(200)
      const after = yield* topQuestions(tenant, agentId, "where is my parcel")
      expect(after[0], JSON.stringify({ before, after })).toBe("How long does delivery take?")
    })
  )
})
