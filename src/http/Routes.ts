/**
 * The route table, read once from the contract: which endpoint serves a request, what the edge must know of
 * it (its annotations from `schema/Endpoint.ts`, and whether a POST takes no body), and which methods serve a
 * path (for `405` with `Allow`). The platform's router matches only after the edge, so the edge matches here.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as Context from "effect/Context"
import * as Option from "effect/Option"
import { Api } from "../../schema/Api.js"
import { FormEndpoint, Operational, ShowsSecret, UploadBody, type UploadBodyShape } from "../../schema/Endpoint.js"

/** What the edge knows of an endpoint. */
export interface Endpoint {
  readonly method: string
  /** The contract's path: `/v1/agents/:id`. */
  readonly path: string
  /** The path as metrics and logs name it: `/v1/agents/{id}`. */
  readonly template: string
  /** A POST that declares no payload (resolve, retry, ...): it takes no body or `{}`. */
  readonly bodiless: boolean
  /** Its body is a file's bytes (`UploadBody`). */
  readonly upload: UploadBodyShape | undefined
  /** A public form endpoint: the path parameter naming the form (`FormEndpoint`). */
  readonly formParam: string | undefined
  readonly operational: boolean
  /** Its answer shows a secret once (`ShowsSecret`): an idempotency record keeps it sealed. */
  readonly showsSecret: boolean
}

/** The endpoints of one path of the contract, by method. */
interface PathEntry {
  readonly pattern: RegExp
  readonly byMethod: Map<string, Endpoint>
  /** Some endpoint at this path is operational (whatever the method, so a `405` there is too). */
  readonly operational: boolean
  /** Some endpoint at this path is a form's: the parameter naming it. */
  readonly formParam: string | undefined
}

/** What the table knows of a request. */
export interface RouteMatch {
  /** The endpoint serving its method (`HEAD` as `GET`) at its path, if one does. */
  readonly endpoint: Endpoint | undefined
  /** What it is counted and logged under: its route's template, never the raw path (ids, unbounded label values). */
  readonly template: string
  /**
   * Answered without key or rate limit (probes and docs must always answer; the form component's script and
   * demo page are public pages, not the API): an operational endpoint's path, whatever the method, or a route
   * beside the API.
   */
  readonly operational: boolean
  /** The form its path names, when it is a form endpoint's path, whatever the method (its CORS answer is the form's). */
  readonly formId: string | undefined
}

const toPattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:([A-Za-z_]+)/g, "(?<$1>[^/]+)")}/?$`)

const endpoints: Array<Endpoint> = []
HttpApi.reflect(Api, {
  onGroup: () => {},
  onEndpoint: ({ endpoint, mergedAnnotations }) => {
    endpoints.push({
      method: endpoint.method,
      path: endpoint.path,
      template: endpoint.path.replace(/:([A-Za-z_]+)/g, "{$1}"),
      bodiless: endpoint.method === "POST" && Option.isNone(endpoint.payloadSchema),
      upload: Option.getOrUndefined(Context.getOption(mergedAnnotations, UploadBody)),
      formParam: Option.getOrUndefined(Context.getOption(mergedAnnotations, FormEndpoint))?.formParam,
      operational: Option.getOrElse(Context.getOption(mergedAnnotations, Operational), () => false),
      showsSecret: Option.getOrElse(Context.getOption(mergedAnnotations, ShowsSecret), () => false)
    })
  }
})

const paths = new Map<string, PathEntry>()
for (const endpoint of endpoints) {
  const known = paths.get(endpoint.path)
  const entry: PathEntry = {
    pattern: known?.pattern ?? toPattern(endpoint.path),
    byMethod: (known?.byMethod ?? new Map()).set(endpoint.method, endpoint),
    operational: (known?.operational ?? false) || endpoint.operational,
    formParam: known?.formParam ?? endpoint.formParam
  }
  paths.set(endpoint.path, entry)
}

/** `/v1/agents/...` → `/v1/agents`: the first two segments, which no route template has a parameter in. */
const prefixOf = (path: string) => {
  const second = path.indexOf("/", 1)
  const third = second === -1 ? -1 : path.indexOf("/", second + 1)
  return third === -1 ? path.replace(/\/$/, "") : path.slice(0, third)
}

/** Paths by prefix, so matching a request tests a handful of patterns, not all of them. */
const byPrefix = new Map<string, Array<PathEntry>>()
const unindexed: Array<PathEntry> = []
for (const [path, entry] of paths) {
  const prefix = prefixOf(path)
  if (prefix.includes(":")) unindexed.push(entry)
  else byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), entry])
}

/** The routes beside the API (served by routers of their own, outside the contract), by the template each is counted under. */
const besideApi = (path: string): string | undefined => {
  if (path === "/metrics" || path === "/docs" || path === "/docs/errors") return path
  if (path.startsWith("/docs/")) return "/docs/*"
  if (path.startsWith("/admin/")) return "/admin/*"
  if (path.startsWith("/storage/v1/object/public/widget/")) return "/storage/v1/object/public/widget/*"
  if (path.startsWith("/demo/forms/")) return "/demo/forms/{form_id}"
  return undefined
}

const unmatched: RouteMatch = { endpoint: undefined, template: "unmatched", operational: false, formId: undefined }

const matchIn = (
  entries: ReadonlyArray<PathEntry>,
  method: string,
  path: string,
  first: PathEntry | undefined
): { readonly endpoint: Endpoint | undefined; readonly at: PathEntry | undefined } => {
  let at = first
  for (const entry of entries) {
    if (!entry.pattern.test(path)) continue
    at ??= entry
    const endpoint = entry.byMethod.get(method)
    if (endpoint !== undefined) return { endpoint, at }
  }
  return { endpoint: undefined, at }
}

export const routeTable = {
  methodsFor: (path: string): ReadonlyArray<string> => [
    ...new Set(endpoints.filter((e) => paths.get(e.path)!.pattern.test(path)).map((e) => e.method))
  ],
  /** The endpoint serving this method and path, and what the path itself says (paths of the contract do not overlap). */
  match: (method: string, path: string): RouteMatch => {
    const wanted = method === "HEAD" ? "GET" : method
    const indexed = matchIn(byPrefix.get(prefixOf(path)) ?? [], wanted, path, undefined)
    const { at, endpoint } = indexed.endpoint === undefined ? matchIn(unindexed, wanted, path, indexed.at) : indexed
    if (at === undefined) {
      const beside = besideApi(path)
      return beside === undefined ? unmatched : { endpoint: undefined, template: beside, operational: true, formId: undefined }
    }
    const formId = at.formParam === undefined ? undefined : at.pattern.exec(path)?.groups?.[at.formParam]
    return { endpoint, template: endpoint?.template ?? "unmatched", operational: at.operational, formId }
  },
  all: (): ReadonlyArray<{ readonly method: string; readonly path: string }> => endpoints
}
