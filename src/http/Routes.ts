/** The route table, read once from the contract: which methods serve a path (for `405` with `Allow`), and which POSTs take no body. */
import * as HttpApi from "@effect/platform/HttpApi"
import * as Option from "effect/Option"
import { Api } from "../../schema/Api.js"

interface RouteEntry {
  readonly method: string
  readonly path: string
  readonly pattern: RegExp
  /** The path as metrics and logs name it: `/v1/agents/{id}`. */
  readonly template: string
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
      template: endpoint.path.replace(/:([A-Za-z_]+)/g, "{$1}"),
      bodiless: endpoint.method === "POST" && Option.isNone(endpoint.payloadSchema)
    })
  }
})

/** `/v1/agents/...` → `/v1/agents`: the first two segments, which no route template has a parameter in. */
const prefixOf = (path: string) => {
  const second = path.indexOf("/", 1)
  const third = second === -1 ? -1 : path.indexOf("/", second + 1)
  return third === -1 ? path.replace(/\/$/, "") : path.slice(0, third)
}

/** Entries by method and prefix, so finding a request's endpoint tests a handful of patterns, not all of them. */
const byPrefix = new Map<string, Array<RouteEntry>>()
const unindexed: Array<RouteEntry> = []
for (const entry of entries) {
  const prefix = prefixOf(entry.path)
  if (prefix.includes(":")) {
    unindexed.push(entry)
    continue
  }
  const key = `${entry.method} ${prefix}`
  byPrefix.set(key, [...(byPrefix.get(key) ?? []), entry])
}

export const routeTable = {
  methodsFor: (path: string): ReadonlyArray<string> => [
    ...new Set(entries.filter((e) => e.pattern.test(path)).map((e) => e.method))
  ],
  /** The endpoint serving this method and path, if one does. */
  find: (method: string, path: string): RouteEntry | undefined =>
    byPrefix.get(`${method} ${prefixOf(path)}`)?.find((e) => e.pattern.test(path)) ??
    unindexed.find((e) => e.method === method && e.pattern.test(path)),
  all: (): ReadonlyArray<{ readonly method: string; readonly path: string }> => entries
}
