/** Helpers shared by the ticket suites. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import type { HarnessShape } from "../support/harness.js"

export const createAgent = (h: HarnessShape, key: string) =>
  Effect.map(
    h.call("POST", "/v1/agents", { key, body: { type: "support", name: "Help desk" } }),
    (r) => r.body.data.id as string
  )

export const createTicket = (
  h: HarnessShape,
  key: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {}
) => h.call("POST", "/v1/tickets", { key, body: { subject: "Printer on fire", ...body }, headers })

/** The events of a workspace, oldest first, with parsed bodies. */
export const eventsOf = (workspaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ type: string; environment: string; body: string }>`
      select type, environment, body from events where workspace_id = ${workspaceId} order by seq`
    return rows.map((r) => ({ ...r, body: JSON.parse(r.body) as any }))
  }).pipe(Effect.orDie)

export const ticketCount = (workspaceId: string, environment: "test" | "live" = "test") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: string }>`select count(*) as n from tickets where workspace_id = ${workspaceId} and environment = ${environment}`
  ).pipe(
    Effect.map((rows) => Number(rows[0]!.n)),
    Effect.orDie
  )
