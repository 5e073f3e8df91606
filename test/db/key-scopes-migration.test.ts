/**
 * Migration 0021: keys that held every secret scope before `read:keys` and `write:keys` existed get them; a
 * narrowed key, a widget key and a forms key stay as they were. Existing keys get a page sequence.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runMigrations } from "../../src/db/Migrator.js"
import { migrations } from "../../src/db/migrations/index.js"
import { testDatabaseLayer } from "../support/database.js"

const before = Object.fromEntries(Object.entries(migrations).filter(([id]) => id < "0021"))

const allBefore =
  "read:agents write:agents read:knowledge write:knowledge read:conversations write:conversations read:leads " +
  "write:leads read:tickets write:tickets read:webhooks write:webhooks read:files write:files read:forms " +
  "write:forms read:usage"

it.effect("0021 gives the keys scopes to keys that held every scope, and a sequence to every key", () =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* runMigrations(before)
    yield* sql`insert into workspaces (id, name, owner_email, plan, created_at)
      values ('ws_migration0021', 'm', 'o@example.com', 'free', now())`
    const key = (id: string, kind: string, scopes: string) =>
      sql`insert into api_keys (id, workspace_id, environment, kind, name, scopes, key_hash, prefix, last4, created_at)
        values (${id}, 'ws_migration0021', 'test', ${kind}, null, ${scopes}, ${id}, 'sk_test_', 'abcd', now())`
    yield* key("key_full00000000", "secret", allBefore)
    yield* key("key_narrow000000", "secret", "read:agents read:usage")
    yield* key("key_widget000000", "widget", "widget:tickets widget:chat")
    yield* key("key_forms0000000", "forms", "")
    yield* runMigrations(migrations)
    const rows = yield* sql<{ id: string; scopes: string; seq: string }>`
      select id, scopes, seq::text as seq from api_keys order by id`
    expect(Object.fromEntries(rows.map((r) => [r.id, r.scopes]))).toEqual({
      key_forms0000000: "",
      key_full00000000: `${allBefore} read:keys write:keys`,
      key_narrow000000: "read:agents read:usage",
      key_widget000000: "widget:tickets widget:chat"
    })
    expect(new Set(rows.map((r) => r.seq)).size).toBe(4)
  }).pipe(Effect.provide(testDatabaseLayer), Effect.orDie)
)
