/**
 * SQL for idempotency records (`idempotency_keys`), per (workspace, environment, key): a claim (insert, or take
 * over an expired record or a lapsed lease), the stored answer, the release of a failed claim, the sweep past
 * retention, and erasure's rewrite of stored answers. Rows are decoded, not cast.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Environment } from "../../schema/Auth.js"
import type { WorkspaceId } from "../../schema/Ids.js"
import type { Tenant } from "../../schema/Tenant.js"
import { DbDate } from "../db/Columns.js"
import { decodeAll, decodeOne, decodeSingle, execute } from "../db/Sql.js"
import { now } from "../Time.js"

export const retentionMillis = 24 * 60 * 60 * 1000
const leaseMillis = 60 * 1000

export interface IdempotencyScope {
  readonly workspaceId: WorkspaceId
  readonly environment: Environment
  readonly key: string
}

export interface StoredResponse {
  readonly status: number
  readonly contentType: string
  readonly body: string
  /** `body` is sealed (`SealedAnswer.seal`), bound to the record's scope. */
  readonly sealed: boolean
}

export type Claim =
  | { readonly _tag: "Owned" }
  | { readonly _tag: "Replay"; readonly response: StoredResponse }
  | { readonly _tag: "Mismatch" }
  | { readonly _tag: "InProgress" }

// a `done` record always carries its response; decoding checks it instead of assuming it
const Row = Schema.Union(
  Schema.Struct({ fingerprint: Schema.String, state: Schema.Literal("running") }),
  Schema.Struct({
    fingerprint: Schema.String,
    state: Schema.Literal("done"),
    response_status: Schema.Number,
    response_content_type: Schema.String,
    response_body: Schema.String,
    response_sealed: Schema.Boolean
  })
)
const Owned = Schema.Struct({ key: Schema.String })
const Document = Schema.Struct({ key: Schema.String, body: Schema.String })

export class IdempotencyRepo extends Effect.Service<IdempotencyRepo>()("Http/IdempotencyRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const claim = Effect.fn("Idempotency.claim")(function* (
      scope: IdempotencyScope,
      fingerprint: string
    ): Effect.fn.Return<Claim> {
      const at = yield* now
      const expiredBefore = new Date(at.getTime() - retentionMillis)
      const lease = new Date(at.getTime() + leaseMillis)
      const owned = yield* decodeAll(Owned, sql`
        insert into idempotency_keys
          (workspace_id, environment, key, fingerprint, state, locked_until, created_at)
        values (${scope.workspaceId}, ${scope.environment}, ${scope.key}, ${fingerprint}, 'running', ${lease}, ${at})
        on conflict (workspace_id, environment, key) do update set
          fingerprint = excluded.fingerprint, state = 'running', locked_until = excluded.locked_until,
          created_at = excluded.created_at, response_status = null, response_content_type = null, response_body = null,
          response_sealed = false
        where idempotency_keys.created_at <= ${expiredBefore}
           or (idempotency_keys.state = 'running' and idempotency_keys.locked_until <= ${at}
               and idempotency_keys.fingerprint = excluded.fingerprint)
        returning key`)
      if (owned.length > 0) return { _tag: "Owned" }
      const found = yield* decodeOne(Row, sql`
        select fingerprint, state, response_status, response_content_type, response_body, response_sealed
        from idempotency_keys
        where workspace_id = ${scope.workspaceId} and environment = ${scope.environment} and key = ${scope.key}`)
      if (Option.isNone(found)) return { _tag: "InProgress" }
      const row = found.value
      if (row.fingerprint !== fingerprint) return { _tag: "Mismatch" }
      if (row.state === "running") return { _tag: "InProgress" }
      return {
        _tag: "Replay",
        response: {
          status: row.response_status,
          contentType: row.response_content_type,
          body: row.response_body,
          sealed: row.response_sealed
        }
      }
    })

    const complete = Effect.fn("Idempotency.complete")(function* (scope: IdempotencyScope, response: StoredResponse) {
      yield* execute(sql`
        update idempotency_keys set state = 'done', response_status = ${response.status},
          response_content_type = ${response.contentType}, response_body = ${response.body},
          response_sealed = ${response.sealed}
        where workspace_id = ${scope.workspaceId} and environment = ${scope.environment} and key = ${scope.key}`)
    })

    /** Forget a claim whose request failed on our side (5xx) or was interrupted. */
    const release = Effect.fn("Idempotency.release")(function* (scope: IdempotencyScope) {
      yield* execute(sql`
        delete from idempotency_keys
        where workspace_id = ${scope.workspaceId} and environment = ${scope.environment} and key = ${scope.key}
          and state = 'running'`)
    })

    /**
     * Drop records past retention; returns when the oldest remaining one expires
     * (one retention ahead when none is left: a newer record expires later still),
     * so the sweeper sleeps until there is work rather than waking on a fixed beat.
     */
    const sweep = Effect.fn("Idempotency.sweep")(function* () {
      const at = yield* now
      yield* execute(sql`delete from idempotency_keys where created_at <= ${new Date(at.getTime() - retentionMillis)}`)
      const oldest = yield* decodeSingle(
        Schema.Struct({ at: Schema.NullOr(DbDate) }),
        sql`select min(created_at) as at from idempotency_keys`
      )
      return oldest.at === null ? at.getTime() + retentionMillis : oldest.at.getTime() + retentionMillis
    })

    /**
     * Erasure: rewrites this tenant's stored responses that mention `needle`
     * with `scrub` (none when nothing changes), so a replay cannot bring erased
     * data back.
     */
    const scrub = Effect.fn("Idempotency.scrub")(function* (
      tenant: Tenant,
      needle: string,
      scrub: (body: string) => Option.Option<string>
    ) {
      // a sealed answer shows a secret, never a person's data
      const documents = yield* decodeAll(Document, sql`
        select key, response_body as body from idempotency_keys
        where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment}
          and response_body is not null and not response_sealed and strpos(response_body, ${needle}) > 0
        for update`)
      for (const d of documents) {
        const scrubbed = scrub(d.body)
        if (Option.isSome(scrubbed)) {
          yield* execute(sql`
            update idempotency_keys set response_body = ${scrubbed.value}
            where workspace_id = ${tenant.workspaceId} and environment = ${tenant.environment} and key = ${d.key}`)
        }
      }
    })

    return { claim, complete, release, sweep, scrub } as const
  })
}) {}
