/**
 * The route table, read once from the contract: which methods serve a path
 * (for `405` with `Allow`), and what each endpoint requires of the caller's key.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as Context from "effect/Context"
import * as Option from "effect/Option"
import { Api } from "../../schema/Api.js"
import { type Scope, RequiredScope, WidgetScope } from "../../schema/Auth.js"

export interface EndpointPolicy {
  /** The scope a secret key needs; none means any secret key may call it. */
  readonly scope: Option.Option<Scope>
  /** The scope that lets a widget key call it; none means widget keys are refused. */
  readonly widgetScope: Option.Option<Scope>
}

interface RouteEntry {
  readonly method: string
  readonly path: string
  readonly pattern: RegExp
  readonly policy: EndpointPolicy
  /** A POST that declares no payload (resolve, retry, ...): it takes no body or `{}`. */
  readonly bodiless: boolean
}

const toPattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_]+/g, "[^/]+")}/?$`)

const entries: Array<RouteEntry> = []
HttpApi.reflect(Api, {
  onGroup: () => {},
  onEndpoint: ({ endpoint, mergedAnnotations }) => {
    entries.push({
      method: endpoint.method,
      path: endpoint.path,
      pattern: toPattern(endpoint.path),
      bodiless: endpoint.method === "POST" && Option.isNone(endpoint.payloadSchema),
      policy: {
        scope: Context.getOption(mergedAnnotations, RequiredScope),
        widgetScope: Context.getOption(mergedAnnotations, WidgetScope)
      }
    })
  }
})

const policies = new Map(entries.map((e) => [`${e.method} ${e.path}`, e.policy]))
const open: EndpointPolicy = { scope: Option.none(), widgetScope: Option.none() }

/** The policy of the endpoint whose route pattern (`/v1/agents/:id`) matched. */
export const policyOf = (method: string, routePath: string): EndpointPolicy =>
  policies.get(`${method} ${routePath}`) ?? open

export const routeTable = {
  methodsFor: (path: string): ReadonlyArray<string> => [
    ...new Set(entries.filter((e) => e.pattern.test(path)).map((e) => e.method))
  ],
  /** The endpoint serving this method and path, if one does. */
  find: (method: string, path: string): RouteEntry | undefined =>
    entries.find((e) => e.method === method && e.pattern.test(path)),
  all: (): ReadonlyArray<{ readonly method: string; readonly path: string }> => entries
}
