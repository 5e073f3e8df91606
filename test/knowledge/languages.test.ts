/**
 * Languages (issue 56): an agent's `language`, each source's detected language, passages searched in the
 * question's language with accents and inflections folded alike in the index and the question, a mixed agent
 * answering each question from the passages of its language, and the re-indexing of rows written before.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { AgentId, WorkspaceId } from "../../schema/Ids.js"
import { Reindex } from "../../src/knowledge/Reindex.js"
import { relevanceThreshold, Retrieval } from "../../src/knowledge/Retrieval.js"
import { eventually } from "../support/eventually.js"
import { Harness, type HarnessShape, testServer } from "../support/harness.js"
import { source, waitSettled } from "./support.js"

const spanish = {
  canada: "Los envíos a Canadá salen de nuestro almacén de Halifax cada jueves y llegan en seis días hábiles.",
  returns: "Puedes devolver cualquier producto en un plazo de treinta días y te reembolsamos el importe completo.",
  gift: "Las tarjetas regalo no caducan y se pueden canjear en la tienda física y en la web.",
  payments: "Aceptamos pagos con tarjeta de crédito, PayPal y transferencia bancaria.",
  hours: "La tienda física abre de lunes a sábado, de diez de la mañana a ocho de la tarde."
} as const

const english = {
  canada: "Orders to Canada leave our Halifax warehouse every Thursday and arrive within six business days.",
  returns: "You can send any product back within thirty days and we refund the full amount.",
  gift: "Gift cards never expire and can be redeemed in the shop and on the website."
} as const

/** Plain Spanish questions, some differing from their passage's words only by inflection or accents. */
const questions: ReadonlyArray<readonly [string, keyof typeof spanish]> = [
  ["¿Cuánto tarda el envío a Canadá?", "canada"],
  ["¿Envían a Canadá?", "canada"],
  ["envio a canada cuantos dias", "canada"],
  ["¿Puedo devolver un producto que compré?", "returns"],
  ["¿Caduca la tarjeta regalo?", "gift"],
  ["¿Puedo pagar con PayPal?", "payments"],
  ["¿Abren los sabados?", "hours"]
]

const offTopic = [
  "¿Quién ganó el mundial de fútbol de 2010?",
  "¿Cuál es la capital de Australia?",
  "¿Cómo se prepara una paella valenciana?"
]

