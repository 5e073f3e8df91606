/**
 * Who is calling: key kinds, environments, scopes, and the authentication
 * middleware every `/v1` endpoint declares. Endpoints state the scope they need
 * with `.annotate(RequiredScope, "read:agents")`; one middleware checks it.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import { ApiError, InvalidApiKey, KeyScopeMismatch, MissingAuthorization } from "./Errors.js"
import { ApiKeyId, WorkspaceId } from "./Ids.js"

export const Environment = Schema.Literal("test", "live").annotations({
  description: "`test` is the sandbox (sk_test_ keys); `live` is production"
})
export type Environment = typeof Environment.Type

export const Plan = Schema.Literal("free", "starter", "pro", "enterprise")
export type Plan = typeof Plan.Type

/** `secret`: sk_test_/sk_live_; `widget`: widget_pk_; `forms`: pk_test_/pk_live_. */
export const KeyKind = Schema.Literal("secret", "widget", "forms")
export type KeyKind = typeof KeyKind.Type

const resources = ["agents", "knowledge", "conversations", "leads", "tickets", "webhooks", "files", "forms", "keys"] as const

export const SecretScopes = [
  ...resources.flatMap((r) => [`read:${r}`, `write:${r}`] as const),
  "read:usage"
] as const
export const WidgetScopes = ["widget:tickets", "widget:chat"] as const

export const Scope = Schema.Literal(...SecretScopes, ...WidgetScopes)
export type Scope = typeof Scope.Type

/** The authenticated caller, provided to every handler behind `Authentication`. */
export interface CallerShape {
  readonly workspaceId: WorkspaceId
  readonly environment: Environment
  readonly keyId: ApiKeyId
  readonly keyKind: KeyKind
  readonly scopes: ReadonlyArray<Scope>
}
export class Caller extends Context.Tag("Auth/Caller")<Caller, CallerShape>() {}

/** Endpoint annotation: the scope a secret key needs for it. */
export class RequiredScope extends Context.Tag("Auth/RequiredScope")<RequiredScope, Scope>() {}

/**
 * Endpoint annotation: the widget scope that lets a `widget_pk_` key call it.
 * Endpoints without it refuse widget and forms keys with `key_scope_mismatch`.
 */
export class WidgetScope extends Context.Tag("Auth/WidgetScope")<WidgetScope, Scope>() {}

/** @effect-expect-leaking HttpServerRequest ParsedSearchParams RouteContext: what the platform hands a security middleware */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Auth/Authentication", {
  provides: Caller,
  failure: Schema.Union(ApiError(MissingAuthorization), ApiError(InvalidApiKey), ApiError(KeyScopeMismatch)),
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "Secret key: `Authorization: Bearer sk_test_...`")
    ),
    apiKey: HttpApiSecurity.apiKey({ in: "header", key: "x-api-key" }).pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "Legacy header, supported for all of v1: `x-api-key: sk_test_...`")
    )
  }
}) {}
