/**
 * API keys listed through the API (`GET /v1/keys`): an insertion sequence for
 * cursor pages, as every list has, and the index of a page of active keys.
 *
 * The scopes `read:keys` and `write:keys` are new: a secret key that held every
 * secret scope before them was made with "all scopes" (the bootstrap's sandbox
 * key, the CLI's default), so it gets them too; a narrowed key stays as it was.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/** The secret scopes before this migration (frozen here: later scopes must not widen it). */
const allBefore = [
  "read:agents", "write:agents", "read:knowledge", "write:knowledge", "read:conversations", "write:conversations",
  "read:leads", "write:leads", "read:tickets", "write:tickets", "read:webhooks", "write:webhooks",
  "read:files", "write:files", "read:forms", "write:forms", "read:usage"
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table api_keys add column seq bigint generated always as identity`
  yield* sql`create index api_keys_page on api_keys (workspace_id, environment, seq desc) where revoked_at is null`
  yield* sql`
    update api_keys set scopes = scopes || ' read:keys write:keys'
    where kind = 'secret' and string_to_array(scopes, ' ') @> string_to_array(${allBefore.join(" ")}, ' ')`
})
