/**
 * Reads of API keys for the keys API, scoped to one workspace and environment; rows are decoded, not cast.
 * Writes (creation, revocation) go through `ApiKeys`, which hashes secrets and keeps the key cache true.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Environment, KeyKind } from "../../schema/Auth.js"
import type { PageRequest } from "../../schema/Envelope.js"
import type { ApiKeyId } from "../../schema/Ids.js"
import type { Key } from "../../schema/Keys.js"
import type { Tenant } from "../../schema/Tenant.js"
import { KeyRow, keyColumns } from "../auth/ApiKeys.js"
import { decodeAll, decodeOne } from "../db/Sql.js"
import { iso } from "../Time.js"

/** What the API shows of a key: never its value, nor its hash. */
export const toKey = (key: {
  readonly id: ApiKeyId
  readonly environment: Environment
  readonly kind: KeyKind
  readonly name: string | null
  readonly scopes: Key["scopes"]
  readonly prefix: string
  readonly last4: string
  readonly created_at: string
}): Key => ({
  id: key.id,
  object: "api_key",
  kind: key.kind,
  livemode: key.environment === "live",
  name: key.name,
  scopes: key.scopes,
  prefix: key.prefix,
  last4: key.last4,
  redacted: `${key.prefix}…${key.last4}`,
  created_at: key.created_at
})

export const rowToKey = (row: KeyRow): Key => toKey({ ...row, created_at: iso(row.created_at) })

export class KeysRepo extends Effect.Service<KeysRepo>()("Keys/Repo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(keyColumns)

    /** An active key of this tenant. */
    const findActive = (tenant: Tenant, id: ApiKeyId): Effect.Effect<Option.Option<KeyRow>> =>
      decodeOne(KeyRow, sql`
        select ${cols} from api_keys
        where id = ${id} and workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and revoked_at is null`)

    /** A page of this tenant's active keys, newest first (`limit + 1` rows: the extra one tells there are more). */
    const page = (tenant: Tenant, page: PageRequest): Effect.Effect<ReadonlyArray<KeyRow>> =>
      decodeAll(KeyRow, sql`
        select ${cols} from api_keys
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and revoked_at is null
          ${Option.isSome(page.after) ? sql`and api_keys.seq < ${page.after.value}::bigint` : sql.literal("")}
        order by api_keys.seq desc
        limit ${page.limit + 1}`)

    return { findActive, page } as const
  })
}) {}
