/**
 * CORS for the widget surface (`/widget/v1/agents/{agent_id}/...`), answered by
 * the edge from the agent's `allowed_origins`, and the headers of the form
 * endpoints (`/v1/forms/{form_id}/config`, `/api/forms/{form_id}/submit`) from the form's. A preflight from an allowed
 * origin gets `204` with the exact origin echoed; any other origin gets no CORS
 * header at all, so the browser refuses, and a non-preflight request carrying a
 * foreign `Origin` is `403 origin_not_allowed`. Requests without `Origin` (not
 * from a browser) pass: CORS protects browsers, and any other client can send
 * whatever `Origin` it likes.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"

/** The origins an agent's widget accepts, by agent id alone (a preflight carries no key); the agents area serves it. */
export interface WidgetOriginsShape {
  readonly allowedOrigins: (agentId: string) => Effect.Effect<ReadonlyArray<string>>
}
export class WidgetOrigins extends Context.Tag("Http/WidgetOrigins")<WidgetOrigins, WidgetOriginsShape>() {}

/** The origin to answer CORS for on a form's endpoints (the origin itself when the form allows it); the forms area serves it. */
export interface FormOriginsShape {
  readonly allowedOrigin: (formId: string, origin: string | undefined) => Effect.Effect<Option.Option<string>>
}
export class FormOrigins extends Context.Tag("Http/FormOrigins")<FormOrigins, FormOriginsShape>() {}

const formPath = /^\/(?:v1\/forms\/([^/]+)\/config|api\/forms\/([^/]+)\/submit)\/?$/

/** The form a public form path names (its config or submit endpoint); undefined elsewhere. */
export const formOf = (path: string): string | undefined => {
  const match = formPath.exec(path)
  return match === null ? undefined : (match[1] ?? match[2])
}

const widgetPath = /^\/widget\/v1\/agents\/([^/]+)(?:\/|$)/
const agentIdShape = /^agt_[A-Za-z0-9]{8,64}$/

/**
 * The agent a widget-surface path names: `some(id)` for a path under
 * `/widget/v1/agents/{id}`, with `id` empty when it cannot be an agent id (no
 * agent, so no origin, is allowed then); undefined elsewhere.
 */
export const widgetAgentOf = (path: string): { readonly agentId: string | undefined } | undefined => {
  const match = widgetPath.exec(path)
  if (match === null) return undefined
  return { agentId: agentIdShape.test(match[1]!) ? match[1]! : undefined }
}

export const allowedRequestHeaders = "Authorization, Content-Type, Last-Event-ID, Idempotency-Key"
const exposedHeaders =
  "Request-Id, Idempotent-Replayed, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset"
export const preflightMaxAgeSeconds = 600

/** What a page may read of a form endpoint's answer. */
const formExposedHeaders = "ETag, Retry-After, Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset"

/** On a form endpoint's response to an allowed origin. */
export const formCorsHeaders = (origin: string): Record<string, string> => ({
  "access-control-allow-origin": origin,
  "access-control-expose-headers": formExposedHeaders
})

/** On every widget-surface response: caches must keep answers to different origins apart. */
export const varyOrigin = { vary: "Origin" } as const

/** On a response to an allowed origin. */
export const corsHeaders = (origin: string): Record<string, string> => ({
  "access-control-allow-origin": origin,
  "access-control-expose-headers": exposedHeaders,
  ...varyOrigin
})

/** On the `204` answering an allowed origin's preflight. */
export const preflightHeaders = (origin: string, methods: ReadonlyArray<string>): Record<string, string> => ({
  "access-control-allow-origin": origin,
  "access-control-allow-methods": methods.join(", "),
  "access-control-allow-headers": allowedRequestHeaders,
  "access-control-max-age": String(preflightMaxAgeSeconds),
  ...varyOrigin
})
