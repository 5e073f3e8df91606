/**
 * Idempotency records, per (workspace, environment, key), kept 24 h by the Clock.
 *
 * A request claims its key atomically (insert, or take over an expired record),
 * so of N concurrent requests with one key exactly one runs; the others see it
 * running (409) until it completes, then get its stored response. A claim is a
 * lease: if the process dies mid-request, the key frees itself when it lapses.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import type { Environment } from "../../schema/Auth.js"
import type { WorkspaceId } from "../../schema/Ids.js"
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
}

export type Claim =
  | { readonly _tag: "Owned" }
  | { readonly _tag: "Replay"; readonly response: StoredResponse }
  | { readonly _tag: "Mismatch" }
  | { readonly _tag: "InProgress" }

interface Row {
  readonly fingerprint: string
  readonly state: "running" | "done"
  readonly response_status: number | null
  readonly response_content_type: string | null
  readonly response_body: string | null
}

export class IdempotencyStore extends Effect.Service<IdempotencyStore>()("Http/IdempotencyStore", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const claim = Effect.fn("Idempotency.claim")(function* (scope: IdempotencyScope, fingerprint: string) {
      const at = yield* now
      const expiredBefore = new Date(at.getTime() - retentionMillis)
      const lease = new Date(at.getTime() + leaseMillis)
      const owned = yield* sql`
        insert into idempotency_keys
          (workspace_id, environment, key, fingerprint, state, locked_until, created_at)
        values (${scope.workspaceId}, ${scope.environment}, ${scope.key}, ${fingerprint}, 'running', ${lease}, ${at})
        on conflict (workspace_id, environment, key) do update set
          fingerprint = excluded.fingerprint, state = 'running', locked_until = excluded.locked_until,
          created_at = excluded.created_at, response_status = null, response_content_type = null, response_body = null
        where idempotency_keys.created_at <= ${expiredBefore}
           or (idempotency_keys.state = 'running' and idempotency_keys.locked_until <= ${at}
               and idempotency_keys.fingerprint = excluded.fingerprint)
        returning key`
      if (owned.length > 0) return { _tag: "Owned" } as Claim
      const rows = yield* sql<Row>`
        select fingerprint, state, response_status, response_content_type, response_body from idempotency_keys
        where workspace_id = ${scope.workspaceId} and environment = ${scope.environment} and key = ${scope.key}`
      const row = rows[0]
      if (row === undefined) return { _tag: "InProgress" } as Claim
      if (row.fingerprint !== fingerprint) return { _tag: "Mismatch" } as Claim
      if (row.state === "running") return { _tag: "InProgress" } as Claim
      return {
        _tag: "Replay",
        response: { status: row.response_status!, contentType: row.response_content_type!, body: row.response_body! }
      } as Claim
    }, Effect.orDie)

    const complete = Effect.fn("Idempotency.complete")(function* (scope: IdempotencyScope, response: StoredResponse) {
      yield* sql`
        update idempotency_keys set state = 'done', response_status = ${response.status},
          response_content_type = ${response.contentType}, response_body = ${response.body}
        where workspace_id = ${scope.workspaceId} and environment = ${scope.environment} and key = ${scope.key}`
    }, Effect.orDie)

    /** Forget a claim whose request failed on our side (5xx) or was interrupted. */
    const release = Effect.fn("Idempotency.release")(function* (scope: IdempotencyScope) {
      yield* sql`
        delete from idempotency_keys
        where workspace_id = ${scope.workspaceId} and environment = ${scope.environment} and key = ${scope.key}
          and state = 'running'`
    }, Effect.orDie)

    /**
     * Drop records past retention; returns when the oldest remaining one expires
     * (one retention ahead when none is left: a newer record expires later still),
     * so the sweeper sleeps until there is work rather than waking on a fixed beat.
     */
    const sweep = Effect.fn("Idempotency.sweep")(function* () {
      const at = yield* now
      yield* sql`delete from idempotency_keys where created_at <= ${new Date(at.getTime() - retentionMillis)}`
      const [oldest] = yield* sql<{ readonly at: Date | null }>`select min(created_at) as at from idempotency_keys`
      return oldest?.at == null ? at.getTime() + retentionMillis : oldest.at.getTime() + retentionMillis
    }, Effect.orDie)

    return { claim, complete, release, sweep } as const
  })
}) {}