const agentWith = (h: HarnessShape, key: string, language: string | undefined, texts: Record<string, string>) =>
  Effect.gen(function* () {
    const created = yield* h.call("POST", "/v1/agents", {
      key,
      body: { type: "support", name: "Tienda", ...(language === undefined ? {} : { language }) }
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const agentId = created.body.data.id as AgentId
    const ids: Record<string, string> = {}
    for (const [name, content] of Object.entries(texts)) {
      const posted = yield* h.call("POST", `/v1/agents/${agentId}/knowledge`, { key, body: { type: "text", title: name, content } })
      expect(posted.status).toBe(201)
      ids[name] = posted.body.data.id
    }
    yield* waitSettled(h, key, agentId, Object.values(ids))
    return { agentId, ids }
  })

const tenantOf = (ws: { workspace: { id: string } }) => ({ workspaceId: ws.workspace.id as WorkspaceId, environment: "test" as const })

layer(testServer())("languages", (it) => {
  it.effect("an agent's language is set, read and changed; a tag it does not know is refused", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const auto = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "A" } })
      expect(auto.body.data.language).toBe("auto")
      const es = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "B", language: "es" } })
      expect(es.body.data.language).toBe("es")
      const changed = yield* h.call("PATCH", `/v1/agents/${es.body.data.id}`, { key: ws.secretTest, body: { language: "pt" } })
      expect(changed.body.data.language).toBe("pt")
      const read = yield* h.call("GET", `/v1/agents/${es.body.data.id}`, { key: ws.secretTest })
      expect(read.body.data.language).toBe("pt")
      const refused = yield* h.call("POST", "/v1/agents", { key: ws.secretTest, body: { type: "support", name: "C", language: "xx" } })
      expect(refused.status).toBe(400)
    })
  )

  it.effect("a source shows its detected language; a text too short to tell takes the agent's", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId, ids } = yield* agentWith(h, ws.secretTest, undefined, { canada: spanish.canada, en: english.canada })
      expect((yield* source(h, ws.secretTest, agentId, ids["canada"]!)).language).toBe("es")
      expect((yield* source(h, ws.secretTest, agentId, ids["en"]!)).language).toBe("en")
      const short = yield* agentWith(h, ws.secretTest, "es", { short: "Ok 24h" })
      expect((yield* source(h, ws.secretTest, short.agentId, short.ids["short"]!)).language).toBe("es")
    })
  )

  it.effect("a Spanish agent answers plain Spanish questions from the right passage, and declines off-topic ones", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId, ids } = yield* agentWith(h, ws.secretTest, undefined, spanish)
      const tenant = tenantOf(ws)
      const search = (query: string) => Effect.flatMap(Retrieval, (r) => r.search(tenant, agentId, query, { limit: 5 }))
      for (const [question, fact] of questions) {
        const [first] = yield* search(question)
        expect(first?.sourceId, question).toBe(ids[fact])
        expect(first?.score, question).toBeGreaterThanOrEqual(relevanceThreshold)
        expect(first?.language, question).toBe("es")
      }
      for (const question of offTopic) {
        const hits = yield* search(question)
        expect(hits.filter((hit) => hit.score >= relevanceThreshold), question).toEqual([])
      }
    })
  )

  it.effect("a mixed agent answers an English question from English passages and a Spanish one from Spanish ones", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const texts = {
        es_canada: spanish.canada, es_returns: spanish.returns, es_gift: spanish.gift,
        en_canada: english.canada, en_returns: english.returns, en_gift: english.gift
      }
      const { agentId, ids } = yield* agentWith(h, ws.secretTest, undefined, texts)
      const tenant = tenantOf(ws)
      const first = (query: string) =>
        Effect.map(Effect.flatMap(Retrieval, (r) => r.search(tenant, agentId, query, { limit: 5 })), (hits) => hits[0])
      const asked: ReadonlyArray<readonly [string, keyof typeof texts]> = [
        ["When do orders to Canada arrive?", "en_canada"],
        ["¿Cuánto tarda el envío a Canadá?", "es_canada"],
        ["Can I send a product back?", "en_returns"],
        ["¿Puedo devolver un producto?", "es_returns"],
        ["Do gift cards expire?", "en_gift"],
        ["¿Caducan las tarjetas regalo?", "es_gift"]
      ]
      for (const [question, expected] of asked) {
        const hit = yield* first(question)
        expect(hit?.sourceId, question).toBe(ids[expected])
        expect(hit?.score, question).toBeGreaterThanOrEqual(relevanceThreshold)
      }
    })
  )

  it.effect("rows written before languages were kept are re-indexed by the job, its progress shown, and found again", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { agentId, ids } = yield* agentWith(h, ws.secretTest, undefined, { canada: spanish.canada, gift: spanish.gift })
      const sql = yield* SqlClient.SqlClient
      // as migration 0048 leaves the rows of a database written before it
      yield* sql`update knowledge_sources set language = null where agent_id = ${agentId}`
      yield* sql`alter table knowledge_chunks disable trigger knowledge_chunks_search`
      yield* sql`alter table qa_items disable trigger qa_items_search`
      yield* sql`update knowledge_chunks set language = null, search_tsv = null where agent_id = ${agentId}`
      yield* sql`update qa_items set language = null, search_tsv = null where agent_id = ${agentId}`
      yield* sql`alter table knowledge_chunks enable trigger knowledge_chunks_search`
      yield* sql`alter table qa_items enable trigger qa_items_search`
      yield* sql`
        update text_search_reindex set status = 'queued', phase = 'sources', cursor = null, done = 0,
          total = (select count(*) from knowledge_chunks) + (select count(*) from qa_items), finished_at = null`
      const reindex = yield* Reindex
      yield* reindex.check
      const status = yield* eventually(reindex.status, (s) => s.status === "done", { tries: 3_000, label: "re-indexed" })
      expect(status.done).toBeGreaterThan(0)
      expect(status.done).toBe(status.total)
      const shown = yield* h.call("GET", `/v1/agents/${agentId}/knowledge/${ids["canada"]}`, { key: ws.secretTest })
      expect(shown.body.data.language).toBe("es")
      const left = yield* sql<{ n: number }>`select count(*)::int as n from knowledge_chunks where search_tsv is null`
      expect(left[0]?.n).toBe(0)
      const [first] = yield* Effect.flatMap(Retrieval, (r) => r.search(tenantOf(ws), agentId, "¿Envían a Canadá?", { limit: 3 }))
      expect(first?.sourceId).toBe(ids["canada"])
    })
  )
})
