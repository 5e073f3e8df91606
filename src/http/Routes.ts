/** The route table, read once from the contract: which methods serve a path (for `405` with `Allow`). */
import * as HttpApi from "@effect/platform/HttpApi"
import { Api } from "../../schema/Api.js"

interface RouteEntry {
  readonly method: string
  readonly path: string
  readonly pattern: RegExp
}

const toPattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_]+/g, "[^/]+")}/?$`)

const entries: Array<RouteEntry> = []
HttpApi.reflect(Api, {
  onGroup: () => {},
  onEndpoint: ({ endpoint }) => {
    entries.push({ method: endpoint.method, path: endpoint.path, pattern: toPattern(endpoint.path) })
  }
})

export const routeTable = {
  methodsFor: (path: string): ReadonlyArray<string> => [
    ...new Set(entries.filter((e) => e.pattern.test(path)).map((e) => e.method))
  ],
  all: (): ReadonlyArray<{ readonly method: string; readonly path: string }> => entries
}
