/**
 * Key programs for the keys API. The caller is always a secret key (the contract
 * refuses the others); it acts on its own workspace and environment only.
 *
 * No escalation: a key grants only what it could do itself. A secret scope is
 * granted by a key that holds it; the widget scopes stand for writes the widget
 * surface makes (`widget:tickets` creates tickets, `widget:chat` conversations
 * and leads), so granting one needs that write; a forms key submits to the
 * workspace's forms, so creating one needs `write:forms`.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type CallerShape, type Environment, type KeyKind, type Scope, WidgetScopes } from "../../schema/Auth.js"
import type { PageParams } from "../../schema/Envelope.js"
import { KeyScopeMismatch, ParameterInvalid, ResourceMissing } from "../../schema/Errors.js"
import type { ApiKeyId } from "../../schema/Ids.js"
import type { CreateKey, Key, KeyWithSecret } from "../../schema/Keys.js"
import { ApiKeys, type KeyRow, keyPrefix, scopesFor } from "../auth/ApiKeys.js"
import { Paginator, toPage } from "../http/Pagination.js"
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

type WidgetScope = (typeof WidgetScopes)[number]

/** The scope a caller must hold to grant each widget scope. */
const widgetBacking: Record<WidgetScope, Scope> = { "widget:tickets": "write:tickets", "widget:chat": "write:conversations" }

/** What creating a forms key needs. */
const formsBacking: Scope = "write:forms"

const isWidgetScope = (scope: Scope): scope is WidgetScope => scope in widgetBacking

/** The scope the caller must hold to grant `scope`. */
export const backingOf = (scope: Scope): Scope => (isWidgetScope(scope) ? widgetBacking[scope] : scope)

const code = (s: string) => `\`${s}\``

/** Why `caller` may not grant `scope`, naming it. */
const cannotGrant = (scope: Scope) => {
  const backing = backingOf(scope)
  return new KeyScopeMismatch({
    message:
      backing === scope
        ? `This key cannot grant the scope ${code(scope)}: it does not hold it.`
        : `This key cannot grant the scope ${code(scope)}: granting it needs ${code(backing)}, which this key lacks.`,
    param: "scopes"
  })
}

/** The scopes the new key gets: those asked for (or all the caller may grant), each checked. */
export const grantedScopes = (
  caller: CallerShape,
  kind: KeyKind,
  requested: ReadonlyArray<Scope> | undefined
): Effect.Effect<ReadonlyArray<Scope>, KeyScopeMismatch | ParameterInvalid> => {
  const holds = (scope: Scope) => caller.scopes.includes(scope)
  if (kind === "forms") {
    if (requested !== undefined && requested.length > 0) {
      return Effect.fail(new ParameterInvalid({ message: "A forms key holds no scopes; omit `scopes`", param: "scopes" }))
    }
    return holds(formsBacking)
      ? Effect.succeed([])
      : Effect.fail(
          new KeyScopeMismatch({
            message: `This key cannot create a forms key: that needs ${code(formsBacking)}, which this key lacks.`,
            param: "kind"
          })
        )
  }
  const allowed = scopesFor(kind)
  if (requested === undefined) {
    const granted = allowed.filter((s) => holds(backingOf(s)))
    return granted.length > 0 ? Effect.succeed(granted) : Effect.fail(cannotGrant(allowed[0]!))
  }
  const wrong = requested.find((s) => !allowed.includes(s))
  if (wrong !== undefined) {
    return Effect.fail(
      new ParameterInvalid({
        message: `A ${kind} key cannot hold the scope ${code(wrong)}; it may hold only ${allowed.map(code).join(", ")}`,
        param: "scopes"
      })
    )
  }
  if (requested.length === 0) {
    return Effect.fail(
      new ParameterInvalid({
        message: `A ${kind} key needs at least one scope; omit \`scopes\` to grant every one this key may grant`,
        param: "scopes"
      })
    )
  }
  const beyond = requested.find((s) => !holds(backingOf(s)))
  return beyond === undefined ? Effect.succeed([...new Set(requested)]) : Effect.fail(cannotGrant(beyond))
}

const missing = (id: string) => new ResourceMissing({ message: `No such API key: '${id}'`, param: "id" })

export class Keys extends Effect.Service<Keys>()("Keys/Programs", {
  effect: Effect.gen(function* () {
    const apiKeys = yield* ApiKeys
    const pages = yield* Paginator

    const list = Effect.fn("Keys.list")(function* (caller: CallerShape, params: PageParams) {
      const page = yield* pages.parse("keys", params)
      const { rows, pagination } = toPage(yield* apiKeys.page(caller, page), page)
      return { keys: rows.map(rowToKey), pagination }
    })

    const create = Effect.fn("Keys.create")(function* (caller: CallerShape, input: CreateKey) {
      const scopes = yield* grantedScopes(caller, input.kind, input.scopes)
      const { key, secret } = yield* apiKeys.create({
        workspaceId: caller.workspaceId,
        environment: caller.environment,
        kind: input.kind,
        name: input.name,
        scopes
      })
      return {
        ...toKey({ ...key, prefix: keyPrefix(key.kind, key.environment), last4: secret.slice(-4) }),
        secret
      } satisfies KeyWithSecret
    })

    /** Revoked at once: its next request is refused (see `ApiKeys` for the cache of other instances). */
    const revoke = Effect.fn("Keys.revoke")(function* (caller: CallerShape, id: ApiKeyId) {
      if (id === caller.keyId) {
        return yield* new ParameterInvalid({
          message:
            "A key cannot revoke itself: create its replacement (POST /v1/keys), switch to it, then revoke this key with the new one",
          param: "id"
        })
      }
      if (Option.isNone(yield* apiKeys.findActive(caller, id))) return yield* missing(id)
      yield* apiKeys.revoke(id)
      return { id, object: "api_key" as const, deleted: true as const }
    })

    return { list, create, revoke } as const
  }),
}) {}
