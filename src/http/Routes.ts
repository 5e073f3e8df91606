/** The route table, read once from the contract: which methods serve a path (for `405` with `Allow`), and which POSTs take no body. */
import * as HttpApi from "@effect/platform/HttpApi"
import * as Option from "effect/Option"
import { Api } from "../../schema/Api.js"

interface RouteEntry {
  readonly method: string
  readonly path: string
  readonly pattern: RegExp
  /** A POST that declares no payload (resolve, retry, ...): it takes no body or `{}`. */
  readonly bodiless: boolean
}

const toPattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_]+/g, "[^/]+")}/?$`)

const entries: Array<RouteEntry> = []
HttpApi.reflect(Api, {
  onGroup: () => {},
  onEndpoint: ({ endpoint }) => {
    entries.push({
      method: endpoint.method,
      path: endpoint.path,
      pattern: toPattern(endpoint.path),
      bodiless: endpoint.method === "POST" && Option.isNone(endpoint.payloadSchema)
    })
  }
})

export const routeTable = {
  methodsFor: (path: string): ReadonlyArray<string> => [
    ...new Set(entries.filter((e) => e.pattern.test(path)).map((e) => e.method))
  ],
  /** The endpoint serving this method and path, if one does. */
  find: (method: string, path: string): RouteEntry | undefined =>
    entries.find((e) => e.method === method && e.pattern.test(path)),
  all: (): ReadonlyArray<{ readonly method: string; readonly path: string }> => entries
}
