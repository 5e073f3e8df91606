/** Helpers shared by the Q&A suites. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import type { Environment } from "../../schema/Auth.js"
import { AgentId, type CategoryId, type SourceId } from "../../schema/Ids.js"
import type { QaOrigin } from "../../schema/Qa.js"
import { QaRepo } from "../../src/qa/QaRepo.js"
import type { HarnessShape, SeededWorkspace } from "../support/harness.js"

export const createAgent = (h: HarnessShape, key: string) =>
  Effect.map(
    h.call("POST", "/v1/agents", { key, body: { type: "support", name: "Q&A bot" } }),
    (r) => AgentId.make(r.body.data.id)
  )

export const createQa = (h: HarnessShape, key: string, agent: string, body: Record<string, unknown> = {}) =>
  h.call("POST", `/v1/agents/${agent}/qa`, {
    key,
    body: { question: "How do I reset my password?", answer: "Use the link on the sign-in page.", ...body }
  })

export const createCategory = (h: HarnessShape, key: string, agent: string, body: Record<string, unknown>) =>
  h.call("POST", `/v1/agents/${agent}/categories`, { key, body })

/** Writes Q&A as ingestion does, through the repository (origins the API does not create). */
export const seedQa = (
  ws: SeededWorkspace,
  agent: AgentId,
  items: ReadonlyArray<{
    readonly question: string
    readonly origin: QaOrigin
    readonly sourceId?: SourceId | null
    readonly categoryId?: CategoryId | null
  }>,
  environment: Environment = "test"
) =>
  Effect.flatMap(QaRepo, (repo) =>
    repo.insertQa(
      { workspaceId: ws.workspace.id, environment },
      agent,
      items.map((i) => ({
        question: i.question,
        answer: `Answer to: ${i.question}`,
        categoryId: i.categoryId ?? null,
        origin: i.origin,
        sourceId: i.sourceId ?? null,
        embedding: [1, 0, 0]
      }))
    )
  ).pipe(Effect.provide(QaRepo.Default))

/** The stored embedding of a Q&A (never returned by the API). */
export const embeddingOf = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly embedding: ReadonlyArray<number> }>`select embedding from qa_items where id = ${id}`
  ).pipe(
    Effect.map((rows) => rows[0]?.embedding),
    Effect.orDie
  )

/** The events of a workspace, oldest first, with parsed bodies. */
export const eventsOf = (workspaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ type: string; body: string }>`
      select type, body from events where workspace_id = ${workspaceId} order by seq`
    return rows.map((r) => ({ type: r.type, body: JSON.parse(r.body) as any }))
  }).pipe(Effect.orDie)
