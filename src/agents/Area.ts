/** The agents area as the composition root uses it: its programs, its API group, the edge's widget CORS port. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import { WidgetOrigins } from "../http/Cors.js"
import { Agents } from "./Agents.js"
import { AgentsRepo } from "./AgentsRepo.js"
import { AgentsHttp } from "./Http.js"
import { RefreshRounds } from "./RefreshRounds.js"

/** Its programs, and the refresh schedules the knowledge area's sweep runs. */
export const Live = Layer.mergeAll(Agents.Default, RefreshRounds.Default)

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = AgentsHttp
export const ApiServices = [Authentication, Agents] as const

/** The edge answers the widget surface's CORS from the agents' `allowed_origins`. */
export const WidgetOriginsLive = Layer.effect(
  WidgetOrigins,
  Effect.map(AgentsRepo, (repo) => ({ allowedOrigins: repo.allowedOriginsOf }))
).pipe(Layer.provide(AgentsRepo.Default))
