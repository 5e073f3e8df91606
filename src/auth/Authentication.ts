/**
 * Authentication and authorization of `/v1` requests.
 *
 * The edge resolves the presented key once per request (it needs the caller for
 * rate limits and idempotency) and leaves the result in `CurrentAuth`; the
 * `Authentication` middleware that endpoints declare then checks the key's kind
 * and scopes against the endpoint's policy from the contract.
 */
import type * as Headers from "@effect/platform/Headers"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Authentication, type CallerShape, type Plan, type Scope, WidgetScopes } from "../../schema/Auth.js"
import { InvalidApiKey, KeyScopeMismatch, MissingAuthorization } from "../../schema/Errors.js"
import { type EndpointPolicy, policyOf } from "./Policy.js"
import { ApiKeys, type KeyLookup } from "./ApiKeys.js"

export interface AuthenticatedCaller extends CallerShape {
  readonly plan: Plan
}
export type AuthResult = Either.Either<AuthenticatedCaller, MissingAuthorization | InvalidApiKey>

/** The key resolved by the edge for this request, if it ran. */
export const CurrentAuth = FiberRef.unsafeMake<Option.Option<AuthResult>>(Option.none())

/**
 * `Authorization: Bearer <key>` or the legacy `x-api-key: <key>`. An
 * `Authorization` header in any other scheme is refused rather than read as a key.
 */
export const presentedKey = (headers: Headers.Headers): Option.Option<Either.Either<string, InvalidApiKey>> => {
  const authorization = headers["authorization"]
  if (authorization !== undefined && authorization.trim() !== "") {
    const match = /^Bearer[ \t]+(\S+)$/i.exec(authorization.trim())
    return Option.some(
      match
        ? Either.right(match[1]!)
        : Either.left(
            new InvalidApiKey({
              message: "The Authorization header must use the Bearer scheme: `Authorization: Bearer <API_KEY>`",
              param: "Authorization"
            })
          )
    )
  }
  const legacy = headers["x-api-key"]
  return legacy !== undefined && legacy.trim() !== "" ? Option.some(Either.right(legacy.trim())) : Option.none()
}

export class Authenticator extends Effect.Service<Authenticator>()("Auth/Authenticator", {
  effect: Effect.gen(function* () {
    const keys = yield* ApiKeys
    const missing = (): AuthResult =>
      Either.left(
        new MissingAuthorization({
          message: "No API key provided. Send `Authorization: Bearer <API_KEY>` (or the legacy `x-api-key` header)."
        })
      )
    const toResult = (found: KeyLookup): AuthResult => {
      switch (found._tag) {
        case "Active":
          return Either.right({ ...found.caller, plan: found.plan })
        case "Revoked":
          return Either.left(new InvalidApiKey({ message: "This API key has been revoked." }))
        case "Unknown":
          return Either.left(new InvalidApiKey({ message: "Invalid API key provided." }))
      }
    }
    // every request runs this: a plain function over the key lookup (no span, no generator), whose cache hit
    // is one step of the fiber
    const resolve = (headers: Headers.Headers): Effect.Effect<AuthResult> => {
      const token = presentedKey(headers)
      if (Option.isNone(token)) return Effect.succeed(missing())
      if (Either.isLeft(token.value)) return Effect.succeed(Either.left(token.value.left))
      return Effect.map(keys.lookup(token.value.right), toResult)
    }
    return { resolve } as const
  }),
  dependencies: [ApiKeys.Default]
}) {}

const widgetScopes: ReadonlyArray<Scope> = WidgetScopes
const isWidgetScope = (scope: Scope) => widgetScopes.includes(scope)

/** Why this caller's key may not call an endpoint with this policy; `undefined` when it may. */
const refusal = (caller: CallerShape, policy: EndpointPolicy): KeyScopeMismatch | undefined => {
  switch (caller.keyKind) {
    case "secret":
      // the widget surface is for widget keys alone, whatever scopes a secret key was given
      if (Option.isSome(policy.scope) && isWidgetScope(policy.scope.value)) {
        return new KeyScopeMismatch({
          message: "Secret keys (sk_) do not work on the widget surface; use a widget key (widget_pk_) there."
        })
      }
      return Option.isSome(policy.scope) && !caller.scopes.includes(policy.scope.value)
        ? new KeyScopeMismatch({ message: `This key lacks the scope \`${policy.scope.value}\`.` })
        : undefined
    case "widget":
      return Option.isSome(policy.widgetScope) && caller.scopes.includes(policy.widgetScope.value)
        ? undefined
        : new KeyScopeMismatch({
            message: "Widget keys (widget_pk_) only work on the widget surface; use a secret key (sk_) here."
          })
    case "forms":
      return new KeyScopeMismatch({
        message: "Forms keys (pk_) only work on the form endpoints, sent as `Service-Api-Key`; use a secret key (sk_) here."
      })
  }
}

/** Whether this caller's key may call the endpoint at `method` `routePath` (the contract's path, `/v1/keys/:id`). */
export const mayCall = (caller: CallerShape, method: string, routePath: string): boolean =>
  refusal(caller, policyOf(method, routePath)) === undefined

/** The caller, or why its key is refused for this endpoint. */
const admitted = (result: AuthResult, route: HttpRouter.Route<unknown, unknown>): Effect.Effect<CallerShape, AuthError> => {
  if (Either.isLeft(result)) return Effect.fail(result.left)
  const refused = refusal(result.right, policyOf(route.method, route.path))
  return refused === undefined ? Effect.succeed(result.right) : Effect.fail(refused)
}
type AuthError = MissingAuthorization | InvalidApiKey | KeyScopeMismatch

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const authenticator = yield* Authenticator
    // the key the edge resolved for the request; resolved here only when no edge ran
    const check = Effect.gen(function* () {
      const { route } = yield* HttpRouter.RouteContext
      const resolved = yield* FiberRef.get(CurrentAuth)
      const result = Option.isSome(resolved)
        ? resolved.value
        : yield* authenticator.resolve((yield* HttpServerRequest.HttpServerRequest).headers)
      return yield* admitted(result, route)
    })
    // both schemes run the same check: it reads whichever header was sent
    return { bearer: () => check, apiKey: () => check }
  })
)
