/**
 * API keys. The secret is shown once at creation; only its SHA-256 is stored,
 * with the visible prefix and last four characters for people to recognise it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
import type { ApiKey, CreatedApiKey } from "../../schema/Admin.js"
import {
  type CallerShape,
  type Environment,
  type KeyKind,
  type Plan,
  type Scope,
  SecretScopes,
  WidgetScopes
} from "../../schema/Auth.js"
import type { ApiKeyId, WorkspaceId } from "../../schema/Ids.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { iso, isoOrNull, now } from "../Time.js"

const secretLength = 32

/** `sk_test_`, `widget_pk_live_`, `pk_test_`: the visible part of a key. */
export const keyPrefix = (kind: KeyKind, environment: Environment): string =>
  kind === "secret" ? `sk_${environment}_` : kind === "widget" ? `widget_pk_${environment}_` : `pk_${environment}_`

const wellFormed = /^(sk|widget_pk|pk)_(test|live)_[A-Za-z0-9]{16,128}$/

export const hashKey = (token: string): string => createHash("sha256").update(token).digest("hex")

/** The scopes a key kind may hold; a new key gets all of them unless narrowed. */
export const scopesFor = (kind: KeyKind): ReadonlyArray<Scope> =>
  kind === "secret" ? SecretScopes : kind === "widget" ? WidgetScopes : []

const splitScopes = (s: string) => (s === "" ? [] : (s.split(" ") as Array<Scope>))

interface KeyRow {
  readonly id: string
  readonly workspace_id: string
  readonly environment: Environment
  readonly kind: KeyKind
  readonly name: string | null
  /** Space-separated, so both database drivers read it the same way. */
  readonly scopes: string
  readonly prefix: string
  readonly last4: string
  readonly created_at: Date
  readonly revoked_at: Date | null
}

const toApiKey = (row: KeyRow): ApiKey => ({
  id: row.id as ApiKeyId,
  workspace_id: row.workspace_id as WorkspaceId,
  environment: row.environment,
  kind: row.kind,
  name: row.name,
  scopes: splitScopes(row.scopes),
  redacted: `${row.prefix}…${row.last4}`,
  created_at: iso(row.created_at),
  revoked_at: isoOrNull(row.revoked_at)
})

/** What a presented token resolves to. */
export type KeyLookup =
  | { readonly _tag: "Active"; readonly caller: CallerShape; readonly plan: Plan }
  | { readonly _tag: "Revoked" }
  | { readonly _tag: "Unknown" }

export class ApiKeys extends Effect.Service<ApiKeys>()("Auth/ApiKeys", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* IdGenerator

    const create = Effect.fn("ApiKeys.create")(function* (input: {
      readonly workspaceId: WorkspaceId
      readonly environment: Environment
      readonly kind: KeyKind
      readonly name?: string | undefined
      readonly scopes?: ReadonlyArray<Scope> | undefined
    }) {
      const id = yield* ids.make("key")
      const prefix = keyPrefix(input.kind, input.environment)
      const secret = `${prefix}${yield* ids.secret(secretLength)}`
      const created_at = yield* now
      const rows = yield* sql<KeyRow>`
        insert into api_keys ${sql.insert({
          id,
          workspace_id: input.workspaceId,
          environment: input.environment,
          kind: input.kind,
          name: input.name ?? null,
          scopes: (input.scopes ?? scopesFor(input.kind)).join(" "),
          key_hash: hashKey(secret),
          prefix,
          last4: secret.slice(-4),
          created_at
        })}
        returning *`
      return { key: toApiKey(rows[0]!), secret } satisfies CreatedApiKey
    }, Effect.orDie)

    const list = Effect.fn("ApiKeys.list")(function* (workspaceId: WorkspaceId) {
      const rows = yield* sql<KeyRow>`
        select * from api_keys where workspace_id = ${workspaceId} order by created_at, id`
      return rows.map(toApiKey)
    }, Effect.orDie)

    /** Revoking twice keeps the first revocation time. */
    const revoke = Effect.fn("ApiKeys.revoke")(function* (id: ApiKeyId) {
      const at = yield* now
      const rows = yield* sql<KeyRow>`
        update api_keys set revoked_at = coalesce(revoked_at, ${at}) where id = ${id} returning *`
      return Option.map(Option.fromNullable(rows[0]), toApiKey)
    }, Effect.orDie)

    const lookup = Effect.fn("ApiKeys.lookup")(function* (token: string) {
      if (!wellFormed.test(token)) return { _tag: "Unknown" } as KeyLookup
      const rows = yield* sql<KeyRow & { readonly plan: Plan }>`
        select k.*, w.plan from api_keys k join workspaces w on w.id = k.workspace_id
        where k.key_hash = ${hashKey(token)}`
      const row = rows[0]
      if (row === undefined) return { _tag: "Unknown" } as KeyLookup
      if (row.revoked_at !== null) return { _tag: "Revoked" } as KeyLookup
      return {
        _tag: "Active",
        plan: row.plan,
        caller: {
          workspaceId: row.workspace_id as WorkspaceId,
          environment: row.environment,
          keyId: row.id as ApiKeyId,
          keyKind: row.kind,
          scopes: splitScopes(row.scopes)
        }
      } as KeyLookup
    }, Effect.orDie)

    return { create, list, revoke, lookup } as const
  })
}) {}
