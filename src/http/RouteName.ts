/**
 * The name a request is logged and counted under: its route's template (`/v1/agents/{id}`), never its raw
 * path (ids are unbounded label values). The `RouteName` middleware, first after routing, notes the route
 * the router matched on the request's fiber, where the edge reads it once the request is answered.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import { RouteName } from "../../schema/Endpoint.js"
import { besideApi, templateOf } from "./Endpoints.js"

/** The path of the route the router matched (`/v1/agents/:id`), once it has. */
const MatchedRoute = FiberRef.unsafeMake<string | undefined>(undefined)

export const RouteNameLive = Layer.succeed(
  RouteName,
  Effect.flatMap(HttpRouter.RouteContext, ({ route }) => FiberRef.set(MatchedRoute, route.path))
)

/** The request's name: its matched route's template, a route's beside the API, or `unmatched`. */
export const routeNameOf = (path: string): Effect.Effect<string> =>
  Effect.map(FiberRef.get(MatchedRoute), (matched) =>
    matched !== undefined ? templateOf(matched) : (besideApi(path) ?? "unmatched")
  )
