/**
 * What the contract says of its endpoints, read once with `HttpApi.reflect`: the facts of the endpoint the
 * platform's router matched (its annotations from `schema/Endpoint.ts`, and whether a POST takes no body),
 * the probes' paths, the form a form endpoint's path names, and the methods that serve a path. The router
 * answers a method a path does not serve as an unknown route, so a `405`'s `Allow` and a preflight's methods
 * are read here.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as Context from "effect/Context"
import * as Option from "effect/Option"
import { Api } from "../../schema/Api.js"
import { FormEndpoint, Operational, ShowsSecret, StreamFormat, UploadBody, type UploadBodyShape } from "../../schema/Endpoint.js"

/** What the request path knows of an endpoint. */
export interface Endpoint {
  readonly method: string
  /** The contract's path: `/v1/agents/:id`. */
  readonly path: string
  /** A POST that declares no payload (resolve, retry, ...): it takes no body or `{}`. */
  readonly bodiless: boolean
  /** Its body is a file's bytes (`UploadBody`). */
  readonly upload: UploadBodyShape | undefined
  /** A public form endpoint: the path parameter naming the form (`FormEndpoint`). */
  readonly formParam: string | undefined
  readonly operational: boolean
  /** Its answer shows a secret once (`ShowsSecret`): an idempotency record keeps it sealed. */
  readonly showsSecret: boolean
  /** The shape of its event stream when not the messages endpoint's (`StreamFormat`): a replay writes it so. */
  readonly streamFormat: "completions" | undefined
}

const endpoints: Array<Endpoint> = []
HttpApi.reflect(Api, {
  onGroup: () => {},
  onEndpoint: ({ endpoint, mergedAnnotations }) => {
    endpoints.push({
      method: endpoint.method,
      path: endpoint.path,
      bodiless: endpoint.method === "POST" && Option.isNone(endpoint.payloadSchema),
      upload: Option.getOrUndefined(Context.getOption(mergedAnnotations, UploadBody)),
      formParam: Option.getOrUndefined(Context.getOption(mergedAnnotations, FormEndpoint))?.formParam,
      operational: Option.getOrElse(Context.getOption(mergedAnnotations, Operational), () => false),
      showsSecret: Option.getOrElse(Context.getOption(mergedAnnotations, ShowsSecret), () => false),
      streamFormat: Option.getOrUndefined(Context.getOption(mergedAnnotations, StreamFormat))
    })
  }
})

const byRoute = new Map(endpoints.map((endpoint) => [`${endpoint.method} ${endpoint.path}`, endpoint]))

/** What the contract says of the endpoint the router matched (`HttpRouter.RouteContext`'s route). */
export const endpointAt = (route: { readonly method: string; readonly path: string }): Endpoint | undefined =>
  byRoute.get(`${route.method} ${route.path}`)

/** `/v1/agents/:id` as metrics and logs name it: `/v1/agents/{id}`. */
export const templateOf = (routePath: string): string => routePath.replace(/:([A-Za-z_]+)/g, "{$1}")

/** The probes' paths (literal: a probe takes no parameter). */
const probes = new Set(endpoints.filter((e) => e.operational).map((e) => e.path))

/** The routes beside the API (served by routers of their own, outside the contract), by the template each is counted under. */
export const besideApi = (path: string): string | undefined => {
  if (path === "/metrics" || path === "/docs" || path === "/docs/errors") return path
  if (path.startsWith("/docs/")) return "/docs/*"
  if (path.startsWith("/admin/")) return "/admin/*"
  if (path.startsWith("/storage/v1/object/public/widget/")) return "/storage/v1/object/public/widget/*"
  if (path.startsWith("/demo/forms/")) return "/demo/forms/{form_id}"
  if (path === "/demo/chat") return "/demo/chat"
  return undefined
}

/**
 * Answered without key or rate limit, whatever the method (probes and docs must always answer; the form
 * component's script and demo page are public pages, not the API): a probe's path, or a route beside the API.
 */
export const isOperational = (path: string): boolean =>
  probes.has(path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path) || besideApi(path) !== undefined

/** An endpoint's path as a pattern; the parameter `named`, if given, is captured as the group `named`. */
const toPattern = (path: string, named?: string) =>
  new RegExp(
    `^${path
      .replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      .replace(/:([A-Za-z_]+)/g, (_, name: string) => (name === named ? "(?<named>[^/]+)" : "[^/]+"))}/?$`
  )

const patterns = endpoints.map((endpoint) => ({ method: endpoint.method, pattern: toPattern(endpoint.path) }))

const formPaths = endpoints
  .filter((e) => e.formParam !== undefined)
  .map((e) => ({ pattern: toPattern(e.path, e.formParam) }))

/**
 * The form a public form endpoint's path names, whatever the method (a `405` there answers the form's CORS
 * too); undefined on any other path.
 */
export const formIdOf = (path: string): string | undefined => {
  for (const { pattern } of formPaths) {
    const match = pattern.exec(path)
    if (match !== null) return match.groups?.["named"]
  }
  return undefined
}

/** The methods that serve this path (none when no endpoint's path matches it). */
export const methodsFor = (path: string): ReadonlyArray<string> => [
  ...new Set(patterns.filter((p) => p.pattern.test(path)).map((p) => p.method))
]

/** Every endpoint of the contract, by method and path. */
export const all = (): ReadonlyArray<{ readonly method: string; readonly path: string }> => endpoints
