/**
 * Migration 0022: idempotency records gain `response_sealed` (false for what was kept before), and those kept
 * with a secret readable in their answer are dropped; other records stay.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runMigrations } from "../../src/db/Migrator.js"
import { migrations } from "../../src/db/migrations/index.js"
import { testDatabaseLayer } from "../support/database.js"

const before = Object.fromEntries(Object.entries(migrations).filter(([id]) => id < "0022"))

it.effect("0022 drops kept answers with a readable secret and marks the others unsealed", () =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* runMigrations(before)
    const record = (key: string, body: string) =>
      sql`insert into idempotency_keys
            (workspace_id, environment, key, fingerprint, state, locked_until, created_at,
             response_status, response_content_type, response_body)
          values ('ws_migration0022', 'test', ${key}, 'f', 'done', now(), now(), 201, 'application/json', ${body})`
    yield* record("with-secret", JSON.stringify({ data: { id: "key_1", secret: "sk_test_abcdefghijklmnop" }, meta: null }))
    yield* record("plain", JSON.stringify({ data: { id: "agt_1", name: "secret agent" }, meta: null }))
    yield* runMigrations(migrations)
    const rows = yield* sql<{ key: string; sealed: boolean }>`
      select key, response_sealed as sealed from idempotency_keys where workspace_id = 'ws_migration0022' order by key`
    expect(rows).toEqual([{ key: "plain", sealed: false }])
  }).pipe(Effect.provide(testDatabaseLayer), Effect.orDie)
)
