/**
 * API keys. The secret is shown once at creation; only its SHA-256 is stored,
 * with the visible prefix and last four characters for people to recognise it.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import type { ApiKey, CreatedApiKey } from "../../schema/Admin.js"
import { type CallerShape, type Environment, type KeyKind, type Plan, type Scope, SecretScopes, WidgetScopes } from "../../schema/Auth.js"
import { ApiKeyId, type WorkspaceId } from "../../schema/Ids.js"
import { Database } from "../../layers/Database.js"
import { IdGenerator } from "../../layers/IdGenerator.js"
import { AppConfig } from "../Config.js"
import { iso, isoOrNull, now } from "../Time.js"
import { ApiKeysRepo, type KeyRow, revokedChannel } from "./ApiKeysRepo.js"

export type { KeyRow } from "./ApiKeysRepo.js"

const secretLength = 32

/** Distinct active keys remembered at once (the oldest stored go first). */
const cacheCapacity = 10_000

/** `sk_test_`, `widget_pk_live_`, `pk_test_`: the visible part of a key. */
export const keyPrefix = (kind: KeyKind, environment: Environment): string =>
  kind === "secret" ? `sk_${environment}_` : kind === "widget" ? `widget_pk_${environment}_` : `pk_${environment}_`

const wellFormed = /^(sk|widget_pk|pk)_(test|live)_[A-Za-z0-9]{16,128}$/

export const hashKey = (token: string): string => createHash("sha256").update(token).digest("hex")

/** The scopes a key kind may hold; a new key gets all of them unless narrowed. */
export const scopesFor = (kind: KeyKind): ReadonlyArray<Scope> =>
  kind === "secret" ? SecretScopes : kind === "widget" ? WidgetScopes : []

const toApiKey = (row: KeyRow): ApiKey => ({
  id: row.id,
  workspace_id: row.workspace_id,
  environment: row.environment,
  kind: row.kind,
  name: row.name,
  scopes: row.scopes,
  redacted: `${row.prefix}…${row.last4}`,
  created_at: iso(row.created_at),
  revoked_at: isoOrNull(row.revoked_at)
})

/** What a presented token resolves to. */
export type KeyLookup =
  | { readonly _tag: "Active"; readonly caller: CallerShape; readonly plan: Plan }
  | { readonly _tag: "Revoked" }
  | { readonly _tag: "Unknown" }

const unknownKey: KeyLookup = { _tag: "Unknown" }
const revokedKey: KeyLookup = { _tag: "Revoked" }

