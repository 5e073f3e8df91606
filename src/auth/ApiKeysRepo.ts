/**
 * SQL for API keys: the one writer of `api_keys` (creation, revocation) and its readers (a presented key's
 * lookup, the admin API's list, the keys API's pages). Never a key's value; its hash only to find it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Environment, KeyKind, Plan, Scope } from "../../schema/Auth.js"
import type { PageRequest } from "../../schema/Envelope.js"
import { ApiKeyId, WorkspaceId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { DbDate } from "../db/Columns.js"
import { decodeAll, decodeOne, decodeSingle, execute } from "../db/Sql.js"

/** Where a revocation is announced to the key caches of every instance on the same PostgreSQL. */
export const revokedChannel = "api_keys_revoked"

/** Stored space-separated, so both database drivers read it the same way; each decoded as a known scope. */
export const ScopesColumn = Schema.compose(
  Schema.transform(Schema.String, Schema.Array(Schema.String), {
    strict: true,
    decode: (s) => (s === "" ? [] : s.split(" ")),
    encode: (scopes) => scopes.join(" ")
  }),
  Schema.Array(Scope)
)

/**
 * An `api_keys` row as every reader decodes it (the admin API's `ApiKeys` and the keys API), never its hash;
 * `seq` is read as text (a bigint).
 */
export const KeyRow = Schema.Struct({
  seq: Schema.String,
  id: ApiKeyId,
  workspace_id: WorkspaceId,
  environment: Environment,
  kind: KeyKind,
  name: Schema.NullOr(Schema.String),
  scopes: ScopesColumn,
  prefix: Schema.String,
  last4: Schema.String,
  created_at: DbDate,
  revoked_at: Schema.NullOr(DbDate)
})
export type KeyRow = typeof KeyRow.Type
export const KeyWithPlan = Schema.Struct({ ...KeyRow.fields, plan: Plan })
export type KeyWithPlan = typeof KeyWithPlan.Type

/**
 * The columns of `KeyRow`, named by table so a join can select them too; order by `api_keys.seq`, not the
 * text alias.
 */
export const keyColumns = `api_keys.seq::text as seq, api_keys.id, api_keys.workspace_id, api_keys.environment,
  api_keys.kind, api_keys.name, api_keys.scopes, api_keys.prefix, api_keys.last4, api_keys.created_at,
  api_keys.revoked_at`

/** A new key's row: its hash, never its value. */
export interface KeyInsert {
  readonly id: ApiKeyId
  readonly workspace_id: WorkspaceId
  readonly environment: Environment
  readonly kind: KeyKind
  readonly name: string | null
  readonly scopes: ReadonlyArray<Scope>
  readonly key_hash: string
  readonly prefix: string
  readonly last4: string
  readonly created_at: Date
}

export class ApiKeysRepo extends Effect.Service<ApiKeysRepo>()("Auth/ApiKeysRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(keyColumns)

    const insert = (row: KeyInsert): Effect.Effect<KeyRow> =>
      decodeSingle(KeyRow, sql`insert into api_keys ${sql.insert({ ...row, scopes: row.scopes.join(" ") })} returning ${cols}`)

    /** A workspace's keys, both environments, revoked ones too, oldest first (the admin API). */
    const ofWorkspace = (workspaceId: WorkspaceId): Effect.Effect<ReadonlyArray<KeyRow>> =>
      decodeAll(KeyRow, sql`select ${cols} from api_keys where workspace_id = ${workspaceId} order by created_at, id`)

    /** Revoked (twice keeps the first time), and announced to every instance's cache. */
    const revoke = (id: ApiKeyId, at: Date): Effect.Effect<Option.Option<KeyRow>> =>
      Effect.tap(
        decodeOne(KeyRow, sql`update api_keys set revoked_at = coalesce(revoked_at, ${at}) where id = ${id} returning ${cols}`),
        (row) => (Option.isSome(row) ? execute(sql`select pg_notify(${revokedChannel}, ${id})`) : Effect.void)
      )

    /** The key with this hash, and its workspace's plan. */
    const byHash = (hash: string): Effect.Effect<Option.Option<KeyWithPlan>> =>
      decodeOne(KeyWithPlan, sql`
        select ${cols}, w.plan
        from api_keys join workspaces w on w.id = api_keys.workspace_id
        where api_keys.key_hash = ${hash}`)

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

    return { insert, ofWorkspace, revoke, byHash, findActive, page } as const
  })
}) {}
