/**
 * What the generated OpenAPI document cannot say per endpoint, added in one
 * place for every operation (so endpoints added later get it too): the scope
 * each one needs (`x-scopes`, and `x-widget-scopes` for widget keys), the
 * `Idempotency-Key` request header on POSTs, the response headers the edge
 * sets, and `Schema.Unknown` rendered once without a repeated `$id`.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Context from "effect/Context"
import { RequiredScope, WidgetScope } from "./Auth.js"

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the OpenAPI document is built as plain JSON
type Json = Record<string, any>

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` })

const headers: Json = {
  "Request-Id": {
    description: "The request id, also in `meta.request_id`",
    schema: { type: "string" }
  },
  "X-RateLimit-Limit": { description: "Bucket size of the key's rate limit", schema: { type: "integer" } },
  "X-RateLimit-Remaining": { description: "Requests left in the bucket", schema: { type: "integer" } },
  "X-RateLimit-Reset": { description: "Unix time (seconds) when the bucket is full again", schema: { type: "integer" } },
  "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer" } },
  "Idempotent-Replayed": {
    description: "`true` when this is the stored response of an earlier request with the same `Idempotency-Key`",
    schema: { type: "string", enum: ["true"] }
  }
}

const idempotencyKey = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Makes the POST safe to retry for 24 hours: the same key and request replay the stored response (a streamed reply: its events from the first, live while it is generated)",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" }
}

const isUnknownId = (node: unknown) =>
  typeof node === "object" && node !== null && (node as Json).$id === "/schemas/unknown"

/** Replaces every rendering of `Schema.Unknown` (`{"$id": "/schemas/unknown"}`) with `{}`, iteratively. */
const dropUnknownIds = (root: Json) => {
  const stack: Array<Json> = [root]
  while (stack.length > 0) {
    const node = stack.pop()!
    for (const key of Object.keys(node)) {
      const child = node[key]
      if (isUnknownId(child)) {
        const { $id: _, ...rest } = child
        node[key] = rest
      }
      if (typeof node[key] === "object" && node[key] !== null) stack.push(node[key])
    }
  }
}

/** The post-processor of `api`'s document, for its `OpenApi.Transform` annotation. */
export const completeDocument =
  <Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(api: HttpApi.HttpApi<string, Groups, E, R>) =>
  (spec: Json): Json => {
    const scopes = new Map<string, { scope?: string; widget?: string }>()
    HttpApi.reflect(api, {
      onGroup: () => {},
      onEndpoint: ({ group, endpoint, mergedAnnotations }) => {
        const id = Context.getOrElse(endpoint.annotations, OpenApi.Identifier, () =>
          group.topLevel ? endpoint.name : `${group.identifier}.${endpoint.name}`
        )
        const scope = Context.getOption(mergedAnnotations, RequiredScope)
        const widget = Context.getOption(mergedAnnotations, WidgetScope)
        scopes.set(id, {
          ...(scope._tag === "Some" ? { scope: scope.value } : {}),
          ...(widget._tag === "Some" ? { widget: widget.value } : {})
        })
      }
    })
    dropUnknownIds(spec)
    spec.components = { ...spec.components, headers: { ...spec.components?.headers, ...headers } }
    for (const [path, item] of Object.entries<Json>(spec.paths ?? {})) {
      // the widget surface passes the same edge: keys, rate limits, idempotency
      const limited = path.startsWith("/v1/") || path.startsWith("/widget/v1/")
      for (const [method, op] of Object.entries<Json>(item)) {
        if (typeof op !== "object" || op === null || op.responses === undefined) continue
        const policy = scopes.get(op.operationId) ?? {}
        if (limited) {
          op["x-scopes"] = policy.scope === undefined ? [] : [policy.scope]
          if (policy.widget !== undefined) op["x-widget-scopes"] = [policy.widget]
        }
        if (method === "post" && limited) op.parameters = [...(op.parameters ?? []), idempotencyKey]
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          const set: Json = { "Request-Id": headerRef("Request-Id") }
          if (limited) {
            set["X-RateLimit-Limit"] = headerRef("X-RateLimit-Limit")
            set["X-RateLimit-Remaining"] = headerRef("X-RateLimit-Remaining")
            set["X-RateLimit-Reset"] = headerRef("X-RateLimit-Reset")
          }
          if (status === "429" || status === "503") set["Retry-After"] = headerRef("Retry-After")
          if (method === "post" && limited) set["Idempotent-Replayed"] = headerRef("Idempotent-Replayed")
          response.headers = { ...response.headers, ...set }
        }
      }
    }
    return spec
  }