export class ApiKeys extends Effect.Service<ApiKeys>()("Auth/ApiKeys", {
  scoped: Effect.gen(function* () {
    const repo = yield* ApiKeysRepo
    const database = yield* Database
    const ids = yield* IdGenerator
    const config = yield* AppConfig

    const create = Effect.fn("ApiKeys.create")(function* (input: {
      readonly workspaceId: WorkspaceId
      readonly environment: Environment
      readonly kind: KeyKind
      readonly name?: string | undefined
      readonly scopes?: ReadonlyArray<Scope> | undefined
    }) {
      const id = ApiKeyId.make(yield* ids.make("key"))
      const prefix = keyPrefix(input.kind, input.environment)
      const secret = `${prefix}${yield* ids.secret(secretLength)}`
      const created_at = yield* now
      const row = yield* repo.insert({
        id,
        workspace_id: input.workspaceId,
        environment: input.environment,
        kind: input.kind,
        name: input.name ?? null,
        scopes: input.scopes ?? scopesFor(input.kind),
        key_hash: hashKey(secret),
        prefix,
        last4: secret.slice(-4),
        created_at
      })
      return { key: toApiKey(row), secret } satisfies CreatedApiKey
    })

    const list = Effect.fn("ApiKeys.list")(function* (workspaceId: WorkspaceId) {
      return (yield* repo.ofWorkspace(workspaceId)).map(toApiKey)
    })

    /** Revoking twice keeps the first revocation time. */
    const revoke = Effect.fn("ApiKeys.revoke")(function* (id: ApiKeyId) {
      return Option.map(yield* repo.revoke(id, yield* now), toApiKey)
    })

    const lookupStored = (token: string): Effect.Effect<KeyLookup> => Effect.gen(function* () {
      const found = yield* repo.byHash(hashKey(token))
      if (Option.isNone(found)) return unknownKey
      const row = found.value
      if (row.revoked_at !== null) return revokedKey
      return {
        _tag: "Active",
        plan: row.plan,
        caller: {
          workspaceId: row.workspace_id,
          environment: row.environment,
          keyId: row.id,
          keyKind: row.kind,
          scopes: row.scopes
        }
      } satisfies KeyLookup
    })

    // Active keys are remembered for `apiKeyCacheSeconds` (by the Clock); a revocation in this process
    // empties the cache at once, and so does one in another process on the same PostgreSQL when its
    // notification arrives; one missed (the LISTEN connection lost) takes effect within the bound. Every
    // request asks this, so a hit is a plain map read rather than Effect's `Cache`
    // (scripts/bench/results/performance-decisions.md).
    const cacheMillis = (config.apiKeyCacheSeconds ?? 0) * 1000
    const remembered = new Map<string, { readonly found: KeyLookup; readonly until: number }>()
    /** Bumped by each revocation: a lookup that began before it must not store what it read. */
    let generation = 0
    const remember = (token: string, found: KeyLookup, at: number, began: number) => {
      // only active keys are kept: an unknown or revoked answer is asked again next time
      if (found._tag !== "Active" || began !== generation) return
      remembered.delete(token)
      // the oldest stored go first (an entry lives `cacheMillis` at most, so those are the least recently read)
      if (remembered.size >= cacheCapacity) remembered.delete(remembered.keys().next().value!)
      remembered.set(token, { found, until: at + cacheMillis })
    }

    /** What `token` is; unknown at once when it cannot be a key (no query for garbage). */
    const lookup = (token: string): Effect.Effect<KeyLookup> => {
      if (!wellFormed.test(token)) return Effect.succeed(unknownKey)
      if (cacheMillis === 0) return lookupStored(token)
      return Effect.clockWith((clock) => {
        const at = clock.unsafeCurrentTimeMillis()
        const hit = remembered.get(token)
        if (hit !== undefined && hit.until > at) return Effect.succeed(hit.found)
        return lookupOnce(token, at)
      })
    }

    // the lookups running now, by token: requests with the same key that miss the cache at once (its entry just
    // ran out) share one query instead of each queueing its own on the database
    const running = new Map<string, Deferred.Deferred<KeyLookup>>()
    const lookupOnce = (token: string, at: number): Effect.Effect<KeyLookup> =>
      Effect.suspend(() => {
        const shared = running.get(token)
        if (shared !== undefined) return Deferred.await(shared)
        const done = Deferred.unsafeMake<KeyLookup>(FiberId.none)
        running.set(token, done)
        const began = generation
        // uninterruptible: the other requests waiting on it must not see one client's disconnect
        return lookupStored(token).pipe(
          Effect.tap((found) => Effect.sync(() => remember(token, found, at, began))),
          Effect.onExit((exit) =>
            Effect.zipRight(
              Effect.sync(() => running.get(token) === done && running.delete(token)),
              Deferred.done(done, exit)
            )
          ),
          Effect.uninterruptible
        )
      })

    const forgetAll = Effect.sync(() => {
      generation += 1
      remembered.clear()
      // a lookup that began before the revocation is not shared with requests that come after it
      running.clear()
    })
    const revokeAndForget = (id: ApiKeyId) => (cacheMillis === 0 ? revoke(id) : Effect.zipLeft(revoke(id), forgetAll))

    if (cacheMillis > 0) {
      yield* database.notifications(revokedChannel).pipe(
        Stream.runForEach(() => forgetAll),
        Effect.catchAllCause((cause) =>
          Effect.logWarning(
            "revocations by other instances are no longer heard here; they take effect within API_KEY_CACHE_SECONDS",
            cause
          )
        ),
        Effect.forkScoped
      )
    }

    return {
      create,
      list,
      revoke: revokeAndForget,
      lookup,
      /** An active key of this tenant (the keys API). */
      findActive: repo.findActive,
      /** A page of this tenant's active keys, newest first (the keys API). */
      page: repo.page
    } as const
  }),
  dependencies: [ApiKeysRepo.Default]
}) {}
