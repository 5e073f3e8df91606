/**
 * CORS for the widget surface (`/widget/v1/agents/{agent_id}/...`), answered by
 * the edge from the agent's `allowed_origins`, and the headers of the form
 * endpoints (annotated `FormEndpoint`: its config and submit) from the form's. Both are decided by the path,
 * before routing, not by the endpoint the router matches: the edge's own refusals (a 429) come before the
 * router and must carry them too, and every path under the widget surface answers CORS, a preflight (no
 * endpoint takes `OPTIONS`) and a `404` too. A preflight from an allowed
 * origin gets `204` with the exact origin echoed; any other origin gets no CORS
 * header at all, so the browser refuses, and a non-preflight request carrying a
 * foreign `Origin` is `403 origin_not_allowed`. Requests without `Origin` (not
 * from a browser) pass: CORS protects browsers, and any other client can send
 * whatever `Origin` it likes.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { OriginNotAllowed } from "../../schema/Errors.js"
import { withHeaders } from "../Performance.js"
import { type Answer, decorated, type EdgeRequest } from "./EdgeRequest.js"
import { formIdOf, methodsFor } from "./Endpoints.js"

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

export const allowedRequestHeaders = "Authorization, Content-Type, Last-Event-ID, Idempotency-Key, If-None-Match"
const exposedHeaders =
  "Request-Id, Idempotent-Replayed, Retry-After, ETag, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset"
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

/** Adds CORS headers; a `Vary` the response already has (a form's config varies by its key too) keeps its names. */
const withCors = (response: HttpServerResponse.HttpServerResponse, headers: Record<string, string>) => {
  const vary = response.headers["vary"]
  const merged = withHeaders(response, headers)
  return vary === undefined || headers["vary"] === undefined || /\borigin\b/i.test(vary)
    ? vary === undefined
      ? merged
      : HttpServerResponse.setHeader(merged, "vary", vary)
    : HttpServerResponse.setHeader(merged, "vary", `${vary}, ${headers["vary"]}`)
}

/**
 * The edge's CORS step, first of its steps: the page's origin is settled before anything else, so that every
 * answer to an allowed origin carries the CORS headers, the edge's own refusals too (a 429 without them is a
 * network error to the page).
 */
export const makeCors = Effect.gen(function* () {
  const widgetOrigins = yield* WidgetOrigins
  const formOrigins = yield* FormOrigins

  const widget = (incoming: EdgeRequest, agentId: string | undefined, next: Answer): Answer => {
    const { path, request } = incoming
    const origin = request.headers["origin"]
    const allowed =
      origin === undefined || agentId === undefined
        ? Effect.succeed(false)
        : Effect.map(widgetOrigins.allowedOrigins(agentId), (origins) => origins.includes(origin))
    return Effect.matchCauseEffect(allowed, {
      onFailure: (cause) => decorated(Effect.failCause(cause), (response) => withCors(response, varyOrigin)),
      onSuccess: (allowed) => {
        if (request.method === "OPTIONS") {
          const methods = methodsFor(path)
          // a foreign origin gets a bare 204: without CORS headers the browser refuses the call
          return Effect.succeed(
            HttpServerResponse.empty({
              status: 204,
              headers: allowed && methods.length > 0 ? preflightHeaders(origin!, methods) : varyOrigin
            })
          )
        }
        const refused =
          !allowed && origin !== undefined
            ? new OriginNotAllowed({
                message: `This agent's widget does not accept requests from the origin '${origin.slice(0, 200)}'; add it to the agent's allowed_origins`,
                param: "Origin"
              })
            : undefined
        const headers = allowed ? corsHeaders(origin!) : varyOrigin
        return decorated(refused === undefined ? next : Effect.fail(refused), (response) =>
          withCors(response, headers)
        )
      }
    })
  }

  const form = (incoming: EdgeRequest, formId: string, next: Answer): Answer =>
    Effect.flatMap(formOrigins.allowedOrigin(formId, incoming.request.headers["origin"]), (allowed) => {
      const headers = Option.isSome(allowed) ? { ...formCorsHeaders(allowed.value), ...varyOrigin } : varyOrigin
      return decorated(next, (response) => withCors(response, headers))
    })

  return (incoming: EdgeRequest, next: Answer): Answer => {
    if (incoming.operational) return next
    const agent = widgetAgentOf(incoming.path)
    if (agent !== undefined) return widget(incoming, agent.agentId, next)
    const formId = formIdOf(incoming.path)
    return formId !== undefined && incoming.request.method !== "OPTIONS" ? form(incoming, formId, next) : next
  }
})
